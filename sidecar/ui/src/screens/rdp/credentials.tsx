// Credentials entry, encrypted in the browser: the username, password and domain are sealed with
// the server's RDP public key (GET /rdp/pubkey) by encryptCredentials of
// @gatehouse/common/rdp-credentials (WebCrypto: RSA-OAEP-256 wrapping an AES-256-GCM key) and only
// that envelope is sent (PUT /rdp/:id/credentials {credentials: envelope}). The password never
// leaves the page in clear and is not kept after saving. The card shows whether credentials are
// stored, when, and under which key, and clears them (DELETE).
import { useState } from 'preact/hooks';
import { api, ApiError, get } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextField, useForm } from '../../components/form';
import { Badge, Card } from '../../components/ui';
import { fmtDate, t } from '../../i18n';
import type { PubkeyResponse } from '../../protocol';
import type { RdpRoute } from './model';

const EMPTY = { username: '', password: '', domain: '' };

/** WebCrypto's subtle API exists only in a secure context (HTTPS, or localhost). */
export const canEncrypt = () => typeof globalThis.crypto?.subtle?.importKey === 'function';

export function CredentialsCard(props: { route: RdpRoute; onChange: () => void }) {
  const r = props.route;
  const form = useForm({ ...EMPTY });
  const [clearing, setClearing] = useState(false);
  const secure = canEncrypt();

  const save = async (e: Event) => {
    e.preventDefault();
    const ok = await form.submit(async (v) => {
      const fields: Record<string, string> = {};
      if (!v.username.trim()) fields.username = t('rdp.credsUserRequired');
      if (!v.password) fields.password = t('rdp.credsPasswordRequired');
      if (Object.keys(fields).length) throw new ApiError(400, t('rdp.credsIncomplete'), fields);
      const key = await get<PubkeyResponse>('/rdp/pubkey');
      // Loaded with the form only when it is used: the envelope code (and its validation) stays out of the other screens.
      const { encryptCredentials } = await import('@gatehouse/common/rdp-credentials.js');
      const envelope = await encryptCredentials(key.public_key, { username: v.username.trim(), password: v.password, domain: v.domain.trim() });
      await api('PUT', `/rdp/${r.id}/credentials`, { credentials: envelope });
    });
    if (ok) {
      form.setAll({ ...EMPTY });
      toast(t('rdp.credsSaved', { name: r.name }));
      props.onChange();
    }
  };
  const clear = async () => {
    if (!(await confirmAction(t('rdp.credsClearConfirm', { name: r.name }), { confirmLabel: t('rdp.credsClear') }))) return;
    setClearing(true);
    try {
      await api('DELETE', `/rdp/${r.id}/credentials`);
      toast(t('rdp.credsCleared', { name: r.name }));
      props.onChange();
    } catch (err) {
      toast((err as Error).message, 'bad');
    } finally {
      setClearing(false);
    }
  };

  return (
    <Card title={t('rdp.credentials')} class="rdp-creds">
      <p class="rdp-cred-state">
        {r.has_credentials ? (
          <>
            <Badge tone="ok">{t('rdp.credsStored')}</Badge> {t('rdp.credsUpdated', { at: fmtDate(r.credentials_updated_at) })}
            {r.credentials_kid && (
              <>
                {' '}
                · {t('rdp.credsKid')} <code>{r.credentials_kid}</code>
              </>
            )}
          </>
        ) : (
          <Badge tone="muted">{t('rdp.credsNone')}</Badge>
        )}
      </p>
      {r.rotation_state === 'pending' && (
        <p class="banner warn" role="note">
          {t('rdp.credsRotationNote')}
        </p>
      )}
      <p class="hint">{t('rdp.credsHint')}</p>
      {!secure ? (
        <p class="banner error" role="alert">
          {t('rdp.credsInsecure')}
        </p>
      ) : (
        <form onSubmit={save} noValidate aria-label={t('rdp.credsFormLabel')} autoComplete="off">
          <div class="form-grid">
            <TextField form={form} name="username" label={t('rdp.credsUser')} required autoComplete="off" />
            <TextField form={form} name="password" type="password" label={t('rdp.credsPassword')} required autoComplete="new-password" />
            <TextField form={form} name="domain" label={t('rdp.credsDomain')} hint={t('rdp.credsDomainHint')} autoComplete="off" />
          </div>
          <FormErrors form={form} />
          <div class="form-actions">
            {r.has_credentials && (
              <button type="button" class="btn danger" disabled={clearing} aria-busy={clearing} onClick={clear}>
                {t('rdp.credsClear')}
              </button>
            )}
            <SubmitButton form={form} label={r.has_credentials ? t('rdp.credsReplace') : t('rdp.credsSave')} />
          </div>
        </form>
      )}
    </Card>
  );
}
