// Wake-on-LAN with progress: POST /rdp/:id/wol {timeout_ms} sends the magic packet (through the
// gateway for gateway-mode routes, directly from the server otherwise) and starts a wake cycle; the
// card then polls GET /rdp/:id/wol/status (each poll checks the target's reachability) until the host
// answers (awake) or the timeout passes, showing the time waited against the timeout.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, get } from '../../api';
import { toast } from '../../components/dialog';
import { Card, StatusDot } from '../../components/ui';
import { t, word } from '../../i18n';
import type { WakeCycle, WolResponse } from '../../protocol';
import type { RdpRoute } from './model';

const POLL_MS = 1500;

/** Seconds waited, by the server's clock (so a skewed browser clock does not matter). */
export function waited(c: WakeCycle): number {
  const end = c.state === 'awake' ? c.awake_at : c.state === 'timeout' ? c.deadline : c.last_check_at;
  return Math.max(0, Math.round(((end ?? c.sent_at) - c.sent_at) / 1000));
}

export function WolCard(props: { route: RdpRoute }) {
  const r = props.route;
  const [cycle, setCycle] = useState<WakeCycle | null>(null);
  const [seconds, setSeconds] = useState(120);
  const [sending, setSending] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
      clearTimeout(timer.current);
    },
    [],
  );

  const poll = async (announce: boolean) => {
    try {
      const { wol } = await get<WolResponse>(`/rdp/${r.id}/wol/status`);
      if (!alive.current) return;
      setCycle(wol);
      if (wol.state === 'pending') timer.current = setTimeout(() => poll(true), POLL_MS);
      else if (announce && wol.state === 'awake') toast(t('rdp.wolAwakeToast', { name: r.name }));
      else if (announce && wol.state === 'timeout') toast(t('rdp.wolTimeoutToast', { name: r.name }), 'bad');
    } catch (e) {
      if (alive.current) toast((e as Error).message, 'bad');
    }
  };
  // A wake started earlier (another tab, before a reload) is picked up.
  useEffect(() => {
    void poll(false);
  }, [r.id]);

  const wake = async () => {
    setSending(true);
    clearTimeout(timer.current);
    try {
      const { wol } = await api<WolResponse>('POST', `/rdp/${r.id}/wol`, { timeout_ms: Math.round(seconds * 1000) });
      setCycle(wol);
      timer.current = setTimeout(() => poll(true), POLL_MS);
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setSending(false);
    }
  };

  const pending = cycle?.state === 'pending';
  const s = cycle ? waited(cycle) : 0;
  const total = Math.round((cycle?.timeout_ms ?? 0) / 1000);
  return (
    <Card title={t('rdp.wolTitle')} class="rdp-wol">
      <p class="hint">{r.access_mode === 'gateway' ? t('rdp.wolViaGateway', { mac: r.wol_mac ?? '?' }) : t('rdp.wolDirect', { mac: r.wol_mac ?? '?' })}</p>
      <div class="actions-line">
        <label for="wol-timeout">{t('rdp.wolTimeout')}</label>
        <input
          id="wol-timeout"
          type="number"
          min={1}
          max={600}
          step={1}
          value={seconds}
          disabled={pending || sending}
          class="rdp-wol-seconds"
          onInput={(e) => setSeconds(Math.min(600, Math.max(1, Number(e.currentTarget.value) || 1)))}
        />
        <button type="button" class="btn primary" disabled={pending || sending} aria-busy={pending || sending} onClick={wake}>
          {pending ? t('rdp.wolWaiting') : t('rdp.wolWake')}
        </button>
      </div>
      {cycle && cycle.state !== 'idle' && (
        <div class="rdp-wol-progress" role="status" aria-live="polite">
          {pending && (
            <>
              <progress max={total || 1} value={Math.min(s, total)} aria-label={t('rdp.wolProgress')} />
              <p>{t('rdp.wolWaitingFor', { s, total })}</p>
            </>
          )}
          {cycle.state === 'awake' && <StatusDot state="up" label={t('rdp.wolAwake', { s })} />}
          {cycle.state === 'timeout' && <StatusDot state="down" label={t('rdp.wolTimedOut', { total })} />}
          {cycle.state !== 'awake' && cycle.last_error && (
            <p class="muted">{t('rdp.wolLastError', { error: word(cycle.last_error_code, cycle.last_error) })}</p>
          )}
          <p class="muted">{t('rdp.wolSentTo', { to: cycle.sent_to.join(', ') || '–' })}</p>
        </div>
      )}
    </Card>
  );
}
