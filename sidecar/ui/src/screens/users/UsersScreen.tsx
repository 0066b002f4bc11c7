// Users (admins only): list, create, edit (username, email, role, language), delete, and a new
// random password returned once by POST /users/:id/reset-password, and a reset of a lost second factor
// (DELETE /users/:id/second-factor).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { FormErrors, SelectField, SubmitButton, TextField, useForm } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { fileSafe, SecretOnce } from '../../components/secret';
import { useApi, useTitle } from '../../hooks';
import { fmtAgo, t, useLang } from '../../i18n';
import { user as me } from '../../session';
import { useStore } from '../../store';
import '../../components/admin.css';

import { ROLES } from '@gatehouse/common/roles.js';
import type { CreateUserBody, ResetPasswordResponse, SecondFactorResetResponse, UsersResponse } from '../../protocol';

/** A user as the list shows it (with whether a TOTP second factor is on). */
type UserRow = UsersResponse['users'][number];

/** Highest first, as a person picks them. */
const ROLE_OPTIONS = () => [...ROLES].reverse().map((r) => ({ value: r, label: t(`users.role_${r}`) }));
const LANG_OPTIONS = [
  { value: 'en', label: 'English' },
  { value: 'de', label: 'Deutsch' },
];

export default function UsersScreen() {
  useLang();
  useTitle(t('users.title'));
  const self = useStore(me);
  const { data, error, reload } = useApi<UsersResponse>('/users', ['user_created', 'user_updated', 'user_deleted']);
  const [editing, setEditing] = useState<UserRow | 'new' | null>(null);
  const [newPassword, setNewPassword] = useState<{ name: string; password: string } | null>(null);

  const remove = async (u: UserRow) => {
    if (!(await confirmAction(t('users.deleteConfirm', { name: u.username }), { confirmLabel: t('users.delete') }))) return;
    try {
      await api('DELETE', `/users/${u.id}`);
      toast(t('users.deleted', { name: u.username }));
      reload();
    } catch (e) {
      toast(String((e as Error).message), 'bad');
    }
  };
  const resetPw = async (u: UserRow) => {
    if (!(await confirmAction(t('users.resetConfirm', { name: u.username }), { confirmLabel: t('users.resetPassword') }))) return;
    try {
      const r = await api<ResetPasswordResponse>('POST', `/users/${u.id}/reset-password`);
      setNewPassword({ name: u.username, password: r.password });
    } catch (e) {
      toast(String((e as Error).message), 'bad');
    }
  };

  const resetSecondFactor = async (u: UserRow) => {
    if (!(await confirmAction(t('users.sfResetConfirm', { name: u.username }), { confirmLabel: t('users.sfReset'), danger: true }))) return;
    try {
      await api<SecondFactorResetResponse>('DELETE', `/users/${u.id}/second-factor`);
      toast(t('users.sfResetDone', { name: u.username }));
      reload();
    } catch (e) {
      toast(String((e as Error).message), 'bad');
    }
  };

  const columns: Column<UserRow>[] = [
    {
      key: 'username',
      label: t('users.username'),
      render: (r) => (
        <>
          <strong>{r.username}</strong>
          {r.id === self?.id && (
            <>
              {' '}
              <Badge>{t('users.you')}</Badge>
            </>
          )}
          {r.totp_active && (
            <>
              {' '}
              <Badge tone="ok">{t('users.sfOn')}</Badge>
            </>
          )}
          {r.must_change_password && (
            <>
              {' '}
              <Badge tone="warn">{t('users.mustChange')}</Badge>
            </>
          )}
        </>
      ),
    },
    { key: 'email', label: t('users.email'), render: (r) => r.email ?? '–' },
    { key: 'role', label: t('users.role'), render: (r) => <Badge tone={r.role === 'admin' ? 'info' : 'muted'}>{t(`users.role_${r.role}`)}</Badge> },
    { key: 'lang', label: t('users.language'), render: (r) => (r.language === 'de' ? 'Deutsch' : 'English') },
    { key: 'login', label: t('users.lastLogin'), render: (r) => fmtAgo(r.last_login_at) },
    {
      key: 'actions',
      label: t('common.actions'),
      render: (r) => (
        <span class="row-actions">
          <button type="button" class="btn small" aria-label={`${t('users.edit')}: ${r.username}`} onClick={() => setEditing(r)}>
            {t('users.edit')}
          </button>
          <button type="button" class="btn small" aria-label={`${t('users.resetPassword')}: ${r.username}`} onClick={() => resetPw(r)}>
            {t('users.resetPassword')}
          </button>
          {r.totp_active && (
            <button type="button" class="btn small" aria-label={`${t('users.sfReset')}: ${r.username}`} onClick={() => resetSecondFactor(r)}>
              {t('users.sfReset')}
            </button>
          )}
          {r.id !== self?.id && (
            <button type="button" class="btn small" aria-label={`${t('users.delete')}: ${r.username}`} onClick={() => remove(r)}>
              {t('users.delete')}
            </button>
          )}
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader title={t('users.title')}>
        <button type="button" class="btn primary" onClick={() => setEditing('new')}>
          {t('users.create')}
        </button>
      </PageHeader>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <DataTable
          label={t('users.title')}
          columns={columns}
          rows={data.users}
          rowKey={(r) => r.id}
          empty={<EmptyState title={t('users.emptyTitle')} text={t('users.emptyText')} />}
        />
      )}
      <Modal
        title={editing === 'new' ? t('users.createTitle') : editing ? t('users.editTitle', { name: editing.username }) : ''}
        open={!!editing}
        onClose={() => setEditing(null)}
      >
        {editing && (
          <UserForm
            key={editing === 'new' ? 'new' : editing.id}
            user={editing === 'new' ? null : editing}
            onDone={() => {
              setEditing(null);
              reload();
            }}
            onCancel={() => setEditing(null)}
          />
        )}
      </Modal>
      <Modal title={newPassword ? t('users.resetTitle', { name: newPassword.name }) : ''} open={!!newPassword} onClose={() => setNewPassword(null)}>
        {newPassword && (
          <div>
            <p class="banner warn" role="note">
              {t('users.resetText')}
            </p>
            <SecretOnce
              id="new-password"
              label={t('users.passwordLabel')}
              value={newPassword.password}
              filename={`gatehouse-password-${fileSafe(newPassword.name)}.txt`}
            />
            <div class="form-actions">
              <button type="button" class="btn primary" onClick={() => setNewPassword(null)}>
                {t('users.done')}
              </button>
            </div>
          </div>
        )}
      </Modal>
    </>
  );
}

function UserForm(props: { user: UserRow | null; onDone: () => void; onCancel: () => void }) {
  const u = props.user;
  const form = useForm({ username: u?.username ?? '', email: u?.email ?? '', password: '', role: u?.role ?? 'user', language: u?.language ?? 'en' });
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        const ok = await form.submit(async (v) => {
          const body: Omit<CreateUserBody, 'password'> = { username: v.username, email: v.email.trim() ? v.email : null, role: v.role, language: v.language };
          if (u) await api('PUT', `/users/${u.id}`, body);
          else await api('POST', '/users', { ...body, password: v.password });
        });
        if (ok) {
          toast(t(u ? 'users.saved' : 'users.created', { name: form.values.username }));
          props.onDone();
        }
      }}
    >
      <FormErrors form={form} />
      <div class="form-grid">
        <TextField form={form} name="username" label={t('users.username')} required autoComplete="off" />
        <TextField form={form} name="email" type="email" label={t('users.email')} autoComplete="off" />
        {!u && <TextField form={form} name="password" type="password" label={t('users.password')} required autoComplete="new-password" />}
        <SelectField form={form} name="role" label={t('users.role')} options={ROLE_OPTIONS()} hint={t(`users.role_${String(form.values.role)}_hint`)} />
        <SelectField form={form} name="language" label={t('users.language')} options={LANG_OPTIONS} />
      </div>
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={u ? t('common.save') : t('users.create')} />
      </div>
    </form>
  );
}
