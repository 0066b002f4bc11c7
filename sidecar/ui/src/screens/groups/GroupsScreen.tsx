// Peer groups: the list with peer counts (each a link to the peers list filtered by the group),
// create, edit, delete (its peers stay, without a group).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextArea, TextField, useForm } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang } from '../../i18n';
import type { Group, GroupBody, GroupDeletedResponse, GroupResponse, GroupsResponse } from '../../protocol';
import { SpeedLimitFields, speedLimitBody, speedLimitText, speedLimitValues } from '../shaping/speed-limit';
import { QuotaFields, quotaBody, quotaText, quotaValues } from '../quotas/quota';
import '../peers/peers.css';

const EVENTS = ['peer_group_created', 'peer_group_updated', 'peer_group_deleted', 'peer_created', 'peer_updated', 'peer_deleted'];

function GroupForm(props: { group?: Group; onDone: (g: Group) => void; onCancel: () => void }) {
  useLang();
  const g = props.group;
  const form = useForm({
    name: g?.name ?? '',
    color: g?.color ?? '',
    description: g?.description ?? '',
    speed_limit: speedLimitValues(g?.speed_limit),
    quota: quotaValues(g?.quota),
  });
  const color = form.values.color;
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        let saved: Group | undefined;
        void form
          .submit(async (v) => {
            const body: GroupBody = {
              name: v.name,
              color: v.color.trim() || null,
              description: v.description.trim() ? v.description : null,
              speed_limit: speedLimitBody(v.speed_limit),
              quota: quotaBody(v.quota),
            };
            saved = (await api<GroupResponse>(g ? 'PUT' : 'POST', g ? `/peer-groups/${g.id}` : '/peer-groups', body)).group;
          })
          .then((ok) => {
            if (ok && saved) props.onDone(saved);
          });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('groups.name')} required autoComplete="off" />
      <div class="color-row">
        <TextField form={form} name="color" label={t('groups.color')} hint={t('groups.colorHint')} autoComplete="off" />
        {/^#[0-9a-fA-F]{3,8}$/.test(color) && <span class="swatch big" style={{ background: color }} aria-hidden="true" />}
      </div>
      <TextArea form={form} name="description" label={t('groups.description')} rows={2} />
      <SpeedLimitFields form={form} hint={t('shaping.groupHint')} />
      <QuotaFields form={form} hint={t('quotas.groupHint')} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={g ? t('common.save') : t('common.create')} />
      </div>
    </form>
  );
}

export default function GroupsScreen() {
  useLang();
  useTitle(t('groups.title'));
  const { data, error, reload } = useApi<GroupsResponse>('/peer-groups', EVENTS);
  const [dialog, setDialog] = useState<{ group?: Group } | null>(null);
  const remove = async (g: Group) => {
    if (!(await confirmAction(t('groups.confirmDelete', { name: g.name, n: g.peer_count }), { confirmLabel: t('common.delete') }))) return;
    try {
      const r = await api<GroupDeletedResponse>('DELETE', `/peer-groups/${g.id}`);
      toast(t('groups.deletedToast', { name: g.name, n: r.deleted.peers_ungrouped }));
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const columns: Column<Group>[] = [
    {
      key: 'name',
      label: t('groups.name'),
      render: (g) => (
        <span class="group-name">
          {g.color && <span class="swatch" style={{ background: g.color }} aria-hidden="true" />}
          <strong>{g.name}</strong>
        </span>
      ),
    },
    { key: 'description', label: t('groups.description'), render: (g) => g.description ?? '' },
    { key: 'speed_limit', label: t('shaping.speedLimit'), render: (g) => (g.speed_limit ? speedLimitText(g.speed_limit) : '–') },
    { key: 'quota', label: t('quotas.quota'), render: (g) => (g.quota ? quotaText(g.quota) : '–') },
    {
      key: 'peers',
      label: t('groups.peers'),
      class: 'num',
      render: (g) => (
        <Link href={`/peers?group_id=${g.id}`} aria-label={t('groups.peersLinkLabel', { n: g.peer_count, name: g.name })}>
          {t('groups.peersLink', { n: g.peer_count })}
        </Link>
      ),
    },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (g) => (
        <div class="row-actions">
          <button type="button" class="btn small" aria-label={t('groups.editNamed', { name: g.name })} onClick={() => setDialog({ group: g })}>
            {t('common.edit')}
          </button>
          <button type="button" class="btn small danger" aria-label={t('groups.deleteNamed', { name: g.name })} onClick={() => remove(g)}>
            {t('common.delete')}
          </button>
        </div>
      ),
    },
  ];
  return (
    <>
      <PageHeader title={t('groups.title')}>
        <button type="button" class="btn primary" onClick={() => setDialog({})}>
          {t('groups.add')}
        </button>
      </PageHeader>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        error ? null : (
          <Spinner />
        )
      ) : (
        <DataTable
          label={t('groups.table')}
          columns={columns}
          rows={data.groups}
          rowKey={(g) => g.id}
          empty={
            <EmptyState title={t('groups.emptyTitle')} text={t('groups.emptyText')}>
              <button type="button" class="btn primary" onClick={() => setDialog({})}>
                {t('groups.add')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Modal
        open={!!dialog}
        onClose={() => setDialog(null)}
        title={dialog?.group ? t('groups.editTitle', { name: dialog.group.name }) : t('groups.createTitle')}
      >
        {dialog && (
          <GroupForm
            group={dialog.group}
            onCancel={() => setDialog(null)}
            onDone={(g) => {
              toast(t(dialog.group ? 'groups.savedToast' : 'groups.createdToast', { name: g.name }));
              setDialog(null);
              reload();
            }}
          />
        )}
      </Modal>
    </>
  );
}
