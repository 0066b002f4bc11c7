// Sessions and history of a route (GET /rdp/:id/history?limit=): the active sessions with
// "disconnect all" (the clients see the order on their next heartbeat), the ended ones with
// duration, client, peer and end reason; export links for every route's history as CSV or JSON.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Badge, Card, ErrorBanner, Spinner } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { DisconnectAllResponse, HistoryResponse } from '../../protocol';
import { RDP_SESSION_EVENTS, type RdpRoute } from './model';

export function fmtDuration(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '–';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.floor(s % 60);
  return h ? t('rdp.durHm', { h, m }) : m ? t('rdp.durMs', { m, s: sec }) : t('rdp.durS', { s: sec });
}

export function HistoryCard(props: { route: RdpRoute }) {
  const r = props.route;
  const { data, error, reload } = useApi<HistoryResponse>(`/rdp/${r.id}/history?limit=100`, RDP_SESSION_EVENTS);
  const [busy, setBusy] = useState(false);
  const sessions = data?.sessions ?? [];
  const active = sessions.filter((x) => x.status === 'active');

  const disconnectAll = async () => {
    if (!(await confirmAction(t('rdp.disconnectConfirm', { n: active.length, name: r.name }), { confirmLabel: t('rdp.disconnectAll') }))) return;
    setBusy(true);
    try {
      const res = await api<DisconnectAllResponse>('POST', `/rdp/${r.id}/sessions/disconnect-all`);
      toast(t('rdp.disconnectDone', { n: res.count }));
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card
      title={t('rdp.historyTitle')}
      class="rdp-history"
      actions={
        <button type="button" class="btn small danger" disabled={busy || active.length === 0} aria-busy={busy} onClick={disconnectAll}>
          {t('rdp.disconnectAll')}
        </button>
      }
    >
      <p>{t('rdp.activeSessions', { n: active.length })}</p>
      <div class="exports">
        <span>{t('rdp.exportAll')}</span>
        <a class="btn small" href="/api/v1/rdp/history/export?format=csv" download>
          {t('rdp.exportCsv')}
        </a>
        <a class="btn small" href="/api/v1/rdp/history/export?format=json" download>
          {t('rdp.exportJson')}
        </a>
      </div>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : !sessions.length ? (
        <p class="muted">{t('rdp.historyEmpty')}</p>
      ) : (
        <div class="table-wrap">
          <table class="table" aria-label={t('rdp.historyTitle')}>
            <thead>
              <tr>
                <th scope="col">{t('rdp.started')}</th>
                <th scope="col">{t('rdp.duration')}</th>
                <th scope="col">{t('rdp.client')}</th>
                <th scope="col">{t('rdp.peer')}</th>
                <th scope="col">{t('rdp.sessionState')}</th>
                <th scope="col">{t('rdp.endReason')}</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((x) => (
                <tr key={x.id}>
                  <td data-label={t('rdp.started')}>{fmtDate(x.started_at)}</td>
                  <td data-label={t('rdp.duration')}>{fmtDuration(x.duration_s)}</td>
                  <td data-label={t('rdp.client')}>
                    {x.client_name ?? '–'}
                    {x.username && <span class="muted"> · {x.username}</span>}
                  </td>
                  <td data-label={t('rdp.peer')}>{x.peer_name ?? (x.peer_id !== null ? `#${x.peer_id}` : '–')}</td>
                  <td data-label={t('rdp.sessionState')}>
                    {x.status === 'active' ? (
                      <Badge tone={x.disconnect_requested_at ? 'warn' : 'ok'}>{x.disconnect_requested_at ? t('rdp.disconnecting') : t('rdp.active')}</Badge>
                    ) : (
                      <Badge tone="muted">{t('rdp.ended')}</Badge>
                    )}
                  </td>
                  <td data-label={t('rdp.endReason')}>{x.end_reason ? t(`rdp.reason_${x.end_reason}`) : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
