// Dashboard: figures of GET /dashboard/stats, the live upload/download rate (peer_traffic events),
// the traffic chart (GET /dashboard/traffic), recent activity (GET /logs/recent + activity_recorded)
// the state of WireGuard and Caddy (GET /wg/status, /caddy/status + their state events) and the
// host's resources (GET /system/resources, ResourcesCard).
// Everything updates from the live stream; nothing is polled.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { TimeChart, type Series } from '../../components/chart';
import { Card, EmptyState, ErrorBanner, Link, PageHeader, Spinner, StatusDot, Tabs } from '../../components/ui';
import { PublicHostWarning } from '../../components/public-host';
import { NetworkSetupStep } from '../network/SetupStep';
import { useApi, useTitle } from '../../hooks';
import { useLive } from '../../live';
import { fmtAgo, fmtBytes, fmtDate, fmtNumber, fmtRate, t, useLang, word, wordRow } from '../../i18n';
import { ResourcesCard } from './ResourcesCard';
import './dashboard.css';

import type { ActivityEntry as Activity, CaddyStatusResponse, RecentResponse, StatsResponse, TrafficResponse, WgStatusResponse } from '../../protocol';

type Period = TrafficResponse['period'];

/** Events after which the figures are fetched again. */
const STATS_ON = [
  'peer_online',
  'peer_offline',
  'peer_created',
  'peer_deleted',
  'peer_enabled',
  'peer_disabled',
  'peer_expired',
  'route_created',
  'route_deleted',
  'route_enabled',
  'route_disabled',
  'routes_batch',
  'route_up',
  'route_down',
  'wireguard_state',
];
const RECENT = 10;

/** Fires `fn` at most once per `ms` (trailing), for events that come with every poll. */
function useThrottled(fn: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => () => clearTimeout(timer.current), []);
  return () => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      ref.current();
    }, ms);
  };
}

function cssColor(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export default function DashboardScreen() {
  useLang();
  useTitle(t('dashboard.title'));
  const stats = useApi<StatsResponse>('/dashboard/stats', STATS_ON);
  const s = stats.data;

  // Live rates: the latest peer_traffic event wins over the figure the last stats call returned.
  const [rate, setRate] = useState<{ up: number; down: number } | null>(null);
  const refreshToday = useThrottled(stats.reload, 10_000);
  useLive('peer_traffic', (e) => {
    setRate({ up: e.data.rx_rate, down: e.data.tx_rate });
    refreshToday();
  });
  const up = rate?.up ?? s?.traffic.uploadRate ?? 0;
  const down = rate?.down ?? s?.traffic.downloadRate ?? 0;

  return (
    <>
      <PageHeader title={t('dashboard.title')} />
      <PublicHostWarning />
      <NetworkSetupStep />
      <ErrorBanner error={stats.error} onRetry={stats.reload} />
      {!s ? (
        stats.error ? null : (
          <Spinner />
        )
      ) : (
        <>
          {s.peers.total === 0 && (
            <EmptyState title={t('dashboard.noPeers')} text={t('dashboard.noPeersText')}>
              <Link class="btn primary" href="/peers">
                {t('dashboard.addPeer')}
              </Link>
            </EmptyState>
          )}
          {/* four cards: 4 columns, 2 × 2 or one column, never a lone card in a row (dashboard.css) */}
          <div class="dash-figures" data-testid="dash-figures">
            <Card title={t('dashboard.peers')}>
              <p class="stat" data-testid="peers-total">
                {fmtNumber(s.peers.total)}
              </p>
              <p class="stat-label" data-testid="peers-online-label">
                {t('dashboard.peersOnline', { online: fmtNumber(s.peers.online), total: fmtNumber(s.peers.total) })}
              </p>
              <Link href="/peers">{t('dashboard.showPeers')}</Link>
            </Card>
            <Card title={t('dashboard.routes')}>
              <p class="stat" data-testid="routes-total">
                {fmtNumber(s.routes.total)}
              </p>
              {s.routes.total === 0 ? (
                <p class="stat-label">
                  {t('dashboard.noRoutes')} <Link href="/routes">{t('dashboard.addRoute')}</Link>
                </p>
              ) : (
                <>
                  <p class="stat-label" data-testid="routes-active-label">
                    {t('dashboard.routesActive', { active: fmtNumber(s.routes.active), total: fmtNumber(s.routes.total) })}
                  </p>
                  <Link href="/routes">{t('dashboard.showRoutes')}</Link>
                </>
              )}
            </Card>
            <Card title={t('dashboard.monitoring')}>
              {s.monitoring.total === 0 ? (
                <>
                  <p class="stat">–</p>
                  <p class="stat-label">{t('dashboard.noMonitoring')}</p>
                </>
              ) : (
                <>
                  <p class="stat" data-testid="monitoring">
                    {fmtNumber(s.monitoring.up)}/{fmtNumber(s.monitoring.total)}
                  </p>
                  <p class="stat-label">
                    <StatusDot
                      state={s.monitoring.down > 0 ? 'down' : 'up'}
                      label={t('dashboard.monitoringUpDown', { up: fmtNumber(s.monitoring.up), down: fmtNumber(s.monitoring.down) })}
                    />
                  </p>
                </>
              )}
            </Card>
            <Card title={t('dashboard.trafficToday')}>
              <p class="stat" data-testid="traffic-today">
                {fmtBytes(s.traffic.today)}
              </p>
              <p class="stat-label">{t('dashboard.upDownTotals', { up: fmtBytes(s.traffic.todayUpload), down: fmtBytes(s.traffic.todayDownload) })}</p>
              <h3 class="dash-rates-title">{t('dashboard.liveRate')}</h3>
              <dl class="dash-rates" aria-live="off">
                <div>
                  <dt>{t('dashboard.upload')}</dt>
                  <dd data-testid="rate-up">{fmtRate(up)}</dd>
                </div>
                <div>
                  <dt>{t('dashboard.download')}</dt>
                  <dd data-testid="rate-down">{fmtRate(down)}</dd>
                </div>
              </dl>
            </Card>
          </div>
        </>
      )}
      <TrafficCard />
      <div class="grid-2">
        <ActivityCard />
        <div>
          <WireGuardCard />
          <CaddyCard />
          <ResourcesCard />
        </div>
      </div>
    </>
  );
}

function TrafficCard() {
  const lang = useLang();
  const [period, setPeriod] = useState<Period>('24h');
  const traffic = useApi<TrafficResponse>(`/dashboard/traffic?period=${period}`);
  // The chart's newest bucket grows with every poll: refresh it now and then while data flows.
  const refresh = useThrottled(traffic.reload, 30_000);
  useLive('peer_traffic', refresh);
  const d = traffic.data;
  const x = useMemo(() => (d ? d.points.map((p) => p.timestamp / 1000) : []), [d]);
  const series = useMemo<Series[]>(
    () =>
      d
        ? [
            { label: t('dashboard.upload'), values: d.points.map((p) => p.rx), color: cssColor('--accent', '#1f4fc4') },
            { label: t('dashboard.download'), values: d.points.map((p) => p.tx), color: cssColor('--ok', '#1b6e35') },
          ]
        : [],
    [d, lang],
  );
  const periods: { key: Period; label: string }[] = [
    { key: '1h', label: t('dashboard.period1h') },
    { key: '24h', label: t('dashboard.period24h') },
    { key: '7d', label: t('dashboard.period7d') },
  ];
  const empty = d && d.total_rx + d.total_tx === 0;
  return (
    <Card
      class="dash-traffic"
      title={t('dashboard.traffic')}
      actions={<Tabs tabs={periods} value={period} onChange={setPeriod} label={t('dashboard.period')} />}
    >
      <ErrorBanner error={traffic.error} onRetry={traffic.reload} />
      {!d ? (
        traffic.error ? null : (
          <Spinner />
        )
      ) : (
        <>
          <p class="stat-label" data-testid="traffic-period-total">
            {t('dashboard.periodTotals', { up: fmtBytes(d.total_rx), down: fmtBytes(d.total_tx) })}
          </p>
          {empty ? (
            <p class="muted dash-chart-empty">{t('dashboard.noTraffic')}</p>
          ) : (
            <TimeChart label={t('dashboard.chartLabel', { period: periods.find((p) => p.key === d.period)?.label ?? d.period })} x={x} series={series} />
          )}
        </>
      )}
    </Card>
  );
}

function ActivityCard() {
  const recent = useApi<RecentResponse>(`/logs/recent?limit=${RECENT}`);
  const [live, setLive] = useState<Activity[]>([]);
  // A reload (after `reset`) starts from the server's list again.
  useEffect(() => {
    setLive([]);
  }, [recent.data]);
  useLive('activity_recorded', (e) => {
    const entry: Activity | undefined = e.data.entry;
    if (entry) setLive((l) => [entry, ...l].slice(0, RECENT));
  });
  const entries = useMemo(() => {
    const seen = new Set<number>();
    return [...live, ...(recent.data?.entries ?? [])].filter((a) => (seen.has(a.id) ? false : (seen.add(a.id), true))).slice(0, RECENT);
  }, [live, recent.data]);
  return (
    <Card title={t('dashboard.activity')} actions={<Link href="/logs">{t('dashboard.allActivity')}</Link>}>
      <ErrorBanner error={recent.error} onRetry={recent.reload} />
      {!recent.data ? (
        recent.error ? null : (
          <Spinner />
        )
      ) : entries.length === 0 ? (
        <p class="muted">{t('dashboard.noActivity')}</p>
      ) : (
        <ul class="dash-activity" data-testid="activity">
          {entries.map((a) => (
            <li key={a.id} class={`sev-${a.severity}`}>
              <span class="dash-activity-msg">{wordRow(a)}</span>
              <time dateTime={a.created_at} title={fmtDate(a.created_at)}>
                {fmtAgo(a.created_at)}
              </time>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

function WireGuardCard() {
  const wg = useApi<WgStatusResponse>('/wg/status', ['wireguard_state']);
  const w = wg.data;
  return (
    <Card title={t('dashboard.wireguard')}>
      <ErrorBanner error={wg.error} onRetry={wg.reload} />
      {!w ? (
        wg.error ? null : (
          <Spinner />
        )
      ) : (
        <>
          <p data-testid="wg-state">
            <StatusDot
              state={!w.managed ? 'off' : w.running ? 'up' : 'down'}
              label={!w.managed ? t('dashboard.notManaged') : w.running ? t('dashboard.running') : t('dashboard.stopped')}
            />
          </p>
          <dl class="kv">
            <dt>{t('dashboard.interface')}</dt>
            <dd>{w.interface}</dd>
            {w.mode && (
              <>
                <dt>{t('dashboard.mode')}</dt>
                <dd>{w.mode}</dd>
              </>
            )}
            <dt>{t('dashboard.port')}</dt>
            <dd>{w.listen_port}</dd>
            <dt>{t('dashboard.lastPoll')}</dt>
            <dd>{fmtAgo(w.last_poll_at)}</dd>
          </dl>
        </>
      )}
    </Card>
  );
}

function CaddyCard() {
  const caddy = useApi<CaddyStatusResponse>('/caddy/status', ['caddy_state', 'config_changed']);
  const c = caddy.data;
  return (
    <Card title={t('dashboard.caddy')}>
      <ErrorBanner error={caddy.error} onRetry={caddy.reload} />
      {!c ? (
        caddy.error ? null : (
          <Spinner />
        )
      ) : (
        <>
          <p data-testid="caddy-state">
            <StatusDot
              state={c.mode === 'render-only' ? 'off' : !c.managed ? 'unknown' : !c.running ? 'down' : c.last_error ? 'warn' : 'up'}
              label={
                c.mode === 'render-only'
                  ? t('dashboard.renderOnly')
                  : !c.managed
                    ? t('dashboard.external')
                    : c.running
                      ? t('dashboard.running')
                      : t('dashboard.stopped')
              }
            />
          </p>
          <dl class="kv">
            {c.uptime_s !== null && (
              <>
                <dt>{t('dashboard.started')}</dt>
                <dd>{fmtAgo(Date.now() - c.uptime_s * 1000)}</dd>
              </>
            )}
            <dt>{t('dashboard.lastLoad')}</dt>
            <dd>{fmtAgo(c.last_load_at)}</dd>
            {c.last_error && (
              <>
                <dt>{t('dashboard.lastError')}</dt>
                <dd class="error-text" data-testid="caddy-last-error">
                  {word(c.last_error_code, c.last_error)}
                  {c.last_error_code && <div class="muted caddy-error-detail">{c.last_error}</div>}
                </dd>
              </>
            )}
          </dl>
        </>
      )}
    </Card>
  );
}
