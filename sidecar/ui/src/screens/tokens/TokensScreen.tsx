// API tokens: list (never the token itself), create with scopes, expiry and bindings (the plaintext
// shown once with a copy button), fingerprint reset, delete. /tokens?new=1 opens the create dialog
// (the API reference links there).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { FormErrors, SelectField, SubmitButton, TextField, useForm } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { fileSafe, SecretOnce } from '../../components/secret';
import { CheckGroup } from '../../components/checkgroup';
import { MachinesPanel } from './machines';
import { useApi, useTitle } from '../../hooks';
import { fmtAgo, fmtDate, t, useLang } from '../../i18n';
import { setQuery } from '../../router';
import type { ScreenProps } from '../define';
import { SCOPES, type Scope } from '@server/http/scopes';
import type { CreateTokenBody, PeerListResponse, TokenCreatedResponse, TokenListResponse, TokenView, UsersResponse } from '../../protocol';
import '../../components/admin.css';

export const scopeLabel = (s: string) => t(`tokens.scope_${s.replace('-', '_')}`);

export default function TokensScreen({ query }: ScreenProps) {
  useLang();
  useTitle(t('tokens.title'));
  const { data, error, reload } = useApi<TokenListResponse>('/tokens', ['token_created', 'token_revoked', 'token_fingerprint_reset']);
  const creating = query.get('new') === '1';
  const machinesOf = data?.tokens.find((tk) => String(tk.id) === query.get('machines')) ?? null;
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);

  const resetFp = async (tk: TokenView) => {
    if (!(await confirmAction(t('tokens.resetConfirm', { name: tk.name }), { confirmLabel: t('tokens.resetFingerprint'), danger: false }))) return;
    try {
      await api('DELETE', `/tokens/${tk.id}/fingerprint`);
      toast(t('tokens.resetDone', { name: tk.name }));
      reload();
    } catch (e) {
      toast(String((e as Error).message), 'bad');
    }
  };
  const remove = async (tk: TokenView) => {
    if (!(await confirmAction(t('tokens.revokeConfirm', { name: tk.name }), { confirmLabel: t('tokens.revoke') }))) return;
    try {
      await api('DELETE', `/tokens/${tk.id}`);
      toast(t('tokens.revoked', { name: tk.name }));
      reload();
    } catch (e) {
      toast(String((e as Error).message), 'bad');
    }
  };

  const columns: Column<TokenView>[] = [
    { key: 'name', label: t('tokens.name'), render: (r) => <strong>{r.name}</strong> },
    { key: 'hint', label: t('tokens.hint'), render: (r) => <code>{r.token_hint}</code> },
    {
      key: 'scopes',
      label: t('tokens.scopes'),
      render: (r) => (
        <span class="chips">
          {r.scopes.map((s) => (
            <Badge key={s} tone="info">
              {s}
            </Badge>
          ))}
        </span>
      ),
    },
    {
      key: 'expires',
      label: t('tokens.expires'),
      render: (r) => (r.expired ? <Badge tone="bad">{t('tokens.expired')}</Badge> : r.expires_at ? fmtDate(r.expires_at) : t('tokens.never')),
    },
    {
      key: 'fp',
      label: t('tokens.fingerprint'),
      render: (r) => (r.fingerprint_bound ? <Badge tone="ok">{t('tokens.bound')}</Badge> : <span class="muted">{t('tokens.notBound')}</span>),
    },
    { key: 'used', label: t('tokens.lastUsed'), render: (r) => fmtAgo(r.last_used_at) },
    {
      key: 'actions',
      label: t('common.actions'),
      render: (r) => (
        <span class="row-actions">
          {r.scopes.includes('client') && (
            <button type="button" class="btn small" aria-label={t('tokens.machinesFor', { name: r.name })} onClick={() => setQuery({ machines: String(r.id) })}>
              {t('tokens.machines')}
            </button>
          )}
          {r.fingerprint_bound && (
            <button type="button" class="btn small" onClick={() => resetFp(r)}>
              {t('tokens.resetFingerprint')}
            </button>
          )}
          <button type="button" class="btn small" aria-label={`${t('tokens.revoke')}: ${r.name}`} onClick={() => remove(r)}>
            {t('tokens.revoke')}
          </button>
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader title={t('tokens.title')}>
        <button type="button" class="btn primary" onClick={() => setQuery({ new: '1' })}>
          {t('tokens.create')}
        </button>
      </PageHeader>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <DataTable
          label={t('tokens.title')}
          columns={columns}
          rows={data.tokens}
          rowKey={(r) => r.id}
          empty={
            <EmptyState title={t('tokens.emptyTitle')} text={t('tokens.emptyText')}>
              <button type="button" class="btn primary" onClick={() => setQuery({ new: '1' })}>
                {t('tokens.create')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Modal title={t('tokens.createTitle')} open={creating && !created} onClose={() => setQuery({ new: null })}>
        <CreateToken
          onCreated={(token, name) => {
            setCreated({ token, name });
            setQuery({ new: null });
            reload();
          }}
          onCancel={() => setQuery({ new: null })}
        />
      </Modal>
      <Modal
        title={machinesOf ? t('tokens.machinesOf', { name: machinesOf.name }) : t('tokens.machines')}
        open={!!machinesOf}
        onClose={() => setQuery({ machines: null })}
        wide
      >
        {machinesOf && <MachinesPanel token={machinesOf} onChange={reload} />}
      </Modal>
      <Modal title={t('tokens.createdTitle')} open={!!created} onClose={() => setCreated(null)}>
        {created && (
          <div class="token-once">
            <p class="banner warn" role="note">
              {t('tokens.onceWarning')}
            </p>
            <SecretOnce id="new-token" label={t('tokens.tokenLabel')} value={created.token} filename={`gatehouse-token-${fileSafe(created.name)}.txt`} />
            <div class="form-actions">
              <button type="button" class="btn primary" onClick={() => setCreated(null)}>
                {t('tokens.done')}
              </button>
            </div>
          </div>
        )}
      </Modal>
    </>
  );
}

function CreateToken(props: { onCreated: (token: string, name: string) => void; onCancel: () => void }) {
  const form = useForm<{ name: string; scopes: Scope[]; expires_at: string; user_id: number | null; peer_id: number | null }>({
    name: '',
    scopes: [],
    expires_at: '',
    user_id: null,
    peer_id: null,
  });
  const users = useApi<UsersResponse>('/users');
  const peers = useApi<PeerListResponse>('/peers?limit=1000');
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        let token = '';
        const ok = await form.submit(async (v) => {
          const exp = v.expires_at ? new Date(v.expires_at).getTime() : null;
          const body: CreateTokenBody = { name: v.name, scopes: v.scopes, expires_at: exp, user_id: v.user_id, peer_id: v.peer_id };
          const r = await api<TokenCreatedResponse>('POST', '/tokens', body);
          token = r.token;
        });
        if (ok) props.onCreated(token, form.values.name);
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('tokens.name')} required />
      <CheckGroup form={form} name="scopes" label={t('tokens.scopes')} options={SCOPES.map((s) => ({ value: s, label: `${s} · ${scopeLabel(s)}` }))} />
      <TextField form={form} name="expires_at" type="datetime-local" label={t('tokens.expires')} hint={t('tokens.expiresHint')} />
      <div class="form-grid">
        <SelectField
          form={form}
          name="user_id"
          numeric
          label={t('tokens.user')}
          hint={t('tokens.userHint')}
          empty={t('tokens.noBinding')}
          options={(users.data?.users ?? []).map((u) => ({ value: u.id, label: u.username }))}
        />
        <SelectField
          form={form}
          name="peer_id"
          numeric
          label={t('tokens.peer')}
          hint={t('tokens.peerHint')}
          empty={t('tokens.noBinding')}
          options={(peers.data?.peers ?? []).map((p) => ({ value: p.id, label: p.name }))}
        />
      </div>
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('tokens.create')} />
      </div>
    </form>
  );
}
