// The routes list: HTTP and L4 routes in one table; the API searches, filters (type, peer_id,
// enabled), sorts and pages; the URL query holds that state. Toggle, delete and batch actions.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { DataTable, Pager, SearchBox, useList, type Column } from '../../components/table';
import { EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { firstItemError, t } from '../../i18n';
import { setQuery, useLocation } from '../../router';
import type { RoutePeersResponse, RoutesBatchBody, RoutesBatchResponse, RoutesResponse, RouteToggleResponse } from '../../protocol';
import { ROUTE_EVENTS, type Route, type WizardPeer } from './model';
import { ExposureBadge } from '../exposure/ExposureSection';
import { AccessBadge } from '../schedule/AccessState';
import { BreakerBadge, CertificateBadge, EnabledBadge, MonitorStatus, ProtectionBadges, SiteLink } from './status';

export function targetText(r: Route, peers: Map<number, WizardPeer>): string {
  if (r.target_kind === 'gateway') {
    const gw = r.target_peer_id !== null ? (peers.get(r.target_peer_id)?.name ?? `#${r.target_peer_id}`) : '–';
    return `${gw} → ${r.target_lan_host ?? '?'}:${r.target_lan_port ?? '?'}`;
  }
  const p = r.peer_id !== null ? (peers.get(r.peer_id)?.name ?? `#${r.peer_id}`) : '–';
  return `${p}:${r.target_port ?? '?'}`;
}

/** The route's name: its domain, or its port for an L4 route without one. */
export function routeName(r: Pick<Route, 'domain' | 'l4_listen_port'>): string {
  return r.domain || t('routes.noDomain', { port: r.l4_listen_port ?? '?' });
}

export function typeText(r: Route): string {
  if (r.route_type === 'http') return r.https_enabled ? t('routes.typeHttps') : t('routes.typeHttp');
  return `L4 ${(r.l4_protocol ?? '').toUpperCase()} :${r.l4_listen_port ?? '?'}`;
}

export function usePeers() {
  const { data } = useApi<RoutePeersResponse>('/routes/peers', ['peer_created', 'peer_updated', 'peer_deleted']);
  const list = data?.peers ?? [];
  return { list, byId: new Map(list.map((p) => [p.id, p])) };
}

export default function RouteList() {
  useTitle(t('routes.title'));
  const { query } = useLocation();
  const list = useList<RoutesResponse>('/routes', ['q', 'type', 'peer_id', 'enabled'], ROUTE_EVENTS);
  const peers = usePeers();
  const [selected, setSelected] = useState<Set<string | number>>(new Set());
  const [busy, setBusy] = useState<string | null>(null);
  const rows = list.data?.routes ?? [];
  const [q, setQ] = useState(query.get('q') ?? '');
  const [qTimer, setQTimer] = useState<ReturnType<typeof setTimeout> | undefined>(undefined);

  const onSearch = (v: string) => {
    setQ(v);
    clearTimeout(qTimer);
    setQTimer(setTimeout(() => list.setFilter('q', v.trim() || null), 250));
  };

  const toggle = async (r: Route) => {
    setBusy(`toggle-${r.id}`);
    try {
      const res = await api<RouteToggleResponse>('PUT', `/routes/${r.id}/toggle`);
      toast(res.enabled ? t('routes.enabledToast', { domain: r.domain }) : t('routes.disabledToast', { domain: r.domain }));
      list.reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const remove = async (r: Route) => {
    if (!(await confirmAction(t('common.confirmDelete', { name: r.domain }), { confirmLabel: t('common.delete') }))) return;
    try {
      await api('DELETE', `/routes/${r.id}`);
      toast(t('routes.deletedToast', { domain: r.domain }));
      selected.delete(r.id);
      setSelected(new Set(selected));
      list.reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    }
  };
  const batch = async (action: RoutesBatchBody['action']) => {
    const ids = [...selected].map(Number);
    if (action === 'delete' && !(await confirmAction(t('routes.batchDeleteConfirm', { n: ids.length }), { confirmLabel: t('common.delete') }))) return;
    setBusy(`batch-${action}`);
    try {
      const res = await api<RoutesBatchResponse>('POST', '/routes/batch', { action, ids });
      toast(t('routes.batchDone', { ok: res.succeeded, failed: res.failed }) + firstItemError(res.results), res.failed ? 'bad' : 'ok');
      setSelected(new Set());
      list.reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const columns: Column<Route>[] = [
    {
      key: 'domain',
      label: t('routes.domain'),
      sort: 'domain',
      render: (r) => (
        <span class="route-domain">
          <Link href={`/routes/${r.id}`}>{routeName(r)}</Link>
          <SiteLink route={r} label={t('routes.site')} />
        </span>
      ),
    },
    { key: 'type', label: t('routes.type'), sort: 'type', render: (r) => typeText(r) },
    { key: 'target', label: t('routes.target'), render: (r) => targetText(r, peers.byId) },
    {
      key: 'protection',
      label: t('routes.protection'),
      render: (r) => (
        <>
          <ExposureBadge route={r} />
          <ProtectionBadges route={r} />
        </>
      ),
    },
    { key: 'certificate', label: t('routes.certificate'), render: (r) => <CertificateBadge route={r} /> },
    {
      key: 'status',
      label: t('routes.status'),
      render: (r) => (
        <span class="route-status">
          <EnabledBadge enabled={r.enabled} />
          <MonitorStatus route={r} />
          <BreakerBadge route={r} />
          <AccessBadge item={r} />
        </span>
      ),
    },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (r) =>
        r.rdp_route_id !== null ? (
          <span class="row-note">
            <Link class="btn small" href={`/rdp/${r.rdp_route_id}`} title={t('routes.managedByRdpHint')}>
              {t('routes.managedByRdp')}
            </Link>
          </span>
        ) : (
          <span class="row-actions">
            <button
              type="button"
              class="btn small"
              aria-busy={busy === `toggle-${r.id}`}
              disabled={busy === `toggle-${r.id}`}
              onClick={() => toggle(r)}
              aria-label={t(r.enabled ? 'routes.disableRoute' : 'routes.enableRoute', { domain: r.domain })}
            >
              {r.enabled ? t('common.disable') : t('common.enable')}
            </button>
            <Link class="btn small" href={`/routes/${r.id}/edit`} aria-label={t('routes.editRoute', { domain: r.domain })}>
              {t('common.edit')}
            </Link>
            <button type="button" class="btn small danger" onClick={() => remove(r)} aria-label={t('routes.deleteRoute', { domain: r.domain })}>
              {t('common.delete')}
            </button>
          </span>
        ),
    },
  ];

  const filtered = !!(query.get('q') || query.get('type') || query.get('peer_id') || query.get('enabled'));
  return (
    <>
      <PageHeader title={t('routes.title')}>
        <Link class="btn primary" href="/routes/new">
          {t('routes.new')}
        </Link>
      </PageHeader>
      <div class="toolbar" role="search">
        <SearchBox label={t('routes.searchLabel')} value={q} onChange={onSearch} />
        <select aria-label={t('routes.filterType')} value={query.get('type') ?? ''} onChange={(e) => list.setFilter('type', e.currentTarget.value || null)}>
          <option value="">{t('routes.allTypes')}</option>
          <option value="http">{t('routes.typeHttp')}</option>
          <option value="l4">{t('routes.typeL4')}</option>
        </select>
        <select
          aria-label={t('routes.filterPeer')}
          value={query.get('peer_id') ?? ''}
          onChange={(e) => list.setFilter('peer_id', e.currentTarget.value || null)}
        >
          <option value="">{t('routes.allPeers')}</option>
          {peers.list.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
        <select
          aria-label={t('routes.filterEnabled')}
          value={query.get('enabled') ?? ''}
          onChange={(e) => list.setFilter('enabled', e.currentTarget.value || null)}
        >
          <option value="">{t('routes.allStates')}</option>
          <option value="true">{t('common.enabled')}</option>
          <option value="false">{t('common.disabled')}</option>
        </select>
      </div>
      {selected.size > 0 && (
        <div class="toolbar batch-bar" role="group" aria-label={t('routes.batchLabel')}>
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
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {!list.data && !list.error ? (
        <Spinner />
      ) : (
        list.data && (
          <>
            <DataTable
              label={t('routes.title')}
              columns={columns}
              rows={rows}
              rowKey={(r) => r.id}
              rowName={(r) => routeName(r)}
              sort={(list.params.sort as string) ?? undefined}
              onSort={(s) => setQuery({ sort: s, offset: null })}
              selected={selected}
              onSelect={setSelected}
              empty={
                filtered ? (
                  <EmptyState title={t('routes.noMatch')} text={t('routes.noMatchText')} />
                ) : (
                  <EmptyState title={t('routes.empty')} text={t('routes.emptyText')}>
                    <Link class="btn primary" href="/routes/new">
                      {t('routes.new')}
                    </Link>
                  </EmptyState>
                )
              }
            />
            <Pager total={list.data.total} limit={Number(list.params.limit)} offset={Number(list.params.offset)} />
          </>
        )
      )}
    </>
  );
}
