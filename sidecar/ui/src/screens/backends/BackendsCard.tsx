// The route detail's Backends card: each backend of an HTTP route with several backends or a health
// check (GET /routes/:id/backends) and its state as Caddy sees it, up or down and since when. A
// route_backend_down / route_backend_up event of this route changes the row at once and reloads
// the list; while a state is not known yet (Caddy's first reading after a change comes within
// seconds, and an up backend raises no event) the list is read again every few seconds.
import { useEffect, useState } from 'preact/hooks';
import { Card, ErrorBanner, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t, useLang } from '../../i18n';
import { useLive } from '../../live';
import type { Route, RouteBackendsResponse, WizardPeer } from '../../protocol';
import './backends.css';

type Row = RouteBackendsResponse['backends'][number];
export const UNKNOWN_REFRESH_MS = 5000;
const RELOAD_ON = ['route_updated', 'route_enabled', 'route_disabled', 'peer_updated', 'peer_enabled', 'peer_disabled', 'peer_expired'];

/** Whether the route's backends are watched: several of them, or an active health check. */
export const watched = (r: Pick<Route, 'route_type' | 'backends' | 'health_check'>) =>
  r.route_type === 'http' && (r.backends.length > 0 || r.health_check !== null);

export function BackendsCard(props: { route: Route; peers: Map<number, WizardPeer> }) {
  useLang();
  const r = props.route;
  const { data, error, reload, loading } = useApi<RouteBackendsResponse>(`/routes/${r.id}/backends`, RELOAD_ON);
  const [rows, setRows] = useState<Row[]>([]);
  useEffect(() => setRows(data?.backends ?? []), [data]);
  useLive(['route_backend_down', 'route_backend_up'], (e) => {
    if (e.data.route_id !== r.id) return;
    const state = e.type === 'route_backend_down' ? 'down' : 'up';
    const since = new Date(e.data.at).toISOString();
    setRows((list) => list.map((b) => (b.dial === e.data.backend ? { ...b, state, since } : b)));
    reload();
  });
  const pending = rows.some((b) => b.dial !== null && b.state === 'unknown');
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(reload, UNKNOWN_REFRESH_MS);
    return () => clearInterval(timer);
  }, [pending, r.id]);

  const several = r.backends.length > 1;
  const weights = several && r.lb_policy === 'round_robin';
  const peerName = (b: Row) => props.peers.get(b.peer_id)?.name ?? `#${b.peer_id}`;
  const target = (b: Row) => (b.target_kind === 'gateway' ? `${peerName(b)} → ${b.target_host ?? '?'}:${b.target_port}` : `${peerName(b)}:${b.target_port}`);
  const stateLabel = (b: Row) => (b.dial === null ? t('backends.stateOff') : t(`backends.state_${b.state}`));
  return (
    <Card
      title={t('backends.cardTitle')}
      class="backends-card"
      actions={
        <button type="button" class="btn small" disabled={loading} aria-busy={loading} onClick={reload}>
          {t('common.refresh')}
        </button>
      }
    >
      <p class="hint">
        {several ? t(`backends.policy_${r.lb_policy}`) : t('backends.single')}
        {r.health_check
          ? ` · ${t('backends.healthSummary', { path: r.health_check.path, s: r.health_check.interval_s, status: r.health_check.expect_status })}`
          : ''}
      </p>
      <ErrorBanner error={error} onRetry={reload} />
      {rows.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label={t('backends.cardTitle')}>
            <thead>
              <tr>
                <th scope="col">{t('backends.colBackend')}</th>
                <th scope="col">{t('backends.colAddress')}</th>
                {weights && <th scope="col">{t('backends.weight')}</th>}
                <th scope="col">{t('backends.colState')}</th>
                <th scope="col">{t('backends.colSince')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((b) => (
                <tr key={b.index} data-testid="backend-state" data-state={b.state}>
                  <td data-label={t('backends.colBackend')}>
                    {target(b)}
                    {b.index === 0 && several ? <span class="muted"> · {t('backends.first')}</span> : ''}
                  </td>
                  <td data-label={t('backends.colAddress')}>{b.dial ? <code>{b.dial}</code> : '–'}</td>
                  {weights && <td data-label={t('backends.weight')}>{b.weight}</td>}
                  <td data-label={t('backends.colState')}>
                    <StatusDot state={b.dial === null ? 'off' : b.state} label={stateLabel(b)} />
                  </td>
                  <td data-label={t('backends.colSince')}>{b.since ? fmtDate(b.since) : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="hint backends-checked">{data?.checked_at ? t('backends.checkedAt', { time: fmtDate(data.checked_at) }) : t('backends.notChecked')}</p>
    </Card>
  );
}
