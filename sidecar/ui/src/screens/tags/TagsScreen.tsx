// Tags: the registry merged with the names found on peers, each with its peer count (a link to
// the peers list filtered by the tag); register a name; rename (registry and peers); delete says
// how many peers lose it.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextField, useForm } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang } from '../../i18n';
import type { Tag, TagCreatedResponse, TagDeletedResponse, TagRenamedResponse, TagsResponse } from '../../protocol';
import '../peers/peers.css';

const EVENTS = ['tag_created', 'tag_renamed', 'tag_deleted', 'peer_created', 'peer_updated', 'peer_deleted'];

function TagForm(props: { onDone: (tag: Tag, created: boolean) => void; onCancel: () => void }) {
  useLang();
  const form = useForm({ name: '' });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        let r: TagCreatedResponse | undefined;
        void form
          .submit(async (v) => {
            r = await api<TagCreatedResponse>('POST', '/tags', { name: v.name });
          })
          .then((ok) => {
            if (ok && r) props.onDone(r.tag, r.created);
          });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('tags.name')} hint={t('tags.createHint')} required autoComplete="off" />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('common.create')} />
      </div>
    </form>
  );
}

function RenameForm(props: { tag: Tag; onDone: (r: TagRenamedResponse['renamed']) => void; onCancel: () => void }) {
  useLang();
  const form = useForm({ name: props.tag.name });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        let r: TagRenamedResponse | undefined;
        void form
          .submit(async (v) => {
            r = await api<TagRenamedResponse>('PUT', `/tags/${encodeURIComponent(props.tag.name)}`, { name: v.name });
          })
          .then((ok) => {
            if (ok && r) props.onDone(r.renamed);
          });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('tags.name')} hint={t('tags.renameHint')} required autoComplete="off" />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('common.save')} />
      </div>
    </form>
  );
}

export default function TagsScreen() {
  useLang();
  useTitle(t('tags.title'));
  const { data, error, reload } = useApi<TagsResponse>('/tags', EVENTS);
  const [open, setOpen] = useState(false);
  const [renaming, setRenaming] = useState<Tag | null>(null);
  const remove = async (tag: Tag) => {
    const msg = tag.peer_count ? t('tags.confirmDelete', { name: tag.name, n: tag.peer_count }) : t('tags.confirmDeleteUnused', { name: tag.name });
    if (!(await confirmAction(msg, { confirmLabel: t('common.delete') }))) return;
    try {
      const r = await api<TagDeletedResponse>('DELETE', `/tags/${encodeURIComponent(tag.name)}`);
      toast(t('tags.deletedToast', { name: tag.name, n: r.deleted.peers_updated }));
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const columns: Column<Tag>[] = [
    { key: 'name', label: t('tags.name'), render: (x) => <Badge>{x.name}</Badge> },
    {
      key: 'peers',
      label: t('tags.peers'),
      class: 'num',
      render: (x) => (
        <Link href={`/peers?tag=${encodeURIComponent(x.name)}`} aria-label={t('tags.peersLinkLabel', { n: x.peer_count, name: x.name })}>
          {t('tags.peersLink', { n: x.peer_count })}
        </Link>
      ),
    },
    { key: 'registry', label: t('tags.registry'), render: (x) => (x.registered ? t('tags.registered') : t('tags.onPeersOnly')) },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (x) => (
        <>
          <button type="button" class="btn small" aria-label={t('tags.renameNamed', { name: x.name })} onClick={() => setRenaming(x)}>
            {t('tags.rename')}
          </button>{' '}
          <button type="button" class="btn small danger" aria-label={t('tags.deleteNamed', { name: x.name })} onClick={() => remove(x)}>
            {t('common.delete')}
          </button>
        </>
      ),
    },
  ];
  return (
    <>
      <PageHeader title={t('tags.title')}>
        <button type="button" class="btn primary" onClick={() => setOpen(true)}>
          {t('tags.add')}
        </button>
      </PageHeader>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        error ? null : (
          <Spinner />
        )
      ) : (
        <DataTable
          label={t('tags.table')}
          columns={columns}
          rows={data.tags}
          rowKey={(x) => x.name.toLowerCase()}
          empty={
            <EmptyState title={t('tags.emptyTitle')} text={t('tags.emptyText')}>
              <button type="button" class="btn primary" onClick={() => setOpen(true)}>
                {t('tags.add')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Modal open={open} onClose={() => setOpen(false)} title={t('tags.createTitle')}>
        {open && (
          <TagForm
            onCancel={() => setOpen(false)}
            onDone={(tag, created) => {
              toast(t(created ? 'tags.createdToast' : 'tags.existedToast', { name: tag.name }));
              setOpen(false);
              reload();
            }}
          />
        )}
      </Modal>
      <Modal open={!!renaming} onClose={() => setRenaming(null)} title={t('tags.renameTitle', { name: renaming?.name ?? '' })}>
        {renaming && (
          <RenameForm
            tag={renaming}
            onCancel={() => setRenaming(null)}
            onDone={(r) => {
              toast(t('tags.renamedToast', { from: r.from, to: r.to, n: r.peers_updated }));
              setRenaming(null);
              reload();
            }}
          />
        )}
      </Modal>
    </>
  );
}
