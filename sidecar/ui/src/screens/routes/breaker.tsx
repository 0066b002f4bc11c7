// The circuit breaker's live state (the route's cb_failure_count / cb_opened_at, re-read on
// circuit_open / circuit_closed) and the reset button (POST /routes/:id/circuit-breaker/reset).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { Badge } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { RouteResponse } from '../../protocol';
import { breakerState } from './model';

export function BreakerPanel(props: { routeId: number; onReset?: () => void }) {
  const { data, reload } = useApi<RouteResponse>(`/routes/${props.routeId}`, ['circuit_open', 'circuit_closed', 'route_updated']);
  const [busy, setBusy] = useState(false);
  const r = data?.route;
  if (!r) return null;
  const s = breakerState(r);
  if (s === 'off') return <p class="muted breaker-state">{t('routes.breakerOff')}</p>;
  const tone = s === 'closed' ? 'ok' : s === 'open' ? 'bad' : 'warn';
  const reset = async () => {
    setBusy(true);
    try {
      await api('POST', `/routes/${props.routeId}/circuit-breaker/reset`);
      toast(t('routes.breakerResetDone'));
      reload();
      props.onReset?.();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="breaker-state" aria-live="polite">
      <span>
        {t('routes.breakerState')}: <Badge tone={tone}>{t(`routes.breaker_${s}`)}</Badge>
      </span>
      <span>{t('routes.breakerFailures', { n: r.cb_failure_count })}</span>
      {r.cb_opened_at !== null && <span>{t('routes.breakerOpenedAt', { at: fmtDate(r.cb_opened_at) })}</span>}
      <button type="button" class="btn small write-only" disabled={busy} aria-busy={busy} onClick={reset}>
        {busy ? t('common.loading') : t('routes.breakerReset')}
      </button>
    </div>
  );
}
