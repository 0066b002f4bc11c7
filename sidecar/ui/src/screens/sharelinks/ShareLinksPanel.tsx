// The share links of a route (RouteDetail, routes with a route login): make a link (shown once, with
// Copy) with an expiry (at most the share-link setting ahead), a use limit, a path and a note; see
// each link's state, uses, last use and expiry; revoke one. Live share_link_* events keep it current.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Badge, Card, CopyButton } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { CreateShareLinkBody, ShareLink, ShareLinkCreatedResponse, ShareLinksResponse, ShareSettingsResponse } from '../../protocol';
import './sharelinks.css';

const TONE: Record<ShareLink['state'], 'ok' | 'muted' | 'warn'> = { active: 'ok', used_up: 'muted', expired: 'warn', revoked: 'warn' };
const DAY = 86_400_000;
/** A datetime-local value (local time, minutes) for a moment. */
const localInput = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

export function ShareLinksPanel(props: { routeId: number }) {
  const links = useApi<ShareLinksResponse>(`/routes/${props.routeId}/share-links`, ['share_link_created', 'share_link_used', 'share_link_revoked']);
  const settings = useApi<ShareSettingsResponse>('/settings/share-links');
  const maxDays = settings.data?.share_links.max_expiry_days ?? 30;
  const [expires, setExpires] = useState(() => localInput(Date.now() + 7 * DAY));
  const [maxUses, setMaxUses] = useState('');
  const [prefix, setPrefix] = useState('');
  const [note, setNote] = useState('');
  const [made, setMade] = useState<ShareLinkCreatedResponse | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setFields({});
    try {
      const body: CreateShareLinkBody = {
        expires_at: new Date(expires).toISOString(),
        max_uses: maxUses.trim() ? Number(maxUses) : null,
        path_prefix: prefix.trim() || null,
        note: note.trim() || null,
      };
      setMade(await api<ShareLinkCreatedResponse>('POST', `/routes/${props.routeId}/share-links`, body));
      setNote('');
      links.reload();
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setFields(err.fields);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (l: ShareLink) => {
    if (!(await confirmAction(t('shareLinks.revokeConfirm'), { confirmLabel: t('shareLinks.revoke') }))) return;
    try {
      await api('DELETE', `/routes/${props.routeId}/share-links/${l.id}`);
      toast(t('shareLinks.revoked'));
      links.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const fieldError = (k: string) =>
    fields[k] ? (
      <span class="field-error" role="alert">
        {fields[k]}
      </span>
    ) : null;

  const list = links.data?.share_links ?? [];
  return (
    <Card title={t('shareLinks.title')} class="share-links">
      <p class="muted">{t('shareLinks.hint')}</p>
      <form noValidate class="inline-form write-only" onSubmit={create} data-testid="share-link-form">
        <label>
          {t('shareLinks.expires')}
          <input
            type="datetime-local"
            name="expires_at"
            value={expires}
            min={localInput(Date.now())}
            max={localInput(Date.now() + maxDays * DAY)}
            onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
          />
          <small class="muted">{t('shareLinks.longest', { n: maxDays })}</small>
          {fieldError('expires_at')}
        </label>
        <label>
          {t('shareLinks.maxUses')}
          <input
            type="number"
            name="max_uses"
            min={1}
            value={maxUses}
            placeholder={t('shareLinks.maxUsesPlaceholder')}
            onInput={(e) => setMaxUses((e.target as HTMLInputElement).value)}
          />
          {fieldError('max_uses')}
        </label>
        <label>
          {t('shareLinks.pathPrefix')}
          <input
            type="text"
            name="path_prefix"
            maxLength={512}
            value={prefix}
            placeholder={t('shareLinks.pathPlaceholder')}
            onInput={(e) => setPrefix((e.target as HTMLInputElement).value)}
          />
          {fieldError('path_prefix')}
        </label>
        <label>
          {t('shareLinks.note')}
          <input
            type="text"
            name="note"
            maxLength={200}
            value={note}
            placeholder={t('shareLinks.notePlaceholder')}
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="btn primary" disabled={busy}>
          {t('shareLinks.create')}
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
            <strong>{t('shareLinks.made')}</strong> {t('shareLinks.once')}
          </p>
          <code class="wrap" data-testid="share-link-url">
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
                <th>{t('shareLinks.state')}</th>
                <th>{t('shareLinks.note')}</th>
                <th>{t('shareLinks.pathPrefix')}</th>
                <th>{t('shareLinks.uses')}</th>
                <th>{t('shareLinks.lastUsed')}</th>
                <th>{t('shareLinks.expires')}</th>
                <th>{t('shareLinks.createdBy')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.map((l) => (
                <tr key={l.id} data-share-state={l.state}>
                  <td data-label={t('shareLinks.state')}>
                    <Badge tone={TONE[l.state]}>{t(`shareLinks.state_${l.state}`)}</Badge>
                  </td>
                  <td data-label={t('shareLinks.note')}>{l.note ?? '–'}</td>
                  <td data-label={t('shareLinks.pathPrefix')}>{l.path_prefix ? <code>{l.path_prefix}</code> : t('shareLinks.wholeRoute')}</td>
                  <td data-label={t('shareLinks.uses')}>{l.max_uses === null ? String(l.uses) : `${l.uses} / ${l.max_uses}`}</td>
                  <td data-label={t('shareLinks.lastUsed')}>{fmtDate(l.last_used_at)}</td>
                  <td data-label={t('shareLinks.expires')}>{fmtDate(l.expires_at)}</td>
                  <td data-label={t('shareLinks.createdBy')}>{l.created_by.username ?? '–'}</td>
                  <td>
                    {l.state !== 'revoked' && (
                      <button type="button" class="btn small danger write-only" onClick={() => revoke(l)}>
                        {t('shareLinks.revoke')}
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
