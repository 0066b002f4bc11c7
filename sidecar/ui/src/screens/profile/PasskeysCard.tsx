// Profile: the account's passkeys (GET /settings/second-factor/passkeys and its writes). Add one (the
// password and a name, then the browser's own WebAuthn dialog through @simplewebauthn/browser; the
// account's first second factor shows its recovery codes once), or remove one (with the password;
// refused while the policy requires a second factor and it is the last one), or rename one in place
// (PUT /settings/second-factor/passkeys/:id).
import { useState } from 'preact/hooks';
import { startRegistration, browserSupportsWebAuthn, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextField, useForm } from '../../components/form';
import { Card, ErrorBanner, Spinner } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { PasskeyOptionsResponse, PasskeyRegisteredResponse, PasskeyRenamedResponse, PasskeysResponse } from '../../protocol';
import { RecoveryCodes } from './SecondFactorCard';

type Passkey = PasskeysResponse['passkeys'][number];

export function PasskeysCard() {
  const { data, error, reload } = useApi<PasskeysResponse>('/settings/second-factor/passkeys');
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<Passkey | null>(null);
  const [renaming, setRenaming] = useState<number | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const supported = browserSupportsWebAuthn();
  return (
    <Card title={t('profile.pkTitle')} class="passkeys">
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <>
          <p>{t('profile.pkHint')}</p>
          {data.passkeys.length === 0 ? (
            <p class="muted">{t('profile.pkNone')}</p>
          ) : (
            <ul class="passkey-list">
              {data.passkeys.map((p) => (
                <li key={p.id}>
                  {renaming === p.id ? (
                    <RenamePasskey
                      passkey={p}
                      onCancel={() => setRenaming(null)}
                      onDone={() => {
                        setRenaming(null);
                        toast(t('profile.pkRenamed'));
                        reload();
                      }}
                    />
                  ) : (
                    <>
                      <strong>{p.name}</strong>{' '}
                      <small>
                        {t('profile.pkAdded', { date: fmtDate(p.created_at) })}
                        {p.last_used_at !== null && ` · ${t('profile.pkUsed', { date: fmtDate(p.last_used_at) })}`}
                      </small>{' '}
                      <button type="button" class="btn small" aria-label={t('profile.pkRenameNamed', { name: p.name })} onClick={() => setRenaming(p.id)}>
                        {t('profile.pkRename')}
                      </button>{' '}
                      <button type="button" class="btn danger small" aria-label={t('profile.pkRemoveNamed', { name: p.name })} onClick={() => setRemoving(p)}>
                        {t('profile.pkRemove')}
                      </button>
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
          {codes && <RecoveryCodes codes={codes} onClose={() => setCodes(null)} />}
          {removing ? (
            <RemovePasskey
              passkey={removing}
              onCancel={() => setRemoving(null)}
              onDone={() => {
                setRemoving(null);
                toast(t('profile.pkRemoved'));
                reload();
              }}
            />
          ) : adding ? (
            <AddPasskey
              onCancel={() => setAdding(false)}
              onDone={(c) => {
                setAdding(false);
                setCodes(c ?? null);
                toast(t('profile.pkAddedToast'));
                reload();
              }}
            />
          ) : supported ? (
            <div class="form-actions">
              <button type="button" class="btn primary" onClick={() => setAdding(true)}>
                {t('profile.pkAdd')}
              </button>
            </div>
          ) : (
            <p class="muted">{t('profile.pkUnsupported')}</p>
          )}
        </>
      )}
    </Card>
  );
}

function AddPasskey(props: { onCancel: () => void; onDone: (codes: string[] | undefined) => void }) {
  const form = useForm({ current: '', name: '' });
  return (
    <form
      noValidate
      aria-label={t('profile.pkAdd')}
      onSubmit={async (e) => {
        e.preventDefault();
        await form.submit(async (v) => {
          const { options } = await api<PasskeyOptionsResponse>('POST', '/settings/second-factor/passkeys/options', { current: v.current });
          let credential;
          try {
            // reason: the schema states the options as a JSON object; they are WebAuthn's creation options as @simplewebauthn/server made them
            credential = await startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON });
          } catch {
            throw new Error(t('profile.pkCancelled'));
          }
          const r = await api<PasskeyRegisteredResponse>('POST', '/settings/second-factor/passkeys', { name: v.name.trim(), credential });
          props.onDone(r.recovery_codes);
        });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('profile.pkName')} required />
      <TextField form={form} name="current" type="password" label={t('profile.current')} required autoComplete="current-password" />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('profile.pkContinue')} />
      </div>
    </form>
  );
}

function RemovePasskey(props: { passkey: Passkey; onCancel: () => void; onDone: () => void }) {
  const form = useForm({ current: '' });
  return (
    <form
      noValidate
      aria-label={t('profile.pkRemoveNamed', { name: props.passkey.name })}
      onSubmit={async (e) => {
        e.preventDefault();
        await form.submit(async (v) => {
          await api('DELETE', `/settings/second-factor/passkeys/${props.passkey.id}`, { current: v.current });
          props.onDone();
        });
      }}
    >
      <p>{t('profile.pkRemoveConfirm', { name: props.passkey.name })}</p>
      <FormErrors form={form} />
      <TextField form={form} name="current" type="password" label={t('profile.current')} required autoComplete="current-password" />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('profile.pkRemove')} />
      </div>
    </form>
  );
}

/** The passkey's name in place, editable (Enter saves, Escape or Cancel keeps the old one). */
function RenamePasskey(props: { passkey: Passkey; onCancel: () => void; onDone: () => void }) {
  const form = useForm({ name: props.passkey.name });
  return (
    <form
      noValidate
      class="passkey-rename"
      aria-label={t('profile.pkRenameNamed', { name: props.passkey.name })}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={async (e) => {
        e.preventDefault();
        await form.submit(async (v) => {
          await api<PasskeyRenamedResponse>('PUT', `/settings/second-factor/passkeys/${props.passkey.id}`, { name: v.name.trim() });
          props.onDone();
        });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('profile.pkNewName')} required />
      <div class="form-actions">
        <button type="button" class="btn small" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('common.save')} />
      </div>
    </form>
  );
}
