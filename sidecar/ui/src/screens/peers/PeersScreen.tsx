// Peers: the list (search, filters, sort and pages done by the API, so 10,000 peers cost one page),
// create/edit dialogs with the config and QR code shown at once, toggle, delete, batch actions;
// /peers/:id is the detail page. Live events keep both current without a reload.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { DataTable, Pager, SearchBox, useList, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { firstItemError, fmtBytes, fmtRate, t, useLang } from '../../i18n';
import { useLive } from '../../live';
import { Sparkline } from '../../components/sparkline';

/** How many polls the live-rate sparkline shows. */
const RATE_SAMPLES = 30;
import { setQuery } from '../../router';
import type { ScreenProps } from '../define';
import PeerDetail from './PeerDetail';
import { ConfigOutdatedBadge, GROUP_EVENTS, PEER_EVENTS, PeerConfig, PeerForm, PeerStatus, TAG_EVENTS, splitTags, useNow } from './shared';
import type { GroupsResponse, Peer, PeerBatchResponse, PeerListResponse, PeerToggleResponse, TagsResponse } from '../../protocol';
import { GatewaySetup } from '../gateways/setup';
import { AccessBadge } from '../schedule/AccessState';
import './peers.css';
import { QuotaBar } from '../quotas/quota';

const FILTERS = ['q', 'group_id', 'tag', 'online', 'enabled'];

export default function PeersScreen({ params, query }: ScreenProps) {
  useLang();
  if (params.id) return <PeerDetail id={Number(params.id)} />;
  return <PeerList query={query} />;
}

/** What the dialog shows: the form (create or edit) or, after creating, the new peer's config. */
type DialogState = { kind: 'create' } | { kind: 'edit'; peer: Peer } | { kind: 'created'; peer: Peer; gatewayEnv?: string } | null;

function PeerList({ query }: { query: URLSearchParams }) {
  useTitle(t('peers.title'));
  const list = useList<PeerListResponse>('/peers', FILTERS, PEER_EVENTS, { limit: 50 });
  const groups = useApi<GroupsResponse>('/peer-groups', GROUP_EVENTS);
  const tags = useApi<TagsResponse>('/tags', TAG_EVENTS);
  const groupList = groups.data?.groups ?? [];
  const tagList = tags.data?.tags ?? [];
  const groupById = useMemo(() => new Map(groupList.map((g) => [g.id, g])), [groupList]);
  const now = useNow();

  // Search typed here goes to the URL (and so to the API) at once when it follows a pause (a paste,
  // the first key), otherwise 250 ms after the last key of a burst: one request per burst.
  const [q, setQ] = useState(query.get('q') ?? '');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const lastKey = useRef(0);
  const sent = useRef(q.trim());
  const onSearch = (v: string) => {
    setQ(v);
    clearTimeout(timer.current);
    const now = Date.now();
    const idle = now - lastKey.current > 250;
    lastKey.current = now;
    const send = () => {
      sent.current = v.trim();
      list.setFilter('q', v.trim() || null);
    };
    if (idle) send();
    else timer.current = setTimeout(send, 250);
  };
  useEffect(() => () => clearTimeout(timer.current), []);
  // The URL changed by someone else (Back, "clear filters"): show its search. Our own sends are not echoed
  // back into the box, so keys typed while a request is on its way stay.
  useEffect(() => {
    const u = query.get('q') ?? '';
    if (u !== sent.current) {
      sent.current = u;
      setQ(u);
    }
  }, [query.get('q')]);

  // Byte counters move with peer_traffic events between reloads.
  const [live, setLive] = useState<Map<number, { total_rx: number; total_tx: number }>>(new Map());
  useEffect(() => setLive(new Map()), [list.data]);
  // The live transfer rate (rx + tx) of each peer over the last RATE_SAMPLES polls, for the sparkline;
  // a peer an event does not name moved nothing in that poll.
  const [rates, setRates] = useState<Map<number, number[]>>(new Map());
  useLive('peer_traffic', (e) => {
    const moved = e.data.peers;
    setRates((m) => {
      const n = new Map<number, number[]>();
      const now = new Map(moved.map((x) => [x.peer_id, x.rx_rate + x.tx_rate]));
      for (const id of new Set([...m.keys(), ...now.keys()])) n.set(id, [...(m.get(id) ?? []), now.get(id) ?? 0].slice(-RATE_SAMPLES));
      return n;
    });
    if (!moved.length) return;
    setLive((m) => {
      const n = new Map(m);
      for (const x of moved) n.set(x.peer_id, { total_rx: x.total_rx, total_tx: x.total_tx });
      return n;
    });
  });

  const [selected, setSelected] = useState<Set<string | number>>(new Set());
  const [dialog, setDialog] = useState<DialogState>(null);
  const [busy, setBusy] = useState(false);
  const rows = list.data?.peers ?? [];
  const rowIds = new Set(rows.map((r) => r.id));
  const chosen = [...selected].filter((id) => rowIds.has(id as number)) as number[];

  const toggle = async (p: Peer) => {
    try {
      const r = await api<PeerToggleResponse>('PUT', `/peers/${p.id}/toggle`);
      toast(t(r.enabled ? 'peers.enabledToast' : 'peers.disabledToast', { name: p.name }));
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const remove = async (p: Peer) => {
    if (!(await confirmAction(t('peers.confirmDelete', { name: p.name }), { confirmLabel: t('common.delete') }))) return;
    try {
      await api('DELETE', `/peers/${p.id}`);
      toast(t('peers.deletedToast', { name: p.name }));
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const batch = async (action: PeerBatchResponse['action']) => {
    if (!chosen.length) return;
    if (action === 'delete' && !(await confirmAction(t('peers.confirmBatchDelete', { n: chosen.length }), { confirmLabel: t('common.delete') }))) return;
    setBusy(true);
    try {
      const r = await api<PeerBatchResponse>('POST', '/peers/batch', { action, ids: chosen });
      toast(t('peers.batchDone', { ok: r.succeeded, failed: r.failed }) + firstItemError(r.results), r.failed ? 'bad' : 'ok');
      setSelected(new Set());
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    } finally {
      setBusy(false);
    }
  };

  const columns: Column<Peer>[] = [
    {
      key: 'name',
      label: t('peers.name'),
      sort: 'name',
      render: (p) => (
        <>
          <Link href={`/peers/${p.id}`} class="strong">
            {p.name}
          </Link>
          {p.config_outdated && (
            <>
              {' '}
              <ConfigOutdatedBadge peer={p} />
            </>
          )}
          {p.full_tunnel && (
            <>
              {' '}
              <span data-testid="full-tunnel">
                <Badge>{t('peers.tunnel_full')}</Badge>
              </span>
            </>
          )}
        </>
      ),
    },
    { key: 'address', label: t('peers.address'), sort: 'address', render: (p) => <code>{p.address}</code> },
    {
      key: 'status',
      label: t('peers.status'),
      sort: 'last_handshake',
      render: (p) => (
        <span class="peer-status-cell">
          <PeerStatus peer={p} now={now} />
          <AccessBadge item={p} />
        </span>
      ),
    },
    { key: 'group', label: t('peers.group'), render: (p) => (p.group_id ? (groupById.get(p.group_id)?.name ?? '') : '') },
    { key: 'tags', label: t('peers.tags'), render: (p) => splitTags(p.tags).map((x) => <Badge key={x}>{x}</Badge>) },
    {
      key: 'traffic',
      label: t('peers.traffic'),
      sort: 'traffic',
      class: 'num',
      render: (p) => {
        const l = live.get(p.id) ?? p;
        const r = rates.get(p.id);
        return (
          <span class="traffic-cell">
            {r && <Sparkline values={r} label={t('peers.liveRate', { rate: fmtRate(r[r.length - 1]) })} />}
            {t('peers.totals', { rx: fmtBytes(l.total_rx), tx: fmtBytes(l.total_tx) })}
            <QuotaBar state={p.quota_state} compact />
          </span>
        );
      },
    },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (p) => (
        <div class="row-actions">
          <button type="button" class="btn small" aria-label={t(p.enabled ? 'peers.toggleOff' : 'peers.toggleOn', { name: p.name })} onClick={() => toggle(p)}>
            {p.enabled ? t('common.disable') : t('common.enable')}
          </button>
          <button type="button" class="btn small" aria-label={t('peers.editNamed', { name: p.name })} onClick={() => setDialog({ kind: 'edit', peer: p })}>
            {t('common.edit')}
          </button>
          <button type="button" class="btn small danger" aria-label={t('peers.deleteNamed', { name: p.name })} onClick={() => remove(p)}>
            {t('common.delete')}
          </button>
        </div>
      ),
    },
  ];

  const filtered = FILTERS.some((f) => query.get(f));
  const sel = (name: string, label: string, options: { value: string; label: string }[], anyLabel: string) => (
    <label class="filter">
      <span class="sr-only">{label}</span>
      <select aria-label={label} value={query.get(name) ?? ''} onChange={(e) => list.setFilter(name, e.currentTarget.value || null)}>
        <option value="">{anyLabel}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <>
      <PageHeader title={t('peers.title')}>
        <button type="button" class="btn primary" onClick={() => setDialog({ kind: 'create' })}>
          {t('peers.add')}
        </button>
      </PageHeader>
      <div class="toolbar">
        <SearchBox label={t('peers.searchLabel')} value={q} onChange={onSearch} />
        {sel(
          'group_id',
          t('peers.filterGroup'),
          [{ value: 'none', label: t('peers.noGroup') }, ...groupList.map((g) => ({ value: String(g.id), label: g.name }))],
          t('peers.anyGroup'),
        )}
        {sel(
          'tag',
          t('peers.filterTag'),
          tagList.map((x) => ({ value: x.name, label: x.name })),
          t('peers.anyTag'),
        )}
        {sel(
          'online',
          t('peers.filterOnline'),
          [
            { value: 'true', label: t('peers.onlyOnline') },
            { value: 'false', label: t('peers.onlyOffline') },
          ],
          t('peers.anyOnline'),
        )}
        {sel(
          'enabled',
          t('peers.filterEnabled'),
          [
            { value: 'true', label: t('peers.onlyEnabled') },
            { value: 'false', label: t('peers.onlyDisabled') },
          ],
          t('peers.anyEnabled'),
        )}
      </div>
      {chosen.length > 0 && (
        <div class="toolbar batch" role="group" aria-label={t('common.selected', { n: chosen.length })}>
          <span>{t('common.selected', { n: chosen.length })}</span>
          <button type="button" class="btn small" disabled={busy} onClick={() => batch('enable')}>
            {t('peers.batchEnable')}
          </button>
          <button type="button" class="btn small" disabled={busy} onClick={() => batch('disable')}>
            {t('peers.batchDisable')}
          </button>
          <button type="button" class="btn small danger" disabled={busy} onClick={() => batch('delete')}>
            {t('peers.batchDelete')}
          </button>
        </div>
      )}
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {!list.data ? (
        list.error ? null : (
          <Spinner />
        )
      ) : (
        <>
          <p class="muted small" aria-live="polite">
            {t('peers.count', { total: list.data.total, all: list.data.total_all })}
          </p>
          <DataTable
            label={t('peers.table')}
            columns={columns}
            rows={rows}
            rowKey={(p) => p.id}
            rowName={(p) => p.name}
            sort={String(list.params.sort ?? '')}
            onSort={(s) => setQuery({ sort: s, offset: null })}
            selected={selected}
            onSelect={setSelected}
            empty={
              filtered ? (
                <EmptyState title={t('peers.noMatchTitle')} text={t('peers.noMatchText')}>
                  <button
                    type="button"
                    class="btn"
                    onClick={() => {
                      setQ('');
                      sent.current = '';
                      setQuery({ q: null, group_id: null, tag: null, online: null, enabled: null, offset: null });
                    }}
                  >
                    {t('peers.clearFilters')}
                  </button>
                </EmptyState>
              ) : (
                <EmptyState title={t('peers.emptyTitle')} text={t('peers.emptyText')}>
                  <button type="button" class="btn primary" onClick={() => setDialog({ kind: 'create' })}>
                    {t('peers.add')}
                  </button>
                </EmptyState>
              )
            }
          />
          <Pager total={list.data.total} limit={Number(list.params.limit)} offset={Number(list.params.offset)} />
        </>
      )}
      <Modal
        wide
        open={!!dialog}
        onClose={() => setDialog(null)}
        title={
          !dialog
            ? ''
            : dialog.kind === 'create'
              ? t('peers.createTitle')
              : dialog.kind === 'edit'
                ? t('peers.editTitle', { name: dialog.peer.name })
                : t('peers.createdTitle', { name: dialog.peer.name })
        }
      >
        {dialog?.kind === 'create' && (
          <PeerForm
            groups={groupList}
            tags={tagList}
            onCancel={() => setDialog(null)}
            onDone={(peer, extra) => {
              list.reload();
              setDialog({ kind: 'created', peer, gatewayEnv: extra?.gateway?.envContent });
            }}
          />
        )}
        {dialog?.kind === 'edit' && (
          <PeerForm
            peer={dialog.peer}
            groups={groupList}
            tags={tagList}
            onCancel={() => setDialog(null)}
            onDone={(peer) => {
              toast(t('peers.savedToast', { name: peer.name }));
              list.reload();
              setDialog(null);
            }}
          />
        )}
        {dialog?.kind === 'created' && (
          <>
            {dialog.gatewayEnv ? (
              // a gateway's tunnel is in its gateway.env (shown once), with the companion's install
              <GatewaySetup envContent={dialog.gatewayEnv} />
            ) : (
              <PeerConfig id={dialog.peer.id} name={dialog.peer.name} />
            )}
            <div class="form-actions">
              <Link class="btn" href={`/peers/${dialog.peer.id}`} onClick={() => setDialog(null)}>
                {t('peers.openDetail')}
              </Link>
              <button type="button" class="btn primary" onClick={() => setDialog(null)}>
                {t('peers.done')}
              </button>
            </div>
          </>
        )}
      </Modal>
    </>
  );
}
