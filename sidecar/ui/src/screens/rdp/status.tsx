// Status pieces shared by the list and the detail: reachability (the cached map of GET /rdp/status,
// reloaded on rdp_status_changed and polled), credentials and rotation badges.
import { useEffect } from 'preact/hooks';
import { Badge, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { t } from '../../i18n';
import type { RdpStatusAllResponse } from '../../protocol';
import { RDP_EVENTS, RDP_STATUS_EVENTS, type RdpRoute, type RdpStatus } from './model';

/** Every route's last status, by route id; polled every 30 s besides the live events. */
export function useStatusMap(): Map<number, RdpStatus> {
  const { data, reload } = useApi<RdpStatusAllResponse>('/rdp/status', [...RDP_STATUS_EVENTS, ...RDP_EVENTS]);
  useEffect(() => {
    const timer = setInterval(reload, 30_000);
    return () => clearInterval(timer);
  }, [reload]);
  return new Map((data?.routes ?? []).map((s) => [s.rdp_route_id, s]));
}

export function ReachDot(props: { route: RdpRoute; status: RdpStatus | undefined | null }) {
  const { route, status } = props;
  if (!route.enabled) return null;
  if (status?.maintenance) return <StatusDot state="warn" label={t('rdp.inMaintenance')} />;
  if (!status || !status.checked_at) return <StatusDot state="unknown" label={t('rdp.notChecked')} />;
  if (!status.reachable) return <StatusDot state="down" label={t('rdp.unreachable')} />;
  return <StatusDot state="up" label={status.latency_ms !== null ? t('rdp.reachableMs', { n: status.latency_ms }) : t('rdp.reachable')} />;
}

export function CredBadge(props: { route: RdpRoute }) {
  const r = props.route;
  if (r.rotation_state === 'pending') return <Badge tone="bad">{t('rdp.rotationPendingBadge')}</Badge>;
  return r.has_credentials ? <Badge tone="ok">{t('rdp.credsStored')}</Badge> : <Badge tone="muted">{t('rdp.credsNone')}</Badge>;
}

export function EnabledBadge(props: { enabled: boolean }) {
  return <Badge tone={props.enabled ? 'ok' : 'muted'}>{props.enabled ? t('common.enabled') : t('common.disabled')}</Badge>;
}
