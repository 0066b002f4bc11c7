// System: WireGuard (GET /wg/status, POST /wg/restart) and Caddy (GET /caddy/status, POST
// /caddy/reload) with their state live from `wireguard_state`, `caddy_state` and `config_changed`,
// the version, and the cluster's nodes (ClusterCard). A server that manages neither says so and offers only what works.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Card, ErrorBanner, PageHeader, Spinner, StatusDot } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtAgo, fmtDate, t, useLang, word } from '../../i18n';
import { appInfo } from '../../session';
import { useStore } from '../../store';
import '../../components/admin.css';
import { GeoDatabaseCard } from '../geo/GeoDatabaseCard';
import { ClusterCard } from './ClusterCard';

import type { CaddyReloadResponse, CaddyStatusResponse, WgRestartResponse, WgStatusResponse } from '../../protocol';

function Action(props: { label: string; busyLabel: string; run: () => Promise<string>; disabled?: boolean; confirm?: string }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <div class="actions-line">
      <button
        type="button"
        class="btn primary"
        disabled={busy || props.disabled}
        aria-busy={busy}
        onClick={async () => {
          if (props.confirm && !(await confirmAction(props.confirm, { confirmLabel: props.label }))) return;
          setBusy(true);
          setResult(null);
          try {
            const text = await props.run();
            setResult({ ok: true, text });
            toast(text);
          } catch (e) {
            const text = t('system.failed', { error: String((e as Error).message) });
            setResult({ ok: false, text });
            toast(text, 'bad');
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy && <span class="spin" aria-hidden="true" />}
        {busy ? props.busyLabel : props.label}
      </button>
      <span role="status" class={`result ${result ? (result.ok ? 'ok' : 'bad') : ''}`}>
        {result?.text}
      </span>
    </div>
  );
}

export default function SystemScreen() {
  useLang();
  useTitle(t('system.title'));
  const info = useStore(appInfo);
  const wg = useApi<WgStatusResponse>('/wg/status', ['wireguard_state']);
  const caddy = useApi<CaddyStatusResponse>('/caddy/status', ['caddy_state', 'config_changed']);
  const w = wg.data;
  const c = caddy.data;
  return (
    <>
      <PageHeader title={t('system.title')} />
      <Card title={t('system.app')}>
        <dl class="facts">
          <dt>{t('system.version')}</dt>
          <dd>
            <code>{info?.version ?? '–'}</code>
          </dd>
        </dl>
      </Card>
      <Card title={t('system.wireguard')}>
        <ErrorBanner error={wg.error} onRetry={wg.reload} />
        {!w ? (
          !wg.error && <Spinner />
        ) : (
          <>
            <p>
              {w.managed ? (
                <StatusDot state={w.running ? 'up' : 'down'} label={w.running ? t('system.running') : t('system.stopped')} />
              ) : (
                <StatusDot state="off" label={t('system.notManaged')} />
              )}
            </p>
            {!w.managed && <p class="banner info">{t('system.wgNotManaged')}</p>}
            <dl class="facts">
              <dt>{t('system.iface')}</dt>
              <dd>
                <code>{w.interface}</code>
              </dd>
              {w.mode && (
                <>
                  <dt>{t('system.mode')}</dt>
                  <dd>{w.mode}</dd>
                </>
              )}
              <dt>{t('system.port')}</dt>
              <dd>{w.listen_port}</dd>
              <dt>{t('system.address')}</dt>
              <dd>
                <code>{w.address}</code>
              </dd>
              <dt>{t('system.subnet')}</dt>
              <dd>
                <code>{w.subnet}</code>
              </dd>
              <dt>{t('system.endpoint')}</dt>
              <dd>
                <code>{w.endpoint}</code>
              </dd>
              <dt>{t('system.publicKey')}</dt>
              <dd>
                <code class="secret">{w.public_key}</code>
              </dd>
              {w.managed && (
                <>
                  <dt>{t('system.peers')}</dt>
                  <dd>
                    {w.peer_count} ({w.online} {t('system.online')})
                  </dd>
                </>
              )}
              {w.managed && (
                <>
                  <dt>{t('system.lastSync')}</dt>
                  <dd>{fmtAgo(w.last_sync_at)}</dd>
                </>
              )}
            </dl>
            <Action
              label={t('system.restart')}
              busyLabel={t('system.restarting')}
              disabled={!w.managed}
              confirm={t('system.restartConfirm')}
              run={async () => {
                const r = await api<WgRestartResponse>('POST', '/wg/restart');
                wg.reload();
                return t('system.restarted', { peers: r.restarted.peers, ms: r.restarted.ms });
              }}
            />
          </>
        )}
      </Card>
      <Card title={t('system.caddy')}>
        <ErrorBanner error={caddy.error} onRetry={caddy.reload} />
        {!c ? (
          !caddy.error && <Spinner />
        ) : (
          <>
            <p>
              {c.managed ? (
                <StatusDot state={c.running ? 'up' : 'down'} label={c.running ? t('system.running') : t('system.stopped')} />
              ) : (
                <StatusDot state="off" label={t('system.notManaged')} />
              )}
            </p>
            {!c.managed && <p class="banner info">{t('system.caddyNotManaged')}</p>}
            <dl class="facts">
              <dt>{t('system.proxyMode')}</dt>
              <dd>{t(`system.mode_${c.mode === 'caddy' ? 'caddy' : 'render_only'}`)}</dd>
              {c.managed && (
                <>
                  <dt>{t('system.pid')}</dt>
                  <dd>{c.pid ?? '–'}</dd>
                </>
              )}
              {c.managed && c.uptime_s !== null && (
                <>
                  <dt>{t('system.uptime')}</dt>
                  <dd>{fmtDate(Date.now() - c.uptime_s * 1000)}</dd>
                </>
              )}
              {c.managed && (
                <>
                  <dt>{t('system.restarts')}</dt>
                  <dd>{c.restarts ?? 0}</dd>
                </>
              )}
              <dt>{t('system.admin')}</dt>
              <dd>
                <code>{c.admin_api}</code>
              </dd>
              <dt>{t('system.configHash')}</dt>
              <dd>
                <code class="secret">{c.config_hash ?? '–'}</code>
              </dd>
              <dt>{t('system.lastLoad')}</dt>
              <dd>{fmtAgo(c.last_load_at)}</dd>
              <dt>{t('system.lastError')}</dt>
              <dd data-testid="caddy-last-error">
                {c.last_error ? word(c.last_error_code, c.last_error) : t('system.none')}
                {c.last_error && c.last_error_code && <div class="muted caddy-error-detail">{c.last_error}</div>}
              </dd>
            </dl>
            <Action
              label={t('system.reload')}
              busyLabel={t('system.reloading')}
              run={async () => {
                const r = await api<CaddyReloadResponse>('POST', '/caddy/reload');
                caddy.reload();
                return t(r.loaded ? 'system.reloaded' : 'system.reloadedNoLoad', { hash: (r.config_hash ?? '').slice(0, 12) });
              }}
            />
          </>
        )}
      </Card>
      <ClusterCard />
      <GeoDatabaseCard />
    </>
  );
}
