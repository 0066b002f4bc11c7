// The first-sign-in Network step, on the dashboard of an admin while the Network settings were never
// saved nor the step skipped and GATEHOUSE_PUBLIC_HOST is unset (GET /settings/network `setup`
// pending): the public host prefilled with this machine's hostname and, when the internet cannot
// resolve that, why; the TLS mode and the ACME e-mail. Save stores them (PUT /settings/network);
// "Skip for now" is remembered (POST /settings/network/skip-setup). It does not block the page.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { useApi } from '../../hooks';
import { t, useLang } from '../../i18n';
import { isAdmin } from '../../session';
import { NetworkForm, unreachable } from './NetworkForm';
import '../../components/admin.css';
import './network.css';

import type { NetworkResponse } from '../../protocol';

export function NetworkSetupStep() {
  useLang();
  const admin = isAdmin();
  const { data } = useApi<NetworkResponse>(admin ? '/settings/network' : null);
  const [done, setDone] = useState(false);
  const n = data?.network;
  if (!admin || !n || n.setup !== 'pending' || done) return null;
  const why = unreachable(n);
  return (
    <section class="card network-setup" aria-labelledby="network-setup-title" data-testid="network-setup">
      <div class="card-head">
        <h2 id="network-setup-title">{t('network.setupTitle')}</h2>
      </div>
      <p>{t('network.setupIntro')}</p>
      <p class="muted">{t('network.setupSuggestion', { host: n.hostname })}</p>
      {why && (
        <div class="banner warn" role="status">
          <p>{why}</p>
        </div>
      )}
      <NetworkForm
        network={n}
        prefill
        onSaved={(saved) => {
          toast(t('network.setupSaved', { endpoint: saved.endpoint }));
          setDone(true);
        }}
      >
        <button
          type="button"
          class="btn"
          onClick={async () => {
            try {
              await api('POST', '/settings/network/skip-setup');
              toast(t('network.setupSkipped'));
              setDone(true);
            } catch (e) {
              toast(String((e as Error).message), 'bad');
            }
          }}
        >
          {t('network.setupSkip')}
        </button>
      </NetworkForm>
    </section>
  );
}
