// Gateways: the list of gateway peers (status, last seen, health, per-route reachability) and a
// detail page (health, telemetry, routes, traffic, token rotation with the new gateway.env shown
// once, the companion's install). "Add gateway" (/gateways?new=1) creates the gateway peer and shows
// its gateway.env once with the install commands. Status changes arrive live (gateway_online /
// gateway_offline / gateway_unknown).
import { Fragment, type ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { Card, EmptyState, ErrorBanner, Link, PageHeader, Spinner, StatusDot } from '../../components/ui';
import { FormErrors, NumberField, SubmitButton, TextField, useForm } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { useApi, useTitle } from '../../hooks';
import { fmtAgo, fmtBytes, fmtDate, fmtNumber, t, useLang, word } from '../../i18n';
import { useLive } from '../../live';
import type { ScreenProps } from '../define';
import type { HealthDetail } from '@gatehouse/common/gateway-status.js';
import './gateways.css';

import type { Gateway, GatewayRotateResponse, GatewaysResponse, PeerCreatedResponse } from '../../protocol';
import { GatewayInstall, GatewaySetup } from './setup';
import { setQuery } from '../../router';

export type { Gateway } from '../../protocol';

const SELF_CHECK_KEY = { http_proxy: 'gateways.proxy', api: 'gateways.api', dns: 'gateways.dns', tcp_listeners: 'gateways.listeners' } as const;

function healthWords(h: HealthDetail): string {
  switch (h.code) {
    case 'lan_reachable':
      return t('gateways.healthLanUp', { up: fmtNumber(h.up), total: fmtNumber(h.total) });
    case 'lan_unreachable':
      return t('gateways.healthLanDown', { total: fmtNumber(h.total) });
    case 'self_check_passed':
      return t('gateways.healthSelfOk');
    case 'self_check_failed':
      return t('gateways.healthSelfFailed', { parts: h.failed.map((f) => t(SELF_CHECK_KEY[f])).join(', ') });
  }
}

/** The status reason in the reader's language, from status_detail (or its code, status_reason_code); the server's English words only for a code this app does not know. */
export function statusWhy(g: Pick<Gateway, 'status_reason' | 'status_detail'> & Partial<Pick<Gateway, 'status_reason_code'>>): string | null {
  const d = g.status_detail;
  switch (d?.code) {
    case 'no_tokens':
      return t('gateways.whyNoTokens');
    case 'no_heartbeat':
      return t('gateways.whyNoHeartbeat');
    case 'heartbeat_stale':
      return t('gateways.whyStale', { age: fmtNumber(d.age_s), limit: fmtNumber(d.offline_after_s) });
    case 'unhealthy':
      return d.health
        ? t('gateways.whyUnhealthy', { health: healthWords(d.health) })
        : g.status_reason_code
          ? word(g.status_reason_code, g.status_reason)
          : t('gateways.whyUnhealthyUnknown');
    case 'healthy':
      return d.health ? healthWords(d.health) : g.status_reason_code ? word(g.status_reason_code, g.status_reason) : t('gateways.whyHealthy');
    default:
      return word(g.status_reason_code, g.status_reason);
  }
}

const EVENTS = [
  'gateway_online',
  'gateway_offline',
  'gateway_unknown',
  'peer_created',
  'peer_updated',
  'peer_deleted',
  'route_created',
  'route_updated',
  'route_deleted',
];
const statusDot = (s: Gateway['status']) => (s === 'online' ? 'up' : s === 'offline' ? 'down' : 'unknown') as 'up' | 'down' | 'unknown';
const statusLabel = (s: string) => (s === 'online' || s === 'offline' || s === 'unknown' ? t(`gateways.${s}`) : s);

function reachOf(g: Gateway): { ok: number; total: number } {
  const reach = new Map((g.health?.route_reachability ?? []).map((r) => [Number(r.route_id), r]));
  return { ok: g.routes.filter((r) => reach.get(r.id)?.reachable).length, total: g.routes.length };
}

function HealthCell(props: { g: Gateway }) {
  const h = props.g.health;
  if (!h) return <span class="muted">{t('gateways.noHeartbeat')}</span>;
  return <StatusDot state={h.overall_healthy ? 'up' : 'down'} label={h.overall_healthy ? t('gateways.healthy') : t('gateways.unhealthy')} />;
}

/** Announces a live status change once (the lists reload through useApi's reloadOn). */
function useStatusToasts(filter?: number) {
  useLive(['gateway_online', 'gateway_offline', 'gateway_unknown'], (e) => {
    const d = e.data;
    if (filter !== undefined && d.peer_id !== filter) return;
    toast(t('gateways.statusChanged', { name: d.name, status: statusLabel(d.to) }), d.to === 'offline' ? 'bad' : 'ok');
  });
}

/** The create dialog: a name (and the companion's API port), then the new gateway's gateway.env shown once with the install. */
function AddGateway(props: { onClose: () => void; onCreated: () => void }) {
  const [created, setCreated] = useState<{ peerId: number; name: string; envContent: string } | null>(null);
  const form = useForm<{ name: string; api_port: number | null }>({ name: '', api_port: null });
  if (created)
    return (
      <>
        <GatewaySetup envContent={created.envContent} />
        <div class="form-actions">
          <Link class="btn" href={`/gateways/${created.peerId}`} onClick={props.onClose}>
            {t('gateways.openGateway')}
          </Link>
          <button type="button" class="btn primary" onClick={props.onClose}>
            {t('common.close')}
          </button>
        </div>
      </>
    );
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void form.submit(async (v) => {
          const r = await api<PeerCreatedResponse>('POST', '/peers', {
            name: v.name,
            is_gateway: true,
            ...(v.api_port === null ? {} : { api_port: v.api_port }),
          });
          if (!r.gateway) throw new Error(t('common.error'));
          setCreated({ peerId: r.peer.id, name: r.peer.name, envContent: r.gateway.envContent });
          props.onCreated();
        });
      }}
    >
      <p class="muted">{t('gateways.addText')}</p>
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('gateways.name')} required autoComplete="off" />
      <NumberField form={form} name="api_port" label={t('gateways.apiPort')} hint={t('gateways.apiPortHint')} min={1} max={65535} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onClose}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('gateways.add')} />
      </div>
    </form>
  );
}

function GatewayList(props: { adding: boolean }) {
  const { data, error, reload } = useApi<GatewaysResponse>('/gateways', EVENTS);
  const add = () => setQuery({ new: '1' });
  useStatusToasts();
  const columns: Column<Gateway>[] = [
    {
      key: 'name',
      label: t('gateways.name'),
      render: (g) => (
        <>
          <Link href={`/gateways/${g.peer_id}`} aria-label={t('gateways.details', { name: g.name })}>
            {g.name}
          </Link>
          {g.hostname && <div class="muted small">{g.hostname}</div>}
        </>
      ),
    },
    { key: 'status', label: t('gateways.status'), render: (g) => <StatusDot state={statusDot(g.status)} label={statusLabel(g.status)} /> },
    {
      key: 'seen',
      label: t('gateways.lastSeen'),
      render: (g) => (
        <time dateTime={g.last_seen_at ? new Date(g.last_seen_at).toISOString() : undefined} title={fmtDate(g.last_seen_at)}>
          {fmtAgo(g.last_seen_at)}
        </time>
      ),
    },
    { key: 'health', label: t('gateways.health'), render: (g) => <HealthCell g={g} /> },
    {
      key: 'routes',
      label: t('gateways.routes'),
      render: (g) => {
        const r = reachOf(g);
        return r.total ? t('gateways.reachable', r) : <span class="muted">{t('gateways.noRoutes')}</span>;
      },
    },
    { key: 'ip', label: t('gateways.address'), render: (g) => <code>{g.ip}</code> },
  ];
  return (
    <>
      <PageHeader title={t('gateways.title')}>
        <button type="button" class="btn primary" onClick={add}>
          {t('gateways.add')}
        </button>
      </PageHeader>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <DataTable
          label={t('gateways.list')}
          columns={columns}
          rows={data.gateways}
          rowKey={(g) => g.peer_id}
          empty={
            <EmptyState title={t('gateways.emptyTitle')} text={t('gateways.emptyText')}>
              <button type="button" class="btn primary" onClick={add}>
                {t('gateways.add')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Modal title={t('gateways.addTitle')} open={props.adding} onClose={() => setQuery({ new: null })} wide>
        {props.adding && <AddGateway onClose={() => setQuery({ new: null })} onCreated={reload} />}
      </Modal>
    </>
  );
}

function Facts(props: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {props.rows.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{v ?? '–'}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
const okLabel = (v: boolean | undefined) =>
  v === undefined ? '–' : <StatusDot state={v ? 'up' : 'down'} label={v ? t('gateways.ok') : t('gateways.failing')} />;
function duration(s: number | undefined): string {
  if (s === undefined || s === null) return '–';
  const d = Math.floor(s / 86400),
    h = Math.floor((s % 86400) / 3600),
    m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}

type Issued = GatewayRotateResponse['gateway'];

function EnvDialog(props: { name: string; issued: Issued | null; onClose: () => void }) {
  const { issued } = props;
  return (
    <Modal title={t('gateways.newTitle', { name: props.name })} open={!!issued} onClose={props.onClose} wide>
      {issued && (
        <>
          <GatewaySetup envContent={issued.envContent} />
          <div class="form-actions">
            <button type="button" class="btn primary" onClick={props.onClose}>
              {t('common.close')}
            </button>
          </div>
        </>
      )}
    </Modal>
  );
}

function GatewayDetail(props: { id: number }) {
  const { data, error, reload } = useApi<GatewaysResponse>('/gateways', EVENTS);
  useStatusToasts(props.id);
  const g = useMemo(() => data?.gateways.find((x) => x.peer_id === props.id) ?? null, [data, props.id]);
  const [busy, setBusy] = useState(false);
  const [issued, setIssued] = useState<Issued | null>(null);
  useTitle(g?.name ?? t('gateways.title'));
  if (error)
    return (
      <>
        <PageHeader title={t('gateways.title')} back="/gateways" />
        <ErrorBanner error={error} onRetry={reload} />
      </>
    );
  if (!data)
    return (
      <>
        <PageHeader title={t('gateways.title')} back="/gateways" />
        <Spinner />
      </>
    );
  if (!g)
    return (
      <>
        <PageHeader title={t('gateways.title')} back="/gateways" />
        <EmptyState title={t('common.notFoundTitle')} text={t('gateways.notFound')} />
      </>
    );

  const h = g.health;
  const tel = h?.telemetry ?? null;
  const reach = new Map((h?.route_reachability ?? []).map((r) => [Number(r.route_id), r]));
  const rotate = async () => {
    if (!(await confirmAction(t('gateways.rotateConfirm', { name: g.name }), { confirmLabel: t('gateways.rotate') }))) return;
    setBusy(true);
    try {
      const r = await api<GatewayRotateResponse>('POST', `/peers/${g.peer_id}/gateway-env/rotate`);
      setIssued(r.gateway);
      toast(t('gateways.rotated'));
      reload();
    } catch (err) {
      toast(String((err as Error).message), 'bad');
    } finally {
      setBusy(false);
    }
  };
  const routeColumns: Column<Gateway['routes'][number]>[] = [
    { key: 'domain', label: t('gateways.domain'), render: (r) => <Link href={`/routes/${r.id}`}>{r.domain}</Link> },
    { key: 'type', label: t('gateways.type'), render: (r) => r.route_type.toUpperCase() },
    {
      key: 'target',
      label: t('gateways.target'),
      render: (r) => (
        <code>
          {r.target_lan_host ?? '–'}
          {r.target_lan_port ? `:${r.target_lan_port}` : ''}
        </code>
      ),
    },
    {
      key: 'reach',
      label: t('gateways.reachability'),
      render: (r) => {
        if (!r.enabled) return <span class="muted">{t('gateways.routeDisabled')}</span>;
        const x = reach.get(r.id);
        if (!x) return <StatusDot state="unknown" label={t('gateways.reachUnknown')} />;
        return (
          <StatusDot
            state={x.reachable ? 'up' : 'down'}
            label={`${x.reachable ? t('gateways.reachYes') : t('gateways.reachNo')}${x.latency_ms != null ? ` · ${t('gateways.latency', { ms: fmtNumber(x.latency_ms) })}` : ''}`}
          />
        );
      },
    },
  ];
  return (
    <>
      <PageHeader title={g.name} back="/gateways">
        <button type="button" class="btn" onClick={rotate} disabled={busy} aria-busy={busy}>
          {busy ? t('common.loading') : t('gateways.rotate')}
        </button>
      </PageHeader>
      <div class="grid-2 gw-grid">
        <Card title={t('gateways.status')}>
          <p class="gw-status" data-testid="gw-status">
            <StatusDot state={statusDot(g.status)} label={statusLabel(g.status)} />
          </p>
          <Facts
            rows={[
              [t('gateways.reason'), <span data-testid="gw-reason">{statusWhy(g)}</span>],
              [t('gateways.since'), fmtDate(g.status_changed_at)],
              [t('gateways.lastSeen'), `${fmtAgo(g.last_seen_at)}${g.last_seen_at ? ` (${fmtDate(g.last_seen_at)})` : ''}`],
              [t('gateways.address'), <code>{g.ip}</code>],
              [t('gateways.hostname'), g.hostname],
              [t('gateways.apiPort'), String(g.api_port)],
              [
                t('gateways.configSync'),
                g.config_in_sync === null ? t('gateways.syncUnknown') : g.config_in_sync ? t('gateways.inSync') : t('gateways.outOfSync'),
              ],
            ]}
          />
        </Card>
        <Card title={t('gateways.health')}>
          {!h ? (
            <p class="muted">{t('gateways.noHeartbeat')}</p>
          ) : (
            <Facts
              rows={[
                [t('gateways.health'), <HealthCell g={g} />],
                [t('gateways.uptime'), duration(h.uptime_s)],
                [
                  t('gateways.handshake'),
                  h.wg_handshake_age_s === undefined || h.wg_handshake_age_s === null ? '–' : t('gateways.secondsAgo', { s: fmtNumber(h.wg_handshake_age_s) }),
                ],
                [t('gateways.proxy'), okLabel(h.http_proxy_healthy)],
                [t('gateways.api'), okLabel(h.api_healthy)],
                [t('gateways.dns'), okLabel(h.dns_resolve_ok)],
                [t('gateways.listeners'), h.tcp_listeners?.length ? h.tcp_listeners.map((l) => `${l.port} (${l.status})`).join(', ') : '–'],
              ]}
            />
          )}
        </Card>
        <Card title={t('gateways.telemetry')}>
          {!tel ? (
            <p class="muted">{t('gateways.noHeartbeat')}</p>
          ) : (
            <Facts
              rows={[
                [t('gateways.version'), tel.gateway_version],
                [t('gateways.node'), tel.node_version],
                [t('gateways.wgTools'), tel.wg_tools_version],
                [
                  t('gateways.cpu'),
                  tel.cpu_cores !== undefined
                    ? t('gateways.cpuValue', { cores: tel.cpu_cores, load: (tel.cpu_load_avg ?? []).map((x) => fmtNumber(x, 2)).join(' / ') })
                    : '–',
                ],
                [
                  t('gateways.memory'),
                  tel.mem_total
                    ? t('gateways.memValue', { used: fmtBytes(tel.mem_used ?? tel.mem_total - (tel.mem_free ?? 0)), total: fmtBytes(tel.mem_total) })
                    : '–',
                ],
                [t('gateways.disk'), tel.disk?.total ? t('gateways.memValue', { used: fmtBytes(tel.disk.used ?? 0), total: fmtBytes(tel.disk.total) }) : '–'],
                [t('gateways.os'), [tel.os_platform, tel.os_release, tel.arch].filter(Boolean).join(' ')],
                [t('gateways.resolvers'), tel.dns_resolvers?.join(', ')],
                [t('gateways.defaultGw'), tel.default_gateway_ip],
              ]}
            />
          )}
        </Card>
        <Card title={t('gateways.traffic')}>
          <Facts
            rows={[
              [t('gateways.rx'), fmtBytes(g.traffic?.rx_bytes)],
              [t('gateways.tx'), fmtBytes(g.traffic?.tx_bytes)],
              [t('gateways.connections'), g.traffic?.active_connections !== undefined ? fmtNumber(g.traffic.active_connections) : '–'],
            ]}
          />
        </Card>
      </div>
      <Card title={t('gateways.routeReach')}>
        <DataTable
          label={t('gateways.routeReach')}
          columns={routeColumns}
          rows={g.routes}
          rowKey={(r) => r.id}
          empty={<p class="muted">{t('gateways.noRoutes')}</p>}
        />
      </Card>
      <Card title={t('gateways.tokens')}>
        <p>{t('gateways.envInfo')}</p>
        {g.token_hint ? (
          <Facts
            rows={[
              [t('gateways.tokenHint'), <code data-testid="token-hint">{g.token_hint}…</code>],
              [t('gateways.issuedAt'), fmtDate(g.tokens_issued_at)],
            ]}
          />
        ) : (
          <p class="muted">{t('gateways.noTokens')}</p>
        )}
        <div class="form-actions">
          <button type="button" class="btn" onClick={rotate} disabled={busy} aria-busy={busy}>
            {busy ? t('common.loading') : t('gateways.rotate')}
          </button>
        </div>
      </Card>
      <Card title={t('gateways.installTitle')}>
        <GatewayInstall idPrefix="gw-install-later" inCard />
      </Card>
      <EnvDialog name={g.name} issued={issued} onClose={() => setIssued(null)} />
    </>
  );
}

export default function GatewaysScreen({ params, query }: ScreenProps) {
  useLang();
  useTitle(t('gateways.title'));
  return params.id ? <GatewayDetail id={Number(params.id)} /> : <GatewayList adding={query.get('new') === '1'} />;
}
