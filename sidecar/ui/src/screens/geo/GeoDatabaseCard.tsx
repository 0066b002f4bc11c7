// The System screen's card of the country database (GET /system/geoip): whether GATEHOUSE_GEOIP_DB
// is set and usable, its type and source, build date, the file, and the routes that use it.
import { Card, ErrorBanner, Spinner, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtBytes, fmtDate, t } from '../../i18n';
import type { GeoipStatusResponse } from '../../protocol';

export function GeoDatabaseCard() {
  const r = useApi<GeoipStatusResponse>('/system/geoip', ['route_created', 'route_updated', 'route_deleted']);
  const g = r.data?.geoip;
  return (
    <Card title={t('geo.dbTitle')}>
      <ErrorBanner error={r.error} onRetry={r.reload} />
      {!g ? (
        !r.error && <Spinner />
      ) : (
        <div data-testid="geoip-card">
          <p>
            <StatusDot
              state={g.present ? 'up' : g.configured ? 'down' : 'off'}
              label={g.present ? t('geo.dbPresent') : g.configured ? t('geo.dbMissing') : t('geo.dbNotConfigured')}
            />
          </p>
          {!g.configured && <p class="banner info">{t('geo.dbNotConfiguredHint')}</p>}
          <dl class="facts">
            {g.path && (
              <>
                <dt>{t('geo.dbPath')}</dt>
                <dd>
                  <code>{g.path}</code>
                </dd>
              </>
            )}
            {g.database_type && (
              <>
                <dt>{t('geo.dbType')}</dt>
                <dd>
                  <code>{g.database_type}</code>
                  {g.description ? <span class="muted"> · {g.description}</span> : null}
                </dd>
              </>
            )}
            {g.source && (
              <>
                <dt>{t('geo.dbSource')}</dt>
                <dd>{t(`geo.source_${g.source}`)}</dd>
              </>
            )}
            {g.built_at && (
              <>
                <dt>{t('geo.dbBuilt')}</dt>
                <dd data-testid="geoip-built">{fmtDate(g.built_at)}</dd>
              </>
            )}
            {g.modified_at && (
              <>
                <dt>{t('geo.dbModified')}</dt>
                <dd>{fmtDate(g.modified_at)}</dd>
              </>
            )}
            {g.size_bytes !== null && (
              <>
                <dt>{t('geo.dbSize')}</dt>
                <dd>{fmtBytes(g.size_bytes)}</dd>
              </>
            )}
            <dt>{t('geo.dbRoutes')}</dt>
            <dd>{g.routes_with_filter}</dd>
            {g.error && (
              <>
                <dt>{t('geo.dbError')}</dt>
                <dd class="bad">{g.error}</dd>
              </>
            )}
          </dl>
        </div>
      )}
    </Card>
  );
}
