// A desktop-client token's machines (GET /tokens/:id/machines): each machine that registered with
// the token (hostname, platform, client version, its peer, last seen, tunnel handshake and traffic),
// forgotten with DELETE /tokens/:id/machines/:machineId (optionally with its peer); and the token's
// split-tunnel override (PATCH /tokens/:id {split_tunnel}: CIDRs, or null for the server default).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { CheckField, FormErrors, SubmitButton, TextArea, useForm } from '../../components/form';
import { Badge, ErrorBanner, Spinner } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtAgo, fmtBytes, t } from '../../i18n';

import type { Machine, MachinesResponse, TokenView } from '../../protocol';

type ClientToken = Pick<TokenView, 'id' | 'name' | 'split_tunnel'>;

export function MachinesPanel(props: { token: ClientToken; onChange: () => void }) {
  const tk = props.token;
  const { data, error, reload } = useApi<MachinesResponse>(`/tokens/${tk.id}/machines`, ['client_registered']);
  const [busy, setBusy] = useState<string | null>(null);

  const forget = async (m: Machine, deletePeer: boolean) => {
    const msg = deletePeer ? t('tokens.forgetPeerConfirm', { host: m.hostname, peer: m.peer_name ?? '–' }) : t('tokens.forgetConfirm', { host: m.hostname });
    if (!(await confirmAction(msg, { confirmLabel: deletePeer ? t('tokens.forgetWithPeer') : t('tokens.forget') }))) return;
    setBusy(`${m.id}-${deletePeer}`);
    try {
      await api('DELETE', `/tokens/${tk.id}/machines/${m.id}${deletePeer ? '?delete_peer=true' : ''}`);
      toast(t('tokens.forgotten', { host: m.hostname }));
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const machines = data?.machines ?? [];
  return (
    <div class="machines">
      <SplitTunnel token={tk} onSaved={props.onChange} />
      <h3>{t('tokens.machinesTitle')}</h3>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : !machines.length ? (
        <p class="muted">{t('tokens.machinesEmpty')}</p>
      ) : (
        <div class="table-wrap">
          <table class="table" aria-label={t('tokens.machinesTitle')}>
            <thead>
              <tr>
                <th scope="col">{t('tokens.mHost')}</th>
                <th scope="col">{t('tokens.mClient')}</th>
                <th scope="col">{t('tokens.mPeer')}</th>
                <th scope="col">{t('tokens.mSeen')}</th>
                <th scope="col">{t('tokens.mTraffic')}</th>
                <th scope="col">{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {machines.map((m) => (
                <tr key={m.id}>
                  <td data-label={t('tokens.mHost')}>
                    <strong>{m.hostname}</strong>
                    {m.hostname_source === 'admin' && (
                      <>
                        {' '}
                        <Badge tone="info">{t('tokens.mHostAdmin')}</Badge>
                      </>
                    )}
                  </td>
                  <td data-label={t('tokens.mClient')}>
                    {m.platform} · {m.client_version}
                  </td>
                  <td data-label={t('tokens.mPeer')}>{m.peer_name ? `${m.peer_name}${m.peer_address ? ` (${m.peer_address})` : ''}` : '–'}</td>
                  <td data-label={t('tokens.mSeen')}>
                    {fmtAgo(m.last_seen_at)}
                    {m.handshake_age_s !== null && <span class="muted"> · {t('tokens.mHandshake', { s: m.handshake_age_s })}</span>}
                  </td>
                  <td data-label={t('tokens.mTraffic')}>
                    {m.rx_bytes !== null || m.tx_bytes !== null ? t('tokens.mRxTx', { rx: fmtBytes(m.rx_bytes), tx: fmtBytes(m.tx_bytes) }) : '–'}
                  </td>
                  <td data-label={t('common.actions')}>
                    <span class="row-actions">
                      <button
                        type="button"
                        class="btn small"
                        disabled={!!busy}
                        aria-busy={busy === `${m.id}-false`}
                        aria-label={t('tokens.forgetFor', { host: m.hostname })}
                        onClick={() => forget(m, false)}
                      >
                        {t('tokens.forget')}
                      </button>
                      {m.peer_id !== null && (
                        <button
                          type="button"
                          class="btn small danger"
                          disabled={!!busy}
                          aria-busy={busy === `${m.id}-true`}
                          aria-label={t('tokens.forgetWithPeerFor', { host: m.hostname })}
                          onClick={() => forget(m, true)}
                        >
                          {t('tokens.forgetWithPeer')}
                        </button>
                      )}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function SplitTunnel(props: { token: ClientToken; onSaved: () => void }) {
  const own = props.token.split_tunnel ?? null;
  const form = useForm({ override: own !== null, split_tunnel: (own ?? []).join('\n') });
  const save = async (e: Event) => {
    e.preventDefault();
    const ok = await form.submit(async (v) => {
      const list = v.split_tunnel
        .split(/[\s,]+/)
        .map((x) => x.trim())
        .filter(Boolean);
      await api('PATCH', `/tokens/${props.token.id}`, { split_tunnel: v.override ? list : null });
    });
    if (ok) {
      toast(t('tokens.splitSaved', { name: props.token.name }));
      props.onSaved();
    }
  };
  const entryErrors = Object.entries(form.errors).filter(([k]) => k.startsWith('split_tunnel.'));
  return (
    <form class="split-tunnel" onSubmit={save} noValidate aria-label={t('tokens.splitTitle')}>
      <h3>{t('tokens.splitTitle')}</h3>
      <CheckField form={form} name="override" label={t('tokens.splitOverride')} />
      {form.values.override ? (
        <TextArea form={form} name="split_tunnel" label={t('tokens.splitRanges')} hint={t('tokens.splitHint')} rows={3} />
      ) : (
        <p class="hint">{t('tokens.splitDefault')}</p>
      )}
      {entryErrors.length > 0 && (
        <ul class="field-error">
          {entryErrors.map(([k, msg]) => (
            <li key={k}>{t('tokens.splitEntryError', { n: Number(k.split('.')[1]) + 1, msg })}</li>
          ))}
        </ul>
      )}
      <FormErrors form={form} shown={entryErrors.map(([k]) => k)} />
      <div class="form-actions">
        <SubmitButton form={form} label={t('tokens.splitSave')} />
      </div>
    </form>
  );
}
