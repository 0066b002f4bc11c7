// Dashboard: the figures of GET /dashboard/stats, refreshed by live events.
import { Card, ErrorBanner, PageHeader, Spinner, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtBytes, fmtRate, t, useLang } from '../../i18n';

interface Stats {
  peers: { total: number; online: number };
  routes: { active: number };
  monitoring: { total: number; up: number; down: number };
  traffic: { today: number; todayUpload: number; todayDownload: number; uploadRate: number; downloadRate: number };
  wireguard: { running: boolean };
}

export default function DashboardScreen() {
  useLang();
  const { data, error, reload } = useApi<{ stats?: Stats } & Partial<Stats>>('/dashboard/stats', ['peer_online', 'peer_offline', 'peer_created', 'peer_deleted', 'route_created', 'route_deleted', 'route_up', 'route_down']);
  const s: Stats | undefined = (data?.stats ?? (data?.peers ? (data as Stats) : undefined));
  return (
    <>
      <PageHeader title={t('dashboard.title')} />
      <ErrorBanner error={error} onRetry={reload} />
      {!s ? <Spinner /> : (
        <div class="grid">
          <Card title={t('dashboard.peers')}><p class="stat">{s.peers.online}</p><p class="stat-label">{t('dashboard.peersOnline', { online: s.peers.online, total: s.peers.total })}</p></Card>
          <Card title={t('dashboard.routes')}><p class="stat">{s.routes.active}</p></Card>
          <Card title={t('dashboard.monitoring')}><p class="stat">{s.monitoring.up}/{s.monitoring.total}</p><p class="stat-label">{t('dashboard.monitoringUpDown', { up: s.monitoring.up, down: s.monitoring.down })}</p></Card>
          <Card title={t('dashboard.trafficToday')}>
            <p class="stat">{fmtBytes(s.traffic.today)}</p>
            <p class="stat-label">{t('dashboard.upload')} {fmtRate(s.traffic.uploadRate)} · {t('dashboard.download')} {fmtRate(s.traffic.downloadRate)}</p>
          </Card>
          <Card title={t('dashboard.wireguard')}>
            <StatusDot state={s.wireguard.running ? 'up' : 'down'} label={s.wireguard.running ? t('dashboard.running') : t('dashboard.stopped')} />
          </Card>
        </div>
      )}
    </>
  );
}
