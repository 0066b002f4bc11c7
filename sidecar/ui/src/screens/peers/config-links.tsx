// The one-time config links of a peer (PeerDetail): make a link to send to the person who sets the
// peer up (shown once, with Copy), see which links are open, used (when, from where) or expired,
// and revoke an open one. Live peer_config_link_* events keep the list current.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Badge, Card, CopyButton } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { ConfigLink, ConfigLinkCreatedResponse, ConfigLinksResponse, CreateConfigLinkBody } from '../../protocol';

const HOURS = [1, 24, 72, 168] as const;
const TONE: Record<ConfigLink['state'], 'ok' | 'muted' | 'warn'> = { active: 'ok', used: 'muted', expired: 'warn', revoked: 'warn' };

export function ConfigLinks(props: { peerId: number; name: string }) {
  const links = useApi<ConfigLinksResponse>(`/peers/${props.peerId}/config-links`, [
    'peer_config_link_created',
    'peer_config_link_used',
    'peer_config_link_revoked',
  ]);
  const [hours, setHours] = useState<number>(24);
  const [note, setNote] = useState('');
  const [made, setMade] = useState<ConfigLinkCreatedResponse | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: CreateConfigLinkBody = { expires_in_hours: hours, note: note.trim() || null };
      setMade(await api<ConfigLinkCreatedResponse>('POST', `/peers/${props.peerId}/config-links`, body));
      setNote('');
      links.reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (l: ConfigLink) => {
    if (!(await confirmAction(t('peers.linkRevokeConfirm'), { confirmLabel: t('peers.linkRevoke') }))) return;
    try {
      await api('DELETE', `/peers/${props.peerId}/config-links/${l.id}`);
      toast(t('peers.linkRevoked'));
      links.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };

  const list = links.data?.links ?? [];
  return (
    <Card title={t('peers.linksTitle')} class="config-links">
      <p class="muted">{t('peers.linksHint')}</p>
      <form noValidate class="inline-form write-only" onSubmit={create}>
        <label>
          {t('peers.linkValidFor')}
          <select value={String(hours)} onChange={(e) => setHours(Number((e.target as HTMLSelectElement).value))}>
            {HOURS.map((h) => (
              <option key={h} value={String(h)}>
                {t(h === 1 ? 'peers.linkHour' : h < 48 ? 'peers.linkHours' : 'peers.linkDays', { n: h < 48 ? h : h / 24 })}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('peers.linkNote')}
          <input
            type="text"
            maxLength={200}
            value={note}
            placeholder={t('peers.linkNotePlaceholder')}
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="btn primary" disabled={busy}>
          {t('peers.linkCreate')}
        </button>
      </form>
      {error && (
        <p class="link-error" role="alert">
          {error}
        </p>
      )}
      {made && (
        <div class="secret-once" role="status">
          <p>
            <strong>{t('peers.linkMade', { name: props.name })}</strong> {t('peers.linkOnce')}
          </p>
          <code class="wrap" data-testid="config-link-url">
            {made.url}
          </code>{' '}
          <CopyButton text={made.url} />
        </div>
      )}
      {list.length > 0 && (
        <div class="table-wrap">
          <table class="table">
            <thead>
              <tr>
                <th>{t('peers.linkState')}</th>
                <th>{t('peers.linkNote')}</th>
                <th>{t('peers.created')}</th>
                <th>{t('peers.linkExpires')}</th>
                <th>{t('peers.linkUsed')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.map((l) => (
                <tr key={l.id} data-link-state={l.state}>
                  <td data-label={t('peers.linkState')}>
                    <Badge tone={TONE[l.state]}>{t(`peers.linkState_${l.state}`)}</Badge>
                  </td>
                  <td data-label={t('peers.linkNote')}>{l.note ?? '–'}</td>
                  <td data-label={t('peers.created')}>{fmtDate(l.created_at)}</td>
                  <td data-label={t('peers.linkExpires')}>{fmtDate(l.expires_at)}</td>
                  <td data-label={t('peers.linkUsed')}>{l.used_at ? `${fmtDate(l.used_at)} · ${l.used_ip ?? ''}` : '–'}</td>
                  <td>
                    {l.state === 'active' && (
                      <button type="button" class="btn small danger write-only" onClick={() => revoke(l)}>
                        {t('peers.linkRevoke')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
