// The RDP routes list: access mode, target, live reachability (GET /rdp/status, reloaded on
// rdp_status_changed and polled), credentials; toggle, delete and batch actions; a banner that leads
// to the pending credential rotations when there are any.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { DataTable, SearchBox, type Column } from '../../components/table';
import { EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { firstItemError, t } from '../../i18n';
import type {
  RdpBatchBody,
  RdpBatchResponse,
  RdpRoutesResponse,
  RdpToggleResponse,
  RotationPendingResponse,
  RoutePeersResponse,
  WizardPeer,
} from '../../protocol';
import { RDP_EVENTS, type RdpRoute } from './model';
import { CredBadge, EnabledBadge, ReachDot, useStatusMap } from './status';

export type PeerOption = WizardPeer;

export function usePeers() {
  const { data } = useApi<RoutePeersResponse>('/routes/peers', ['peer_created', 'peer_updated', 'peer_deleted']);
  const list = data?.peers ?? [];
  return { list, byId: new Map(list.map((p) => [p.id, p])) };
}

/** Where the route leads, in the words of its access mode. */
export function targetText(r: RdpRoute, peers: Map<number, PeerOption>): string {
  const peerName = (id: number | null) => (id === null ? null : (peers.get(id)?.name ?? `#${id}`));
  const target = `${r.target_peer_id !== null ? peerName(r.target_peer_id) : (r.target_host ?? '?')}:${r.target_port}`;
  if (r.access_mode === 'gateway') return `${peerName(r.gateway_peer_id) ?? '?'} → ${r.target_host ?? '?'}:${r.target_port}`;
  if (r.access_mode === 'external') return `${r.target_host ?? '?'}:${r.listen_port ?? r.target_port}`;
  if (r.access_mode === 'both') return `${target} · ${r.external_host ?? '?'}:${r.listen_port ?? r.target_port}`;
  return target;
}

export default function RdpList() {
  useTitle(t('rdp.title'));
  const { data, error, reload } = useApi<RdpRoutesResponse>('/rdp', RDP_EVENTS);
  const pending = useApi<RotationPendingResponse>('/rdp/rotation/pending', [...RDP_EVENTS, 'master_key_rotated']);
  const status = useStatusMap();
  const peers = usePeers();
  const [selected, setSelected] = useState<Set<string | number>>(new Set());
  const [busy, setBusy] = useState<string | null>(null);
  const [q, setQ] = useState('');
  const all = data?.routes ?? [];
  const needle = q.trim().toLowerCase();
  const rows = needle
    ? all.filter((r) => `${r.name} ${r.description ?? ''} ${r.target_host ?? ''} ${r.external_host ?? ''}`.toLowerCase().includes(needle))
    : all;

  const toggle = async (r: RdpRoute) => {
    setBusy(`toggle-${r.id}`);
    try {
      const res = await api<RdpToggleResponse>('PUT', `/rdp/${r.id}/toggle`);
      toast(res.route.enabled ? t('rdp.enabledToast', { name: r.name }) : t('rdp.disabledToast', { name: r.name }));
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const remove = async (r: RdpRoute) => {
    const msg = r.gateway_l4_route_id !== null ? t('rdp.deleteConfirmGateway', { name: r.name }) : t('common.confirmDelete', { name: r.name });
    if (!(await confirmAction(msg, { confirmLabel: t('common.delete') }))) return;
    try {
      await api('DELETE', `/rdp/${r.id}`);
      toast(t('rdp.deletedToast', { name: r.name }));
      selected.delete(r.id);
      setSelected(new Set(selected));
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    }
  };
  const batch = async (action: RdpBatchBody['action']) => {
    const ids = [...selected].map(Number);
    if (action === 'delete' && !(await confirmAction(t('rdp.batchDeleteConfirm', { n: ids.length }), { confirmLabel: t('common.delete') }))) return;
    setBusy(`batch-${action}`);
    try {
      const res = await api<RdpBatchResponse>('POST', '/rdp/batch', { action, ids });
      toast(t('rdp.batchDone', { ok: res.succeeded, failed: res.failed }) + firstItemError(res.results), res.failed ? 'bad' : 'ok');
      setSelected(new Set());
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const columns: Column<RdpRoute>[] = [
    { key: 'name', label: t('rdp.name'), render: (r) => <Link href={`/rdp/${r.id}`}>{r.name}</Link> },
    { key: 'mode', label: t('rdp.accessMode'), render: (r) => t(`rdp.mode_${r.access_mode}`) },
    { key: 'target', label: t('rdp.target'), render: (r) => <span class="rdp-target">{targetText(r, peers.byId)}</span> },
    {
      key: 'status',
      label: t('rdp.status'),
      render: (r) => (
        <span class="rdp-status">
          <EnabledBadge enabled={r.enabled} />
          <ReachDot route={r} status={status.get(r.id)} />
        </span>
      ),
    },
    { key: 'creds', label: t('rdp.credentials'), render: (r) => <CredBadge route={r} /> },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (r) => (
        <span class="row-actions">
          <button
            type="button"
            class="btn small"
            aria-busy={busy === `toggle-${r.id}`}
            disabled={busy === `toggle-${r.id}`}
            onClick={() => toggle(r)}
            aria-label={t(r.enabled ? 'rdp.disableRoute' : 'rdp.enableRoute', { name: r.name })}
          >
            {r.enabled ? t('common.disable') : t('common.enable')}
          </button>
          <Link class="btn small" href={`/rdp/${r.id}/edit`} aria-label={t('rdp.editRoute', { name: r.name })}>
            {t('common.edit')}
          </Link>
          <button type="button" class="btn small danger" onClick={() => remove(r)} aria-label={t('rdp.deleteRoute', { name: r.name })}>
            {t('common.delete')}
          </button>
        </span>
      ),
    },
  ];

  const pendingCount = pending.data?.routes.length ?? 0;
  return (
    <>
      <PageHeader title={t('rdp.title')}>
        <Link class="btn" href="/rdp/rotation">
          {t('rdp.rotationTitle')}
        </Link>
        <Link class="btn primary" href="/rdp/new">
          {t('rdp.new')}
        </Link>
      </PageHeader>
      {pendingCount > 0 && (
        <div class="banner warn rdp-pending-banner" role="status">
          <span>{t('rdp.pendingBanner', { n: pendingCount })}</span>
          <Link class="btn small" href="/rdp/rotation">
            {t('rdp.pendingOpen')}
          </Link>
        </div>
      )}
      {all.length > 0 && (
        <div class="toolbar" role="search">
          <SearchBox label={t('rdp.searchLabel')} value={q} onChange={setQ} />
        </div>
      )}
      {selected.size > 0 && (
        <div class="toolbar batch-bar" role="group" aria-label={t('rdp.batchLabel')}>
          <span>{t('common.selected', { n: selected.size })}</span>
          <button type="button" class="btn small" disabled={!!busy} aria-busy={busy === 'batch-enable'} onClick={() => batch('enable')}>
            {t('common.enable')}
          </button>
          <button type="button" class="btn small" disabled={!!busy} aria-busy={busy === 'batch-disable'} onClick={() => batch('disable')}>
            {t('common.disable')}
          </button>
          <button type="button" class="btn small danger" disabled={!!busy} aria-busy={busy === 'batch-delete'} onClick={() => batch('delete')}>
            {t('common.delete')}
          </button>
        </div>
      )}
      <ErrorBanner error={error} onRetry={reload} />
      {!data && !error ? (
        <Spinner />
      ) : (
        data && (
          <DataTable
            label={t('rdp.title')}
            columns={columns}
            rows={rows}
            rowKey={(r) => r.id}
            rowName={(r) => r.name}
            selected={selected}
            onSelect={setSelected}
            empty={
              needle ? (
                <EmptyState title={t('rdp.noMatch')} text={t('rdp.noMatchText')} />
              ) : (
                <EmptyState title={t('rdp.empty')} text={t('rdp.emptyText')}>
                  <Link class="btn primary" href="/rdp/new">
                    {t('rdp.new')}
                  </Link>
                </EmptyState>
              )
            }
          />
        )
      )}
    </>
  );
}
