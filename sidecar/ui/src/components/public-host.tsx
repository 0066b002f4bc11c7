// The warning about this server's public host (GET /settings/app `app.public_host`, loaded with the
// session): shown on the dashboard and with every peer config when GATEHOUSE_PUBLIC_HOST is unset and
// the hostname that peer configs then carry as their endpoint is not a name the internet can
// resolve (the server decides: `warning` is set; `problem` says why, worded here).
import { appInfo } from '../session';
import { useStore } from '../store';
import { t, useLang } from '../i18n';
import './admin.css';

export function PublicHostWarning() {
  useLang();
  const info = useStore(appInfo);
  const ph = info?.public_host;
  if (!ph?.warning || !ph.problem) return null;
  return (
    <div class="banner warn" role="status" data-testid="public-host-warning">
      <p>{t('shell.publicHostWarning', { host: ph.host, why: t(`shell.publicHostWhy_${ph.problem}`) })}</p>
    </div>
  );
}
