// /peers/:id: the facts of one peer (handshake age kept current), its config and QR code on
// demand, the 24h/7d/30d traffic chart, edit/toggle/delete; live events update it in place.
import { useMemo, useState } from 'preact/hooks';
import { api } from '../../api';
import { TimeChart } from '../../components/chart';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { Badge, Card, EmptyState, ErrorBanner, Link, PageHeader, Spinner, Tabs } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtAgo, fmtBytes, fmtDate, t, useLang } from '../../i18n';
import { useLive } from '../../live';
import { navigate } from '../../router';
import type { GroupsResponse, PeerResponse, PeerToggleResponse, PeerTrafficResponse, TagsResponse } from '../../protocol';
import { appInfo } from '../../session';
import { useStore } from '../../store';
import { ClientTunnelText, ConfigOutdatedBadge, GROUP_EVENTS, PeerConfig, PeerForm, PeerStatus, splitTags, useNow } from './shared';
import { speedLimitText } from '../shaping/speed-limit';
import { ConfigLinks } from './config-links';
import { QuotaFacts } from '../quotas/quota';
import { AccessBadge, AccessWindowCard } from '../schedule/AccessState';

/** The periods the chart offers (the API has 1h too). */
type Period = Extract<PeerTrafficResponse['period'], '24h' | '7d' | '30d'>;

export default function PeerDetail({ id }: { id: number }) {
  useLang();
  const peer = useApi<PeerResponse>(`/peers/${id}`);
  const app = useStore(appInfo);
  const host = app?.public_host.host;
  const serverEndpoint = app && host ? `${host.includes(':') ? `[${host}]` : host}:${app.wireguard.port}` : null;
  const groups = useApi<GroupsResponse>('/peer-groups', GROUP_EVENTS);
  const tags = useApi<TagsResponse>('/tags');
  const [gone, setGone] = useState(false);
  const [period, setPeriod] = useState<Period>('24h');
  const [showConfig, setShowConfig] = useState(false);
  const [editing, setEditing] = useState(false);
  const [totals, setTotals] = useState<{ total_rx: number; total_tx: number } | null>(null);
  const now = useNow(5_000);
  const p = peer.data?.peer;
  useTitle(p?.name ?? t('peers.title'));

  // Only this peer's events reload it; its byte counters follow peer_traffic.
  useLive(
    [
      'peer_updated',
      'peer_enabled',
      'peer_disabled',
      'peer_expired',
      'peer_online',
      'peer_offline',
      'peer_deleted',
      'peer_quota_warning',
      'peer_quota_exceeded',
      'peer_quota_reset',
      'peer_quota_granted',
      'peer_access_closed',
      'peer_access_opened',
    ],
    (e) => {
      if (e.data.peer_id !== id) return;
      if (e.type === 'peer_deleted') setGone(true);
      else peer.reload();
    },
  );
  useLive('peer_traffic', (e) => {
    const mine = e.data.peers.find((x) => x.peer_id === id);
    if (mine) setTotals({ total_rx: mine.total_rx, total_tx: mine.total_tx });
  });

  if (gone || peer.error?.status === 404) {
    return (
      <>
        <PageHeader title={t('peers.title')} back="/peers" />
        <EmptyState title={t('common.notFoundTitle')} text={t('peers.notFound')} />
      </>
    );
  }
  if (!p) return <>{peer.error ? <ErrorBanner error={peer.error} onRetry={peer.reload} /> : <Spinner />}</>;

  const group = p.group_id ? groups.data?.groups.find((g) => g.id === p.group_id) : undefined;
  const rx = totals?.total_rx ?? p.total_rx;
  const tx = totals?.total_tx ?? p.total_tx;
  const toggle = async () => {
    try {
      const r = await api<PeerToggleResponse>('PUT', `/peers/${id}/toggle`);
      toast(t(r.enabled ? 'peers.enabledToast' : 'peers.disabledToast', { name: p.name }));
      peer.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const remove = async () => {
    if (!(await confirmAction(t('peers.confirmDelete', { name: p.name }), { confirmLabel: t('common.delete') }))) return;
    try {
      await api('DELETE', `/peers/${id}`);
      toast(t('peers.deletedToast', { name: p.name }));
      navigate('/peers');
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };

  return (
    <>
      <PageHeader title={p.name} back="/peers">
        <button type="button" class="btn" onClick={toggle}>
          {p.enabled ? t('common.disable') : t('common.enable')}
        </button>
        <button type="button" class="btn" onClick={() => setEditing(true)}>
          {t('common.edit')}
        </button>
        <button type="button" class="btn danger" onClick={remove}>
          {t('common.delete')}
        </button>
      </PageHeader>
      <div class="grid-2 peer-detail">
        <Card title={t('peers.facts')}>
          <dl class="facts">
            <dt>{t('peers.status')}</dt>
            <dd>
              <PeerStatus peer={p} now={now} /> <AccessBadge item={p} />
            </dd>
            <dt>{t('peers.handshake')}</dt>
            <dd>
              {p.latestHandshake ? (
                <time dateTime={new Date(p.latestHandshake).toISOString()} title={fmtDate(p.latestHandshake)}>
                  {fmtAgo(p.latestHandshake, now)}
                </time>
              ) : (
                t('peers.neverConnected')
              )}
            </dd>
            <dt>{t('peers.address')}</dt>
            <dd>
              <code>{p.address}</code>
            </dd>
            <dt>{t('peers.publicKey')}</dt>
            <dd>
              <code class="wrap">{p.public_key}</code>
            </dd>
            <dt>{t('peers.endpoint')}</dt>
            <dd>{p.endpoint ? <code>{p.endpoint}</code> : '–'}</dd>
            <dt>{t('peers.traffic')}</dt>
            <dd>{t('peers.totals', { rx: fmtBytes(rx), tx: fmtBytes(tx) })}</dd>
            <dt>{t('peers.peerType')}</dt>
            <dd>{p.is_gateway ? t('peers.typeGateway') : t('peers.typeRegular')}</dd>
            <dt>{t('peers.group')}</dt>
            <dd>{group ? <Link href={`/peers?group_id=${group.id}`}>{group.name}</Link> : '–'}</dd>
            <dt>{t('peers.tags')}</dt>
            <dd>
              {splitTags(p.tags).length
                ? splitTags(p.tags).map((x) => (
                    <Link key={x} class="badge" href={`/peers?tag=${encodeURIComponent(x)}`}>
                      {x}
                    </Link>
                  ))
                : '–'}
            </dd>
            <dt>{t('peers.hostname')}</dt>
            <dd>{p.hostname ?? '–'}</dd>
            <dt>{t('peers.allowedIps')}</dt>
            <dd>
              <code>{p.allowed_ips}</code>
            </dd>
            {!p.is_gateway && (
              <>
                <dt>{t('peers.clientTraffic')}</dt>
                <dd>
                  <ClientTunnelText peer={p} subnet={app?.wireguard.subnet} />
                </dd>
              </>
            )}
            <dt>{t('shaping.speedLimit')}</dt>
            <dd data-testid="speed-limit">
              {p.speed_limit
                ? `${speedLimitText(p.speed_limit)} (${t('shaping.own')})`
                : group?.speed_limit
                  ? `${speedLimitText(group.speed_limit)} (${t('shaping.fromGroup', { name: group.name })})`
                  : t('shaping.none')}
            </dd>
            <dt>{t('quotas.quota')}</dt>
            <dd>
              <QuotaFacts peer={p} groupName={group?.name} groupQuota={group?.quota} onChange={() => peer.reload()} />
            </dd>
            <dt>{t('peers.dns')}</dt>
            <dd>{p.dns ?? '–'}</dd>
            <dt>{t('peers.expires')}</dt>
            <dd>
              {p.expires_at ? fmtDate(p.expires_at) : '–'}
              {p.expired && (
                <>
                  {' '}
                  <Badge tone="warn">{t('peers.expiredState')}</Badge>
                </>
              )}
            </dd>
            <dt>{t('peers.created')}</dt>
            <dd>{fmtDate(p.created_at)}</dd>
            {p.description && (
              <>
                <dt>{t('peers.description')}</dt>
                <dd class="pre-line">{p.description}</dd>
              </>
            )}
          </dl>
        </Card>
        <Card
          title={t('peers.config')}
          actions={
            <button type="button" class="btn small" aria-expanded={showConfig} onClick={() => setShowConfig(!showConfig)}>
              {showConfig ? t('peers.hideConfig') : t('peers.showConfig')}
            </button>
          }
        >
          {p.config_outdated && (
            <div class="banner warn" role="status" data-testid="config-outdated-banner">
              <p>
                <ConfigOutdatedBadge peer={p} />{' '}
                {serverEndpoint && p.config_endpoint === serverEndpoint
                  ? t('peers.configOutdatedTunnelText')
                  : t('peers.configOutdatedText', { old: p.config_endpoint ?? '–', now: serverEndpoint ?? '–' })}
              </p>
            </div>
          )}
          {showConfig ? <PeerConfig id={id} name={p.name} onLoaded={peer.reload} /> : <p class="muted">{t('peers.configHint')}</p>}
        </Card>
      </div>
      <AccessWindowCard item={p} kind="peer" />
      <ConfigLinks peerId={id} name={p.name} />
      <Card
        class="chart-card"
        title={t('peers.chart')}
        actions={
          <Tabs
            label={t('peers.periods')}
            value={period}
            onChange={setPeriod}
            tabs={[
              { key: '24h', label: t('peers.period24h') },
              { key: '7d', label: t('peers.period7d') },
              { key: '30d', label: t('peers.period30d') },
            ]}
          />
        }
      >
        <TrafficChart id={id} name={p.name} period={period} />
      </Card>
      <Modal wide open={editing} onClose={() => setEditing(false)} title={t('peers.editTitle', { name: p.name })}>
        {editing && (
          <PeerForm
            peer={p}
            groups={groups.data?.groups ?? []}
            tags={tags.data?.tags ?? []}
            onCancel={() => setEditing(false)}
            onDone={(saved) => {
              toast(t('peers.savedToast', { name: saved.name }));
              setEditing(false);
              peer.reload();
            }}
          />
        )}
      </Modal>
    </>
  );
}

function TrafficChart(props: { id: number; name: string; period: Period }) {
  const { data, error } = useApi<PeerTrafficResponse>(`/peers/${props.id}/traffic?period=${props.period}`, ['peer_traffic']);
  const chart = useMemo(() => {
    if (!data) return null;
    return {
      x: data.points.map((p) => Math.round(p.timestamp / 1000)),
      series: [
        { label: t('peers.rx'), values: data.points.map((p) => p.rx), color: '#2563eb' },
        { label: t('peers.tx'), values: data.points.map((p) => p.tx), color: '#16a34a' },
      ],
    };
  }, [data]);
  const periodLabel = props.period === '24h' ? t('peers.period24h') : props.period === '7d' ? t('peers.period7d') : t('peers.period30d');
  if (error) return <ErrorBanner error={error} />;
  if (!data || !chart) return <Spinner />;
  return (
    <>
      <p class="muted small">
        {t('peers.totals', { rx: fmtBytes(data.total_rx), tx: fmtBytes(data.total_tx) })}
        {!data.total_rx && !data.total_tx ? ` · ${t('peers.noTraffic')}` : ''}
      </p>
      <TimeChart label={t('peers.chartLabel', { name: props.name, period: periodLabel })} x={chart.x} series={chart.series} />
    </>
  );
}
