// Profile: the account's second factor (GET /settings/second-factor and its writes). Set up a TOTP
// (password, then the QR code and the key, then a code from the app), see the recovery codes once,
// renew them, or remove the TOTP (refused while the policy requires one: a new set-up replaces it).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextField, useForm } from '../../components/form';
import { SecretOnce } from '../../components/secret';
import { Badge, Card, ErrorBanner, Spinner } from '../../components/ui';
import { useApi } from '../../hooks';
import { t } from '../../i18n';
import { user } from '../../session';
import type { AccountTotpSetupResponse, RecoveryCodesResponse, SecondFactorStatusResponse } from '../../protocol';

type Setup = AccountTotpSetupResponse['setup'];

export function SecondFactorCard() {
  const { data, error, reload } = useApi<SecondFactorStatusResponse>('/settings/second-factor');
  const [setup, setSetup] = useState<Setup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [action, setAction] = useState<'setup' | 'codes' | 'remove' | null>(null);
  const st = data?.second_factor;
  const done = (c: string[] | null) => {
    setSetup(null);
    setAction(null);
    setCodes(c);
    reload();
  };
  return (
    <Card title={t('profile.secondFactor')} class="second-factor">
      <ErrorBanner error={error} onRetry={reload} />
      {!st ? (
        !error && <Spinner />
      ) : (
        <>
          <p>
            {st.totp_active || st.passkeys > 0 ? (
              <Badge tone="ok">{t('profile.sfOn')}</Badge>
            ) : (
              <Badge tone={st.required ? 'bad' : 'muted'}>{t('profile.sfOff')}</Badge>
            )}{' '}
            {st.totp_active
              ? t('profile.sfCodesLeft', { n: st.recovery_codes_left })
              : st.passkeys > 0
                ? `${t('profile.sfByPasskey')} ${t('profile.sfCodesLeft', { n: st.recovery_codes_left })}`
                : st.required
                  ? t('profile.sfRequired')
                  : t('profile.sfHint')}
          </p>
          {codes && <RecoveryCodes codes={codes} onClose={() => setCodes(null)} />}
          {setup ? (
            <TotpEnrol setup={setup} onCancel={() => setSetup(null)} onDone={(c) => done(c)} />
          ) : action ? (
            <PasswordStep
              action={action}
              onCancel={() => setAction(null)}
              onSetup={(s) => {
                setAction(null);
                setSetup(s);
              }}
              onCodes={(c) => done(c)}
              onRemoved={() => {
                done(null);
                toast(t('profile.sfRemoved'));
              }}
            />
          ) : (
            <div class="form-actions">
              <button type="button" class="btn primary" onClick={() => setAction('setup')}>
                {st.totp_active ? t('profile.sfReplace') : t('profile.sfSetUp')}
              </button>
              {(st.totp_active || st.passkeys > 0) && (
                <button type="button" class="btn" onClick={() => setAction('codes')}>
                  {t('profile.sfNewCodes')}
                </button>
              )}
              {st.totp_active && (!st.required || st.passkeys > 0) && (
                <button type="button" class="btn danger" onClick={() => setAction('remove')}>
                  {t('profile.sfRemove')}
                </button>
              )}
            </div>
          )}
        </>
      )}
    </Card>
  );
}

/** Every write but the activation asks for the password first. */
function PasswordStep(props: {
  action: 'setup' | 'codes' | 'remove';
  onCancel: () => void;
  onSetup: (s: Setup) => void;
  onCodes: (c: string[]) => void;
  onRemoved: () => void;
}) {
  const form = useForm({ current: '' });
  return (
    <form
      noValidate
      aria-label={t(`profile.sfAction_${props.action}`)}
      onSubmit={async (e) => {
        e.preventDefault();
        if (props.action === 'remove' && !(await confirmAction(t('profile.sfRemoveConfirm'), { danger: true, confirmLabel: t('profile.sfRemove') }))) return;
        await form.submit(async (v) => {
          if (props.action === 'setup')
            props.onSetup((await api<AccountTotpSetupResponse>('POST', '/settings/second-factor/totp', { current: v.current })).setup);
          else if (props.action === 'codes')
            props.onCodes((await api<RecoveryCodesResponse>('POST', '/settings/second-factor/recovery-codes', { current: v.current })).recovery_codes);
          else {
            await api('DELETE', '/settings/second-factor/totp', { current: v.current });
            props.onRemoved();
          }
        });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="current" type="password" label={t('profile.current')} required autoComplete="current-password" />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t(`profile.sfAction_${props.action}`)} />
      </div>
    </form>
  );
}

function TotpEnrol(props: { setup: Setup; onCancel: () => void; onDone: (codes: string[]) => void }) {
  const form = useForm({ token: '' });
  const who = user.get()?.username ?? 'account';
  return (
    <form
      noValidate
      class="ra-totp-setup"
      aria-label={t('profile.sfSetUp')}
      onSubmit={async (e) => {
        e.preventDefault();
        await form.submit(async (v) => {
          const r = await api<RecoveryCodesResponse>('POST', '/settings/second-factor/totp/verify', { token: v.token.trim() });
          toast(t('profile.sfActivated'));
          props.onDone(r.recovery_codes);
        });
      }}
    >
      <p>{t('profile.sfScan')}</p>
      <img class="qr" src={props.setup.qr_code} alt={t('profile.sfQrAlt')} width={200} height={200} />
      <SecretOnce
        id="account-totp-secret"
        label={t('profile.sfKey')}
        value={props.setup.secret}
        filename={`gatehouse-totp-${who}.txt`}
        valueClass="ra-secret"
      />
      <FormErrors form={form} />
      <TextField form={form} name="token" label={t('profile.sfCode')} inputMode="numeric" autoComplete="one-time-code" required />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('profile.sfActivate')} />
      </div>
    </form>
  );
}

/** The recovery codes, shown once (also after the first passkey: PasskeysCard.tsx). */
export function RecoveryCodes(props: { codes: string[]; onClose: () => void }) {
  const who = user.get()?.username ?? 'account';
  return (
    <div class="recovery-codes" role="region" aria-label={t('profile.sfCodesTitle')}>
      <h3>{t('profile.sfCodesTitle')}</h3>
      <p>{t('profile.sfCodesOnce')}</p>
      <SecretOnce
        id="recovery-codes"
        label={t('profile.sfCodesTitle')}
        value={props.codes.join('\n')}
        multiline
        filename={`gatehouse-recovery-codes-${who}.txt`}
      />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onClose}>
          {t('profile.sfCodesSaved')}
        </button>
      </div>
    </div>
  );
}
