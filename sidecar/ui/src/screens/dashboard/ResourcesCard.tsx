// The host's resources on the dashboard (GET /system/resources): CPU share and model, memory, the
// data directory's disk (used + available + reserved for root = size), Gatehouse's uptime (the sidecar
// process) and the host's. No event announces them: fetched again every 30 s while the page
// is open (the CPU share is measured between two calls).
import { useEffect } from 'preact/hooks';
import { Card, ErrorBanner, Spinner } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtBytes, fmtDate, fmtNumber, t, useLang } from '../../i18n';
import type { ResourcesResponse as Resources } from '../../protocol';

export const RESOURCES_REFRESH_MS = 30_000;

function Bar({ percent }: { percent: number }) {
  const p = Math.max(0, Math.min(100, percent));
  return (
    <div class={`dash-bar${p >= 90 ? ' high' : ''}`} aria-hidden="true">
      <span style={{ width: `${p}%` }} />
    </div>
  );
}

const pct = (n: number) => `${fmtNumber(n, 1)} %`;

export function ResourcesCard() {
  useLang();
  const res = useApi<Resources>('/system/resources');
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') res.reload();
    }, RESOURCES_REFRESH_MS);
    return () => clearInterval(timer);
  }, [res.reload]);
  const r = res.data;
  const diskPercent = r && r.disk.total > 0 ? (r.disk.used / r.disk.total) * 100 : 0;
  const span = (u: { days: number; hours: number; minutes: number }) =>
    t('dashboard.uptimeValue', { days: fmtNumber(u.days), hours: fmtNumber(u.hours), minutes: fmtNumber(u.minutes) });
  return (
    <Card title={t('dashboard.system')} class="dash-resources">
      <ErrorBanner error={res.error} onRetry={res.reload} />
      {!r ? (
        res.error ? null : (
          <Spinner />
        )
      ) : (
        <dl class="kv" data-testid="resources">
          <dt>{t('dashboard.cpu')}</dt>
          <dd>
            <span data-testid="res-cpu">{pct(r.cpu.percent)}</span>
            <Bar percent={r.cpu.percent} />
            <span class="muted dash-res-detail" data-testid="res-cpu-model">
              {t('dashboard.cpuCores', { cores: fmtNumber(r.cpu.cores), model: r.cpu.model })}
            </span>
          </dd>
          <dt>{t('dashboard.memory')}</dt>
          <dd>
            <span data-testid="res-memory">
              {t('dashboard.usedOf', { used: fmtBytes(r.memory.used), total: fmtBytes(r.memory.total), percent: pct(r.memory.percent) })}
            </span>
            <Bar percent={r.memory.percent} />
          </dd>
          <dt>{t('dashboard.disk')}</dt>
          <dd>
            <span data-testid="res-disk">
              {t('dashboard.usedOf', { used: fmtBytes(r.disk.used), total: fmtBytes(r.disk.total), percent: pct(diskPercent) })}
            </span>
            <Bar percent={diskPercent} />
            <span class="muted dash-res-detail" data-testid="res-disk-parts">
              {r.disk.reserved > 0
                ? t('dashboard.diskParts', {
                    used: fmtBytes(r.disk.used),
                    available: fmtBytes(r.disk.available),
                    reserved: fmtBytes(r.disk.reserved),
                    total: fmtBytes(r.disk.total),
                  })
                : t('dashboard.diskPartsNoReserve', { used: fmtBytes(r.disk.used), available: fmtBytes(r.disk.available), total: fmtBytes(r.disk.total) })}
            </span>
          </dd>
          <dt>{t('dashboard.uptime')}</dt>
          <dd>
            <span data-testid="res-uptime">{span(r.gatehouse_uptime)}</span>
            <span class="muted dash-res-detail" data-testid="res-start">
              {t('dashboard.startTime', { time: fmtDate(r.gatehouse_uptime.startTime) })}
            </span>
          </dd>
          <dt>{t('dashboard.hostUptime')}</dt>
          <dd>
            <span data-testid="res-host-uptime">{span(r.uptime)}</span>
            <span class="muted dash-res-detail" data-testid="res-boot">
              {t('dashboard.bootTime', { time: fmtDate(r.uptime.bootTime) })}
            </span>
          </dd>
        </dl>
      )}
    </Card>
  );
}
