// Single sign-on: the OpenID Connect providers of the admin sign-in (GET /auth/oidc/providers and its
// writes). The list (issuer, state, rules, Test, Edit, Delete), the redirect URL to register at the
// provider (with a copy button), the discovery test's answer (what is wrong, in the app's language),
// and create/edit with the role-mapping rules. The client secret is write-only: the form says whether
// one is stored, an empty field keeps it, "remove" sends null. Read-only roles see the list only.
import { useState } from 'preact/hooks';
import { ROLES } from '@gatehouse/common/roles.js';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { CheckField, FormErrors, SelectField, SubmitButton, TextField, useForm, type Form } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { Badge, Card, CopyButton, EmptyState, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang, word } from '../../i18n';
import { setQuery } from '../../router';
import type { ScreenProps } from '../define';
import type { OidcProviderBody, OidcProviderPatch, OidcProviderResponse, OidcProvidersResponse, OidcProviderView, OidcTestResponse } from '../../protocol';
import '../../components/admin.css';
import './sso.css';

type Mapping = NonNullable<OidcProviderBody['role_mappings']>[number];
type Result = OidcTestResponse['result'];
const CHANGES = ['oidc_provider_created', 'oidc_provider_updated', 'oidc_provider_deleted'];
const errText = (e: unknown) => String((e as Error)?.message ?? e);
const ROLE_OPTIONS = () => [...ROLES].reverse().map((r) => ({ value: r, label: t(`users.role_${r}`) }));

export default function SsoScreen({ query }: ScreenProps) {
  useLang();
  useTitle(t('sso.title'));
  const { data, error, reload } = useApi<OidcProvidersResponse>('/auth/oidc/providers', CHANGES);
  const [testing, setTesting] = useState<number | null>(null);
  const [tested, setTested] = useState<{ name: string; result: Result } | null>(null);
  const creating = query.get('new') === '1';
  const editId = Number(query.get('edit') ?? 0);
  const editing = data?.providers.find((p) => p.id === editId) ?? null;

  const test = async (p: OidcProviderView) => {
    setTesting(p.id);
    try {
      const r = await api<OidcTestResponse>('POST', `/auth/oidc/providers/${p.id}/test`);
      setTested({ name: p.name, result: r.result });
    } catch (e) {
      toast(errText(e), 'bad');
    } finally {
      setTesting(null);
    }
  };
  const remove = async (p: OidcProviderView) => {
    if (!(await confirmAction(t('sso.deleteConfirm', { name: p.name }), { confirmLabel: t('common.delete'), danger: true }))) return;
    try {
      await api('DELETE', `/auth/oidc/providers/${p.id}`);
      toast(t('sso.deleted', { name: p.name }));
      if (tested?.name === p.name) setTested(null);
      reload();
    } catch (e) {
      toast(errText(e), 'bad');
    }
  };

  const columns: Column<OidcProviderView>[] = [
    { key: 'name', label: t('sso.name'), render: (r) => <strong>{r.name}</strong> },
    { key: 'issuer', label: t('sso.issuer'), render: (r) => <code class="sso-url">{r.issuer}</code> },
    {
      key: 'status',
      label: t('sso.status'),
      render: (r) => (
        <span class="chips">
          {r.enabled ? <Badge tone="ok">{t('common.enabled')}</Badge> : <Badge tone="muted">{t('common.disabled')}</Badge>}
          {r.jit_create && <Badge tone="info">{t('sso.jitShort')}</Badge>}
          {!r.client_secret_set && <Badge tone="warn">{t('sso.noSecret')}</Badge>}
        </span>
      ),
    },
    { key: 'rules', label: t('sso.mappings'), render: (r) => t('sso.rulesCount', { n: r.role_mappings.length }) },
    {
      key: 'actions',
      label: t('common.actions'),
      render: (r) => (
        <span class="row-actions">
          <button
            type="button"
            class="btn small"
            disabled={testing === r.id}
            aria-busy={testing === r.id}
            aria-label={`${t('sso.test')}: ${r.name}`}
            onClick={() => test(r)}
          >
            {testing === r.id ? t('sso.testing') : t('sso.test')}
          </button>
          <button type="button" class="btn small" aria-label={`${t('common.edit')}: ${r.name}`} onClick={() => setQuery({ edit: r.id })}>
            {t('common.edit')}
          </button>
          <button type="button" class="btn small" aria-label={`${t('common.delete')}: ${r.name}`} onClick={() => remove(r)}>
            {t('common.delete')}
          </button>
        </span>
      ),
    },
  ];

  const done = (key: 'sso.created' | 'sso.saved', clear: 'new' | 'edit') => (p: OidcProviderView | null) => {
    setQuery({ [clear]: null });
    if (p) {
      toast(t(key, { name: p.name }));
      reload();
    }
  };

  return (
    <>
      <PageHeader title={t('sso.title')}>
        <button type="button" class="btn primary" onClick={() => setQuery({ new: '1' })}>
          {t('sso.create')}
        </button>
      </PageHeader>
      <p class="muted">{t('sso.intro')}</p>
      <ErrorBanner error={error} onRetry={reload} />
      {tested && <TestResult name={tested.name} result={tested.result} />}
      {!data ? (
        !error && <Spinner />
      ) : (
        <>
          {data.providers.length > 0 && <RedirectUrl url={data.providers[0].redirect_uri} />}
          <DataTable
            label={t('sso.title')}
            columns={columns}
            rows={data.providers}
            rowKey={(r) => r.id}
            empty={
              <EmptyState title={t('sso.emptyTitle')} text={t('sso.emptyText')}>
                <button type="button" class="btn primary write-only" onClick={() => setQuery({ new: '1' })}>
                  {t('sso.create')}
                </button>
              </EmptyState>
            }
          />
        </>
      )}
      <Modal title={t('sso.createTitle')} open={creating} onClose={() => setQuery({ new: null })} wide>
        {creating && <ProviderForm onDone={done('sso.created', 'new')} />}
      </Modal>
      <Modal title={t('sso.editTitle', { name: editing?.name ?? '' })} open={!!editing} onClose={() => setQuery({ edit: null })} wide>
        {editing && <ProviderForm provider={editing} onDone={done('sso.saved', 'edit')} />}
      </Modal>
    </>
  );
}

function RedirectUrl(props: { url: string; routes?: string[] }) {
  return (
    <Card title={t('sso.redirectTitle')} class="sso-redirect">
      <p class="hint">{t('sso.redirectHint')}</p>
      <p class="sso-redirect-row">
        <code class="sso-url" id="sso-redirect-uri">
          {props.url}
        </code>{' '}
        <CopyButton text={props.url} label={t('sso.copyRedirect')} />
      </p>
      {!!props.routes?.length && (
        <>
          <p class="hint">{t('sso.routeRedirectHint')}</p>
          <ul class="sso-route-redirects" data-testid="sso-route-redirects">
            {props.routes.map((u) => (
              <li key={u}>
                <code class="sso-url">{u}</code>
              </li>
            ))}
          </ul>
        </>
      )}
    </Card>
  );
}

function TestResult(props: { name: string; result: Result }) {
  const r = props.result;
  return (
    <div class={`banner ${r.reachable ? 'info' : 'error'} sso-test-result`} role="status" data-reachable={String(r.reachable)}>
      <p>
        <strong>{t('sso.testOf', { name: props.name })}</strong>{' '}
        {r.reachable ? <Badge tone="ok">{t('sso.testOk')}</Badge> : <Badge tone="bad">{t('sso.testFailed')}</Badge>}{' '}
        <span class="sso-test-message">{word(r.message_code, r.message)}</span>
      </p>
      <p class="hint">
        {t('sso.discoveryUrl')} <code class="sso-url">{r.discovery_url}</code>
      </p>
    </div>
  );
}

interface Values {
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  remove_secret: boolean;
  scopes: string;
  username_claim: string;
  email_claim: string;
  groups_claim: string;
  enabled: boolean;
  jit_create: boolean;
  allow_password_for_sso_users: boolean;
  allow_private: boolean;
  role_mappings: Mapping[];
}

function ProviderForm(props: { provider?: OidcProviderView; onDone: (p: OidcProviderView | null) => void }) {
  const p = props.provider;
  const form = useForm<Values>({
    name: p?.name ?? '',
    issuer: p?.issuer ?? '',
    client_id: p?.client_id ?? '',
    client_secret: '',
    remove_secret: false,
    scopes: (p?.scopes ?? ['openid', 'profile', 'email']).join(' '),
    username_claim: p?.username_claim ?? 'preferred_username',
    email_claim: p?.email_claim ?? 'email',
    groups_claim: p?.groups_claim ?? 'groups',
    enabled: p?.enabled ?? true,
    jit_create: p?.jit_create ?? false,
    allow_password_for_sso_users: p?.allow_password_for_sso_users ?? true,
    allow_private: p?.allow_private ?? false,
    role_mappings: p?.role_mappings.map((m) => ({ match: { ...m.match }, role: m.role })) ?? [],
  });
  const v = form.values;
  return (
    <form
      noValidate
      class="sso-form"
      onSubmit={async (e) => {
        e.preventDefault();
        let saved: OidcProviderView | null = null;
        const ok = await form.submit(async (x) => {
          const body: OidcProviderBody & OidcProviderPatch = {
            name: x.name,
            issuer: x.issuer,
            client_id: x.client_id,
            scopes: x.scopes.split(/[\s,]+/).filter(Boolean),
            username_claim: x.username_claim,
            email_claim: x.email_claim,
            groups_claim: x.groups_claim,
            enabled: x.enabled,
            jit_create: x.jit_create,
            allow_password_for_sso_users: x.allow_password_for_sso_users,
            allow_private: x.allow_private,
            role_mappings: x.role_mappings,
          };
          const r = p
            ? await api<OidcProviderResponse>('PUT', `/auth/oidc/providers/${p.id}`, {
                ...body,
                client_secret: x.remove_secret ? null : x.client_secret || undefined,
              })
            : await api<OidcProviderResponse>('POST', '/auth/oidc/providers', { ...body, client_secret: x.client_secret || undefined });
          saved = r.provider;
        });
        if (ok) props.onDone(saved);
      }}
    >
      <FormErrors form={form} />
      {p && <RedirectUrl url={p.redirect_uri} routes={p.route_redirect_uris} />}
      <div class="form-grid">
        <TextField form={form} name="name" label={t('sso.name')} hint={t('sso.nameHint')} required />
        <TextField form={form} name="issuer" type="url" label={t('sso.issuer')} hint={t('sso.issuerHint')} required />
        <TextField form={form} name="client_id" label={t('sso.clientId')} required autoComplete="off" />
        <div>
          <TextField
            form={form}
            name="client_secret"
            type="password"
            autoComplete="new-password"
            label={t('sso.clientSecret')}
            hint={p?.client_secret_set ? t('sso.secretKeep') : t('sso.secretHint')}
            disabled={v.remove_secret}
          />
          <p class="sso-secret-state">
            {p?.client_secret_set ? <Badge tone="ok">{t('sso.secretSet')}</Badge> : <Badge tone="muted">{t('sso.secretNotSet')}</Badge>}
          </p>
          {p?.client_secret_set && <CheckField form={form} name="remove_secret" label={t('sso.secretRemove')} also="client_secret" />}
        </div>
        <TextField form={form} name="scopes" label={t('sso.scopes')} hint={t('sso.scopesHint')} required />
      </div>
      <fieldset class="sso-claims">
        <legend>{t('sso.claims')}</legend>
        <div class="form-grid">
          <TextField form={form} name="username_claim" label={t('sso.usernameClaim')} required />
          <TextField form={form} name="email_claim" label={t('sso.emailClaim')} required />
          <TextField form={form} name="groups_claim" label={t('sso.groupsClaim')} required />
        </div>
      </fieldset>
      <MappingsEditor form={form} />
      <CheckField form={form} name="enabled" label={t('sso.enabled')} hint={t('sso.enabledHint')} />
      <CheckField form={form} name="jit_create" label={t('sso.jit')} hint={t('sso.jitHint')} />
      <CheckField form={form} name="allow_password_for_sso_users" label={t('sso.allowPassword')} hint={t('sso.allowPasswordHint')} />
      <CheckField form={form} name="allow_private" label={t('sso.allowPrivate')} hint={t('sso.allowPrivateHint')} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onDone(null)}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={p ? t('common.save') : t('sso.create')} />
      </div>
    </form>
  );
}

/** The role-mapping rules: each matches a group or an e-mail address and gives a role. */
function MappingsEditor(props: { form: Form<Values> }) {
  const { form } = props;
  const rules = form.values.role_mappings;
  const setRules = (next: Mapping[]) => form.set('role_mappings', next);
  return (
    <fieldset class="sso-mappings">
      <legend>{t('sso.mappings')}</legend>
      <p class="hint">{t('sso.mappingsHint')}</p>
      {form.errors.role_mappings && <p class="field-error">{form.errors.role_mappings}</p>}
      {rules.length === 0 && <p class="muted">{t('sso.mappingsNone')}</p>}
      <ol class="sso-rules">
        {rules.map((m, i) => {
          const kind: 'group' | 'email' = m.match.email !== undefined ? 'email' : 'group';
          const base = `role_mappings.${i}`;
          return (
            <li key={i} class="sso-rule">
              <div class="field">
                <label for={`sso-kind-${i}`}>{t('sso.matchKind')}</label>
                <select
                  id={`sso-kind-${i}`}
                  value={kind}
                  onChange={(e) => {
                    const k = e.currentTarget.value as 'group' | 'email';
                    form.set(`${base}.match`, { [k]: m.match[kind] ?? '' });
                  }}
                >
                  <option value="group">{t('sso.matchGroup')}</option>
                  <option value="email">{t('sso.matchEmail')}</option>
                </select>
              </div>
              <TextField form={form} name={`${base}.match.${kind}`} also={`${base}.match`} label={t('sso.matchValue')} required />
              <SelectField form={form} name={`${base}.role`} label={t('sso.role')} options={ROLE_OPTIONS()} />
              <button type="button" class="btn small" aria-label={t('sso.removeRule', { n: i + 1 })} onClick={() => setRules(rules.filter((_, j) => j !== i))}>
                {t('sso.removeRuleShort')}
              </button>
            </li>
          );
        })}
      </ol>
      <button type="button" class="btn small" onClick={() => setRules([...rules, { match: { group: '' }, role: 'viewer' }])}>
        {t('sso.addRule')}
      </button>
    </fieldset>
  );
}
