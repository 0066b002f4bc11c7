// Status pieces shared by the list and the detail: enabled, the last uptime check, the breaker.
import { Badge, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { t } from '../../i18n';
import type { RouteChecksResponse } from '../../protocol';
import { breakerState, monitorable, type Route } from './model';

/** The newest uptime check of a monitored route (reloaded on route_up/route_down). */
export function MonitorStatus(props: { route: Route }) {
  const r = props.route;
  const on = r.monitoring_enabled && monitorable(r);
  const { data } = useApi<RouteChecksResponse>(on ? `/routes/${r.id}/checks?limit=1` : null, ['route_up', 'route_down']);
  if (!on) return null;
  const last = data?.checks?.[0];
  if (!last) return <StatusDot state="unknown" label={t('routes.monPending')} />;
  return <StatusDot state={last.up ? 'up' : 'down'} label={last.up ? t('routes.monUp') : t('routes.monDown')} />;
}

export function BreakerBadge(props: { route: Route }) {
  const s = breakerState(props.route);
  if (s === 'off') return null;
  const tone = s === 'closed' ? 'ok' : s === 'open' ? 'bad' : 'warn';
  return <Badge tone={tone}>{t(`routes.breaker_${s}`)}</Badge>;
}

export function EnabledBadge(props: { enabled: boolean }) {
  return <Badge tone={props.enabled ? 'ok' : 'muted'}>{props.enabled ? t('common.enabled') : t('common.disabled')}</Badge>;
}
