// Network settings (GET/PUT /settings/network): this server's public host and IPv4, the TLS mode and
// the ACME e-mail, each stored here over the environment; beside the form what is in effect now and
// where each value comes from (saved here, environment, hostname).
import { Fragment } from 'preact';
import { toast } from '../../components/dialog';
import { Card, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang } from '../../i18n';
import { NetworkForm, unreachable } from './NetworkForm';
import '../../components/admin.css';

import type { NetworkResponse, NetworkView } from '../../protocol';

const source = (s: string | null) => t(`network.source_${s ?? 'none'}`);

function Effective(props: { n: NetworkView }) {
  const n = props.n;
  const rows: [string, string | null, string | null][] = [
    [t('network.publicHost'), n.public_host.value, n.public_host.source],
    [t('network.publicIp'), n.public_ip.value, n.public_ip.source],
    [t('network.tlsMode'), n.tls_mode.value, n.tls_mode.source],
    [t('network.acmeEmail'), n.acme_email.value, n.acme_email.source],
  ];
  return (
    <dl class="facts" data-testid="network-effective">
      {rows.map(([label, value, src]) => (
        <Fragment key={label}>
          <dt>{label}</dt>
          <dd>
            {value ? <code class="wrap">{value}</code> : '–'} <span class="muted small">({source(value ? src : null)})</span>
          </dd>
        </Fragment>
      ))}
      <dt>{t('network.endpoint')}</dt>
      <dd>
        <code class="wrap" data-testid="network-endpoint">
          {n.endpoint}
        </code>
      </dd>
    </dl>
  );
}

export default function NetworkScreen() {
  useLang();
  useTitle(t('network.title'));
  const { data, error, reload } = useApi<NetworkResponse>('/settings/network');
  const n = data?.network;
  const why = n ? unreachable(n) : null;
  return (
    <>
      <PageHeader title={t('network.title')} />
      <ErrorBanner error={error} onRetry={reload} />
      {!n ? (
        !error && <Spinner />
      ) : (
        <>
          <Card title={t('network.settings')}>
            <p class="muted">{t('network.intro')}</p>
            <NetworkForm
              network={n}
              onSaved={() => {
                toast(t('network.saved'));
                reload();
              }}
            />
            <p class="muted small">{t('network.outdatedNote')}</p>
          </Card>
          <Card title={t('network.effective')}>
            {why && (
              <div class="banner warn" role="status" data-testid="network-unreachable">
                <p>{why}</p>
              </div>
            )}
            <Effective n={n} />
          </Card>
        </>
      )}
    </>
  );
}
