// Route login (the API's route auth) of one route (/routes/:id/auth): sign-in method, two-factor, the configured account,
// session duration, the route's users (user_ids) with their own TOTP, TOTP set-up with the QR code
// and the confirmation code, branding with logo and background uploads, and a live preview of the
// login page (GET /routes/:id/auth/preview in an iframe, with the values typed but not saved yet).
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, qs } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { CheckField, fid, FormErrors, SelectField, SubmitButton, TextArea, TextField, useForm } from '../../components/form';
import { Badge, Card, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { fileSafe, SecretOnce } from '../../components/secret';
import { useApi, useTitle } from '../../hooks';
import { lang as uiLang, t, useLang, type Lang } from '../../i18n';
import { langNames } from '../../components/layout';
import type { ScreenProps } from '../define';
import './routeauth.css';

import type {
  OidcProvidersResponse,
  Route,
  RouteAuthBody,
  RouteAuthOrNullResponse,
  RouteAuthView as RouteAuth,
  RouteResponse,
  TotpSetupResponse,
  UsersResponse,
} from '../../protocol';

const DURATIONS: [string, number][] = [
  ['d1h', 3_600_000],
  ['d12h', 43_200_000],
  ['d24h', 86_400_000],
  ['d7d', 604_800_000],
  ['d30d', 2_592_000_000],
];
const COLOR = /^#[0-9a-fA-F]{6}$/;
const AUTH_EVENTS = ['route_auth_created', 'route_auth_updated', 'route_auth_deleted'];

/** Whether the configuration asks for TOTP, now or once a pending switch to TOTP is verified. */
function usesTotp(a: RouteAuth | null): boolean {
  return (
    !!a &&
    (a.method === 'totp' || (a.two_factor_enabled && a.two_factor_method === 'totp') || a.pending_method === 'totp' || a.pending_two_factor_method === 'totp')
  );
}

/** The method label of the route-auth methods. */
const METHOD_KEY: Record<RouteAuth['method'], string> = { email_password: 'mEmailPassword', email_code: 'mEmailCode', totp: 'mTotp', oidc: 'mOidc' };
/** The methods a second factor can follow. */
const firstFactor = (m: string) => m === 'email_password' || m === 'oidc';
/** An allow-list typed one entry a line (or separated by commas) as the API's list. */
const listOf = (text: string | undefined) =>
  (text ?? '')
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);

function totpState(active: boolean, pending: boolean) {
  return active ? (
    <Badge tone="ok">{t('routeauth.totpActive')}</Badge>
  ) : pending ? (
    <Badge tone="warn">{t('routeauth.totpPending')}</Badge>
  ) : (
    <Badge>{t('routeauth.totpNone')}</Badge>
  );
}

/** TOTP set-up of the configured account (userId undefined) or of one route user: QR code, secret, confirmation code. */
function TotpSetup(props: { routeId: number; userId?: number; who: string; active: boolean; onDone: () => void }) {
  const [setup, setSetup] = useState<TotpSetupResponse | null>(null);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const form = useForm({ token: '' });
  const body = props.userId ? { user_id: props.userId } : {};
  const start = async () => {
    setBusy(true);
    setErr(null);
    try {
      setSetup(await api<TotpSetupResponse>('POST', `/routes/${props.routeId}/auth/totp-setup`, body));
      form.setAll({ token: '' });
    } catch (e) {
      setErr((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const idp = `totp-${props.userId ?? 'account'}`;
  return (
    <div class="ra-totp" data-testid={idp}>
      {!setup && (
        <button type="button" class="btn" onClick={start} disabled={busy} aria-busy={busy}>
          {busy ? t('common.loading') : props.active ? t('routeauth.totpRedo') : t('routeauth.totpSetup')}
        </button>
      )}
      {err && (
        <p class="field-error" role="alert">
          {err}
        </p>
      )}
      {setup && (
        <form
          noValidate
          class="ra-totp-setup"
          aria-label={t('routeauth.totpFor', { who: props.who })}
          onSubmit={async (e) => {
            e.preventDefault();
            const ok = await form.submit((v) => api('POST', `/routes/${props.routeId}/auth/totp-verify`, { token: v.token.trim(), ...body }));
            if (ok) {
              toast(t('routeauth.totpConfirmed'));
              setSetup(null);
              props.onDone();
            }
          }}
        >
          <h3>{t('routeauth.totpFor', { who: props.who })}</h3>
          <p>{t('routeauth.totpScan')}</p>
          <img class="qr" src={setup.qr_code} alt={t('routeauth.qrAlt')} width={200} height={200} />
          <SecretOnce
            id={`${idp}-secret`}
            label={t('routeauth.secret')}
            value={setup.secret}
            filename={`totp-secret-${fileSafe(props.who)}.txt`}
            valueClass="ra-secret"
          />
          <SecretOnce
            id={`${idp}-otpauth`}
            label={t('routeauth.otpauth')}
            value={setup.otpauth_url}
            filename={`totp-otpauth-${fileSafe(props.who)}.txt`}
            valueClass="ra-otpauth"
          />
          <FormErrors form={form} />
          <TextField form={form} name="token" label={t('routeauth.code')} inputMode="numeric" autoComplete="one-time-code" required />
          <div class="form-actions">
            <button type="button" class="btn" onClick={() => setSetup(null)}>
              {t('common.cancel')}
            </button>
            <SubmitButton form={form} label={t('routeauth.confirmCode')} />
          </div>
        </form>
      )}
    </div>
  );
}

function ImageField(props: {
  routeId: number;
  kind: 'logo' | 'bg-image';
  label: string;
  currentLabel: string;
  has: boolean;
  version: string;
  enabled: boolean;
  onDone: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const id = `ra-${props.kind}`;
  const src = `/api/v1/routes/${props.routeId}/branding/${props.kind}?v=${encodeURIComponent(props.version)}`;
  return (
    <div class={`field${err ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      <div class="ra-image">
        {props.has ? (
          <img src={src} alt={props.currentLabel} class="ra-thumb" data-testid={`current-${props.kind}`} />
        ) : (
          <span class="muted">
            {props.currentLabel}: {t('routeauth.noImage')}
          </span>
        )}
        {props.has && (
          <button
            type="button"
            class="btn small"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await api('DELETE', `/routes/${props.routeId}/branding/${props.kind}`);
                toast(t('routeauth.imageRemoved'));
                props.onDone();
              } catch (e) {
                setErr((e as Error).message);
              } finally {
                setBusy(false);
              }
            }}
          >
            {t('routeauth.removeImage')}
          </button>
        )}
      </div>
      <input
        id={id}
        type="file"
        accept="image/png,image/jpeg,image/gif,image/webp"
        disabled={!props.enabled || busy}
        aria-invalid={err ? 'true' : undefined}
        aria-describedby={`${id}-hint${err ? ` ${id}-err` : ''}`}
        onChange={async (e) => {
          const input = e.currentTarget;
          const file = input.files?.[0];
          if (!file) return;
          setBusy(true);
          setErr(null);
          const fd = new FormData();
          fd.append('file', file, file.name);
          try {
            await api('POST', `/routes/${props.routeId}/branding/${props.kind}`, fd);
            toast(t('routeauth.uploaded'));
            props.onDone();
          } catch (ex) {
            setErr(ex instanceof ApiError ? (ex.fields.file ? `${ex.message} (${ex.fields.file})` : ex.message) : String(ex));
          } finally {
            setBusy(false);
            input.value = '';
          }
        }}
      />
      <p class="hint" id={`${id}-hint`}>
        {props.enabled ? t('routeauth.uploadHint') : t('routeauth.uploadAfterSave')}
      </p>
      {err && (
        <p class="field-error" id={`${id}-err`} role="alert">
          {err}
        </p>
      )}
    </div>
  );
}

function UsersCard(props: { route: Route; auth: RouteAuth | null; onDone: () => void }) {
  const users = useApi<UsersResponse>('/users', ['user_created', 'user_deleted', 'user_updated']);
  const [sel, setSel] = useState<Set<number>>(new Set(props.route.user_ids ?? []));
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  useEffect(() => setSel(new Set(props.route.user_ids ?? [])), [(props.route.user_ids ?? []).join(',')]);
  const byId = new Map((props.auth?.users ?? []).map((u) => [u.user_id, u]));
  const totp = usesTotp(props.auth);
  return (
    <Card title={t('routeauth.users')}>
      <p class="hint">{t('routeauth.usersHint')}</p>
      {users.error ? (
        <p class="muted">{t('routeauth.usersUnavailable')}</p>
      ) : !users.data ? (
        <Spinner />
      ) : users.data.users.length === 0 ? (
        <p class="muted">{t('routeauth.noUsers')}</p>
      ) : (
        <>
          <fieldset class={`ra-users${err ? ' has-error' : ''}`} id={fid('user_ids')} aria-describedby={err ? 'ra-users-err' : undefined}>
            <legend class="sr-only">{t('routeauth.users')}</legend>
            {users.data.users.map((u) => {
              const ru = byId.get(u.id);
              return (
                <div class="ra-user" key={u.id}>
                  <label class="ra-user-name">
                    <input
                      type="checkbox"
                      checked={sel.has(u.id)}
                      onChange={() => {
                        const n = new Set(sel);
                        if (n.has(u.id)) n.delete(u.id);
                        else n.add(u.id);
                        setSel(n);
                      }}
                    />{' '}
                    {u.username}
                    {u.email && <span class="muted"> · {u.email}</span>}
                  </label>
                  {ru && totp && (
                    <div class="ra-user-totp">
                      {totpState(ru.totp_active, ru.totp_setup_pending)}
                      <TotpSetup routeId={props.route.id} userId={u.id} who={u.username} active={ru.totp_active} onDone={props.onDone} />
                    </div>
                  )}
                </div>
              );
            })}
          </fieldset>
          {err && (
            <p class="field-error" id="ra-users-err" role="alert">
              {err}
            </p>
          )}
          <div class="form-actions">
            <button
              type="button"
              class="btn"
              disabled={busy}
              aria-busy={busy}
              onClick={async () => {
                setBusy(true);
                setErr(null);
                try {
                  await api('PUT', `/routes/${props.route.id}`, { user_ids: [...sel].sort((a, b) => a - b) });
                  toast(t('routeauth.usersSaved'));
                  props.onDone();
                } catch (e) {
                  setErr(e instanceof ApiError && e.fields.user_ids ? `${e.message} (${e.fields.user_ids})` : (e as Error).message);
                } finally {
                  setBusy(false);
                }
              }}
            >
              {busy ? t('common.loading') : t('routeauth.saveUsers')}
            </button>
          </div>
        </>
      )}
    </Card>
  );
}

function Editor(props: { route: Route; auth: RouteAuth | null; reload: () => void }) {
  const { route, auth: a } = props;
  const form = useForm({
    // a switch waiting for TOTP verification shows as what was saved
    method: a?.pending_method ?? a?.method ?? 'email_password',
    two_factor_enabled: a?.pending_method ? a.pending_two_factor_method !== null : (a?.two_factor_enabled ?? false),
    two_factor_method: (a?.pending_method ? a.pending_two_factor_method : a?.two_factor_method) ?? 'totp',
    email: a?.email ?? '',
    password: '',
    session_max_age: a?.session_max_age ?? 86_400_000,
    oidc_provider_id: a?.oidc_provider_id ?? null,
    allowed_emails: (a?.allowed_emails ?? []).join('\n'),
    allowed_groups: (a?.allowed_groups ?? []).join('\n'),
    title: a?.title ?? '',
    description: a?.description ?? '',
    primary_color: a?.primary_color ?? '',
    bg_color: a?.bg_color ?? '',
  });
  const v = form.values;
  // the providers to choose from (a role that may not list them sees the one saved, by id)
  const providers = useApi<OidcProvidersResponse>('/auth/oidc/providers', ['oidc_provider_created', 'oidc_provider_updated', 'oidc_provider_deleted']);
  const [pvLang, setPvLang] = useState<Lang>(uiLang.get());
  const previewSrc = `/api/v1/routes/${route.id}/auth/preview${qs({
    lang: pvLang,
    method: v.method,
    title: (v.title ?? '').slice(0, 100),
    description: (v.description ?? '').slice(0, 500),
    primary_color: COLOR.test(v.primary_color ?? '') ? v.primary_color : '',
    bg_color: COLOR.test(v.bg_color ?? '') ? v.bg_color : '',
    v: a?.updated_at ?? '0',
  })}`;
  // An empty parameter clears the stored value in the preview: send the empty ones explicitly.
  const fullSrc =
    previewSrc +
    ['title', 'description', 'primary_color', 'bg_color']
      .filter((k) => !new URLSearchParams(previewSrc.split('?')[1] ?? '').has(k))
      .map((k) => `&${k}=`)
      .join('');
  const [shown, setShown] = useState(fullSrc);
  useEffect(() => {
    const tm = setTimeout(() => setShown(fullSrc), 350);
    return () => clearTimeout(tm);
  }, [fullSrc]);

  const save = async (e: Event) => {
    e.preventDefault();
    const ok = await form.submit(async (x) => {
      const twoFactor = firstFactor(x.method) && !!x.two_factor_enabled;
      const oidc = x.method === 'oidc';
      const body: RouteAuthBody = {
        method: x.method,
        two_factor_enabled: twoFactor,
        two_factor_method: twoFactor ? x.two_factor_method : null,
        email: x.email,
        ...(x.password ? { password: x.password } : {}),
        session_max_age: Number(x.session_max_age),
        ...(oidc ? { oidc_provider_id: x.oidc_provider_id, allowed_emails: listOf(x.allowed_emails), allowed_groups: listOf(x.allowed_groups) } : {}),
        title: x.title?.trim() || null,
        description: x.description?.trim() || null,
        primary_color: x.primary_color?.trim() || null,
        bg_color: x.bg_color?.trim() || null,
      };
      await api('POST', `/routes/${route.id}/auth`, body);
    });
    if (ok) {
      form.set('password', '');
      toast(t('routeauth.saved'));
      props.reload();
    }
  };
  const remove = async () => {
    if (!(await confirmAction(t('routeauth.removeConfirm', { domain: route.domain }), { confirmLabel: t('routeauth.remove') }))) return;
    try {
      await api('DELETE', `/routes/${route.id}/auth`);
      toast(t('routeauth.removed'));
      props.reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    }
  };

  return (
    <>
      <p class={`banner ${a ? 'info' : 'muted-banner'}`} data-testid="ra-state" data-on={a ? 'yes' : 'no'}>
        {a ? t('routeauth.active') : t('routeauth.inactive')}
      </p>
      {a?.pending_method && (
        <p class="banner warn" role="status" data-testid="ra-pending">
          {t('routeauth.pendingSwitch', { now: t(`routeauth.${METHOD_KEY[a.method]}`), next: t(`routeauth.${METHOD_KEY[a.pending_method]}`) })}
        </p>
      )}
      <div class="ra-layout">
        <div class="ra-main">
          <form onSubmit={save} noValidate aria-label={t('routeauth.login')}>
            <Card title={t('routeauth.login')}>
              <FormErrors form={form} />
              <SelectField
                form={form}
                name="method"
                label={t('routeauth.method')}
                options={[
                  { value: 'email_password', label: t('routeauth.mEmailPassword') },
                  { value: 'email_code', label: t('routeauth.mEmailCode') },
                  { value: 'totp', label: t('routeauth.mTotp') },
                  { value: 'oidc', label: t('routeauth.mOidc') },
                ]}
              />
              {v.method === 'oidc' && (
                <>
                  <SelectField
                    form={form}
                    name="oidc_provider_id"
                    numeric
                    label={t('routeauth.provider')}
                    empty={t('routeauth.providerChoose')}
                    hint={t('routeauth.providerHint', { uri: `${route.https_enabled ? 'https' : 'http'}://${route.domain}/route-auth/oidc/callback` })}
                    options={(
                      providers.data?.providers ?? (a?.oidc_provider_id ? [{ id: a.oidc_provider_id, name: `#${a.oidc_provider_id}`, enabled: true }] : [])
                    ).map((p) => ({ value: p.id, label: p.enabled ? p.name : `${p.name} (${t('routeauth.providerOff')})` }))}
                  />
                  <TextArea form={form} name="allowed_emails" label={t('routeauth.allowedEmails')} hint={t('routeauth.allowedEmailsHint')} rows={3} />
                  <TextArea form={form} name="allowed_groups" label={t('routeauth.allowedGroups')} hint={t('routeauth.allowedGroupsHint')} rows={3} />
                </>
              )}
              {firstFactor(v.method) && <CheckField form={form} name="two_factor_enabled" label={t('routeauth.twoFactor')} />}
              {firstFactor(v.method) && v.two_factor_enabled && (
                <SelectField
                  form={form}
                  name="two_factor_method"
                  label={t('routeauth.secondFactor')}
                  options={[
                    { value: 'totp', label: t('routeauth.fTotp') },
                    { value: 'email_code', label: t('routeauth.fEmailCode') },
                  ]}
                />
              )}
              <TextField form={form} name="email" type="email" label={t('routeauth.email')} autoComplete="off" required />
              {v.method === 'email_password' && (
                <TextField
                  form={form}
                  name="password"
                  type="password"
                  label={t('routeauth.password')}
                  autoComplete="new-password"
                  hint={a?.password_set ? t('routeauth.passwordKeep') : t('routeauth.passwordNew')}
                  required={!a?.password_set}
                />
              )}
              <SelectField
                form={form}
                name="session_max_age"
                numeric
                label={t('routeauth.session')}
                options={DURATIONS.map(([k, ms]) => ({ value: ms, label: t(`routeauth.${k}`) }))}
              />
            </Card>
            <Card title={t('routeauth.branding')}>
              <TextField form={form} name="title" label={t('routeauth.pageTitle')} />
              <TextArea form={form} name="description" label={t('routeauth.description')} rows={2} />
              <div class="form-grid">
                <TextField form={form} name="primary_color" label={t('routeauth.primary')} hint={t('routeauth.colorHint')} />
                <TextField form={form} name="bg_color" label={t('routeauth.background')} hint={t('routeauth.colorHint')} />
              </div>
            </Card>
            <div class="form-actions ra-actions">
              {a && (
                <button type="button" class="btn" onClick={remove}>
                  {t('routeauth.remove')}
                </button>
              )}
              <SubmitButton form={form} label={a ? t('routeauth.save') : t('routeauth.create')} />
            </div>
          </form>
          <Card title={`${t('routeauth.logo')} · ${t('routeauth.bgImage')}`}>
            <ImageField
              routeId={route.id}
              kind="logo"
              label={t('routeauth.logo')}
              currentLabel={t('routeauth.currentLogo')}
              has={!!a?.logo}
              version={a?.updated_at ?? ''}
              enabled={!!a}
              onDone={props.reload}
            />
            <ImageField
              routeId={route.id}
              kind="bg-image"
              label={t('routeauth.bgImage')}
              currentLabel={t('routeauth.currentBg')}
              has={!!a?.bg_image}
              version={a?.updated_at ?? ''}
              enabled={!!a}
              onDone={props.reload}
            />
          </Card>
          <Card title={t('routeauth.totp')}>
            {!a ? (
              <p class="muted">{t('routeauth.totpAfterSave')}</p>
            ) : !usesTotp(a) ? (
              <p class="muted">{t('routeauth.totpNone')}</p>
            ) : (
              <>
                {!a.totp_active && <p class="hint">{t('routeauth.totpNeeded')}</p>}
                <p>
                  {a.email} · {totpState(a.totp_active, a.totp_setup_pending)}
                </p>
                <TotpSetup routeId={route.id} who={a.email || t('routeauth.account')} active={a.totp_active} onDone={props.reload} />
              </>
            )}
          </Card>
          <UsersCard route={route} auth={a} onDone={props.reload} />
        </div>
        <aside class="ra-preview-col" aria-label={t('routeauth.preview')}>
          <Card title={t('routeauth.preview')}>
            <p class="hint">{t('routeauth.previewHint')}</p>
            <label class="ra-pv-lang">
              {t('routeauth.previewLang')}{' '}
              <select value={pvLang} onChange={(e) => setPvLang(e.currentTarget.value as Lang)}>
                {(['en', 'de'] as const).map((l) => (
                  <option key={l} value={l}>
                    {langNames[l]}
                  </option>
                ))}
              </select>
            </label>
            <iframe class="ra-preview" src={shown} title={t('routeauth.previewTitle')} loading="lazy" />
          </Card>
        </aside>
      </div>
    </>
  );
}

export default function RouteAuthScreen({ params }: ScreenProps) {
  useLang();
  const id = Number(params.id);
  const route = useApi<RouteResponse>(`/routes/${id}`, ['route_updated', 'route_deleted']);
  const auth = useApi<RouteAuthOrNullResponse>(`/routes/${id}/auth`, AUTH_EVENTS);
  const r = route.data?.route;
  useTitle(r ? t('routeauth.titleFor', { domain: r.domain }) : t('routeauth.title'));
  const reload = () => {
    auth.reload();
    route.reload();
  };
  const a = auth.data?.route_auth ?? null;
  return (
    <>
      <PageHeader title={r ? t('routeauth.titleFor', { domain: r.domain }) : t('routeauth.title')} back={`/routes/${id}`} />
      <ErrorBanner error={route.error ?? auth.error} onRetry={reload} />
      {!r || !auth.data ? (
        !(route.error ?? auth.error) && <Spinner />
      ) : (
        <>
          <p class="ra-intro">{t('routeauth.intro')}</p>
          {r.route_type !== 'http' && <p class="banner error">{t('routeauth.notHttp')}</p>}
          {r.basic_auth_user && <p class="banner error">{t('routeauth.basicAuth')}</p>}
          <Editor key={`${id}-${a ? 'on' : 'off'}`} route={r} auth={a} reload={reload} />
        </>
      )}
    </>
  );
}
