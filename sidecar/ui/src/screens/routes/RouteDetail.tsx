// A route's detail (/routes/:id): its facts and status, the DNS check, the circuit breaker with
// reset, the uptime history with "check now", the trace of its last requests, and the actions
// (edit, route login, toggle, delete). Live: reloads on the route's events.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Badge, Card, ErrorBanner, Link, PageHeader, Spinner, StatusDot } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtDate, t, word } from '../../i18n';
import { navigate } from '../../router';
import { BreakerPanel } from './breaker';
import { ShareLinksPanel } from '../sharelinks/ShareLinksPanel';
import { DnsResult } from './RouteForm';
import { routeName, targetText, typeText, usePeers } from './RouteList';
import type { RouteCheckResponse, RouteChecksResponse, RouteResponse, RouteToggleResponse, TraceResponse } from '../../protocol';
import { monitorable, ROUTE_EVENTS, type Route } from './model';
import { CertificateBadge, EnabledBadge, MonitorStatus, ProtectionBadges, SiteLink, siteUrl } from './status';
import { ExposureBadge } from '../exposure/ExposureSection';
import { AccessBadge, AccessWindowCard } from '../schedule/AccessState';
import { BackendsCard, watched } from '../backends/BackendsCard';

const onOff = (b: boolean) => (b ? t('routes.on') : t('routes.off'));

/** What the certificate state means, when the badge alone does not say it. */
function certHint(r: Route): string | null {
  const c = r.certificate;
  if (c.state === 'not_applicable') return t('routes.certNoTlsHint');
  if (c.state === 'unknown') return t('routes.certUnknownHint');
  if (c.state === 'pending') return t('routes.certPendingHint') + (c.internal ? ` ${t('routes.certInternalHint')}` : '');
  return c.internal ? t('routes.certInternalHint') : null;
}

export default function RouteDetail(props: { id: number }) {
  const { data, error, reload } = useApi<RouteResponse>(`/routes/${props.id}`, ROUTE_EVENTS);
  const r = data?.route;
  useTitle(r ? routeName(r) : t('routes.title'));
  const peers = usePeers();
  const [busy, setBusy] = useState<string | null>(null);
  const [dns, setDns] = useState<{ matches: boolean; resolvedIps: string[]; expectedIp: string | null; publicHost?: string } | null>(null);

  if (!r) {
    return (
      <>
        <PageHeader title={t('routes.title')} back="/routes" />
        {error ? <ErrorBanner error={error} onRetry={reload} /> : <Spinner />}
      </>
    );
  }
  const run = async (key: string, fn: () => Promise<void>) => {
    setBusy(key);
    try {
      await fn();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const toggle = () =>
    run('toggle', async () => {
      const res = await api<RouteToggleResponse>('PUT', `/routes/${r.id}/toggle`);
      toast(res.enabled ? t('routes.enabledToast', { domain: r.domain }) : t('routes.disabledToast', { domain: r.domain }));
      reload();
    });
  const remove = async () => {
    if (!(await confirmAction(t('common.confirmDelete', { name: r.domain }), { confirmLabel: t('common.delete') }))) return;
    await run('delete', async () => {
      await api('DELETE', `/routes/${r.id}`);
      toast(t('routes.deletedToast', { domain: r.domain }));
      navigate('/routes');
    });
  };
  const checkDns = () =>
    run('dns', async () => {
      setDns(await api('POST', '/routes/check-dns', { domain: r.domain }));
    });

  const http = r.route_type === 'http';
  const facts: [string, string][] = [
    [t('routes.type'), typeText(r)],
    [t('routes.target'), targetText(r, peers.byId)],
    ...(r.route_type === 'l4' ? [[t('routes.l4TlsMode'), t(`routes.tls_${r.l4_tls_mode ?? 'none'}`)] as [string, string]] : []),
    ...(r.description ? [[t('routes.description'), r.description] as [string, string]] : []),
    [t('routes.created'), fmtDate(r.created_at)],
    [t('routes.updated'), fmtDate(r.updated_at)],
  ];
  const features: [string, boolean, string?][] = [
    ...(http
      ? ([
          [t('routes.https'), r.https_enabled],
          [t('routes.backendHttps'), r.backend_https],
          [t('backends.compression'), r.compress_enabled, r.compression.join(', ') || undefined],
          [t('routes.secBasicAuth'), r.basic_auth_user !== null, r.basic_auth_user ?? undefined],
        ] as [string, boolean, string?][])
      : []),
    [t('routes.secAcl'), r.acl_enabled, r.acl_enabled ? r.acl_peer_ids.map((i) => peers.byId.get(i)?.name ?? `#${i}`).join(', ') : undefined],
    [
      t('routes.secIpFilter'),
      r.ip_filter_enabled,
      r.ip_filter_enabled ? `${r.ip_filter_mode === 'blacklist' ? t('routes.blacklist') : t('routes.whitelist')}: ${r.ip_filter_rules.join(', ')}` : undefined,
    ],
    ...(http
      ? ([
          [t('routes.secRateLimit'), r.rate_limit_enabled, r.rate_limit_enabled ? `${r.rate_limit_requests} / ${r.rate_limit_window}` : undefined],
          [t('routes.secBot'), r.bot_blocker_enabled, r.bot_blocker_enabled ? (r.bot_blocker_mode ?? undefined) : undefined],
          [t('routes.secRetry'), r.retry_enabled, r.retry_enabled ? `${r.retry_count} × (${r.retry_status_codes})` : undefined],
          [
            t('routes.secBreaker'),
            r.circuit_breaker_enabled,
            r.circuit_breaker_enabled ? t('routes.breakerSummary', { n: r.circuit_breaker_threshold ?? 0, s: r.circuit_breaker_timeout ?? 0 }) : undefined,
          ],
          [
            t('routes.secMirror'),
            r.mirror_enabled,
            r.mirror_enabled ? r.mirror_targets.map((m) => ('url' in m ? m.url : `peer ${m.peer_id}:${m.port}`)).join(', ') : undefined,
          ],
          [t('routes.debugOn'), r.debug_enabled],
        ] as [string, boolean, string?][])
      : []),
    [t('routes.monitoringOn'), r.monitoring_enabled],
  ];

  return (
    <>
      <PageHeader title={routeName(r)} back="/routes">
        {r.rdp_route_id !== null ? (
          <Link class="btn" href={`/rdp/${r.rdp_route_id}`}>
            {t('routes.managedByRdp')}
          </Link>
        ) : (
          <>
            <Link class="btn" href={`/routes/${r.id}/edit`}>
              {t('common.edit')}
            </Link>
            {http && (
              <Link class="btn" href={`/routes/${r.id}/auth`}>
                {t('routes.routeAuthButton')}
              </Link>
            )}
            <button type="button" class="btn" disabled={busy === 'toggle'} aria-busy={busy === 'toggle'} onClick={toggle}>
              {r.enabled ? t('common.disable') : t('common.enable')}
            </button>
            <button type="button" class="btn danger" disabled={busy === 'delete'} onClick={remove}>
              {t('common.delete')}
            </button>
          </>
        )}
      </PageHeader>
      {r.rdp_route_id !== null && (
        <p class="banner info" role="note">
          {t('routes.managedByRdpHint')}
        </p>
      )}
      <div class="grid-2 route-cards">
        <Card title={t('routes.facts')}>
          <p class="route-status">
            <EnabledBadge enabled={r.enabled} />
            <MonitorStatus route={r} />
            <AccessBadge item={r} />
          </p>
          <dl class="route-facts">
            {facts.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        </Card>
        <Card title={t('routes.protection')}>
          <ExposureBadge route={r} />
          <ProtectionBadges route={r} />
          {r.route_auth?.pending_method && <p class="hint">{t('routes.protPendingHint', { method: t(`routes.login_${r.route_auth.pending_method}`) })}</p>}
          <dl class="route-facts">
            {siteUrl(r) && (
              <div>
                <dt>{t('routes.site')}</dt>
                <dd>
                  <SiteLink route={r} />
                </dd>
              </div>
            )}
            <div>
              <dt>{t('routes.certificate')}</dt>
              <dd>
                <CertificateBadge route={r} />
              </dd>
            </div>
            {r.certificate.issuer && (
              <div>
                <dt>{t('routes.certIssuer')}</dt>
                <dd>{r.certificate.issuer}</dd>
              </div>
            )}
            {r.certificate.not_after && (
              <div>
                <dt>{t('routes.certExpires')}</dt>
                <dd>{fmtDate(r.certificate.not_after)}</dd>
              </div>
            )}
            {r.certificate.last_error && (
              <div>
                <dt>{t('routes.certLastError')}</dt>
                <dd class="cert-error">
                  {r.certificate.last_error_at ? `${fmtDate(r.certificate.last_error_at)}: ` : ''}
                  {r.certificate.last_error}
                </dd>
              </div>
            )}
          </dl>
          {certHint(r) && <p class="hint">{certHint(r)}</p>}
        </Card>
        <Card title={t('routes.settings')}>
          <dl class="route-facts">
            {features.map(([k, on, extra]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>
                  <Badge tone={on ? 'ok' : 'muted'}>{onOff(on)}</Badge>
                  {extra ? ` ${extra}` : ''}
                </dd>
              </div>
            ))}
          </dl>
        </Card>
        <Card title={t('routes.dnsTitle')}>
          <p class="hint">{t('routes.dnsHint')}</p>
          <button type="button" class="btn small" disabled={busy === 'dns'} aria-busy={busy === 'dns'} onClick={checkDns}>
            {busy === 'dns' ? t('common.loading') : t('routes.checkDns')}
          </button>
          {dns && <DnsResult dns={dns} />}
        </Card>
        <AccessWindowCard item={r} kind={http ? 'http' : 'l4'} />
        {http && (
          <Card title={t('routes.secBreaker')}>
            <BreakerPanel routeId={r.id} />
          </Card>
        )}
      </div>
      {watched(r) && <BackendsCard route={r} peers={peers.byId} />}
      {http && (r.route_auth || (r.basic_auth_user !== null && r.basic_auth_password_set && !r.domain.startsWith('*.'))) && <ShareLinksPanel routeId={r.id} />}
      <Uptime route={r} />
      {http && <TraceView route={r} />}
    </>
  );
}

function Uptime(props: { route: Route }) {
  const r = props.route;
  const { data, error, reload } = useApi<RouteChecksResponse>(`/routes/${r.id}/checks?limit=50`, ['route_up', 'route_down']);
  const [busy, setBusy] = useState(false);
  const can = monitorable(r);
  const checkNow = async () => {
    setBusy(true);
    try {
      const res = await api<RouteCheckResponse>('POST', `/routes/${r.id}/check`);
      toast(res.check.up ? t('routes.checkUp') : t('routes.checkDown'), res.check.up ? 'ok' : 'bad');
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(false);
    }
  };
  const checks = data?.checks ?? [];
  const up = checks.filter((c) => c.up).length;
  return (
    <Card
      title={t('routes.uptimeTitle')}
      class="route-uptime"
      actions={
        can ? (
          <button type="button" class="btn small" disabled={busy} aria-busy={busy} onClick={checkNow}>
            {busy ? t('common.loading') : t('routes.checkNow')}
          </button>
        ) : undefined
      }
    >
      <ErrorBanner error={error} onRetry={reload} />
      {!can ? (
        <p class="hint">{t('routes.monitoringUdp')}</p>
      ) : !checks.length ? (
        <p class="muted">{r.monitoring_enabled ? t('routes.noChecksYet') : t('routes.noChecksOff')}</p>
      ) : (
        <>
          <p>{t('routes.uptimeSummary', { up, total: checks.length, pct: Math.round((up / checks.length) * 100) })}</p>
          <ol class="uptime-bar" aria-label={t('routes.uptimeBar')}>
            {[...checks].reverse().map((c) => (
              <li key={c.checked_at} class={c.up ? 'up' : 'down'} title={`${fmtDate(c.checked_at)}: ${c.up ? t('routes.monUp') : t('routes.monDown')}`}>
                <span class="sr-only">
                  {fmtDate(c.checked_at)}: {c.up ? t('routes.monUp') : t('routes.monDown')}
                </span>
              </li>
            ))}
          </ol>
          <div class="table-wrap">
            <table class="table" aria-label={t('routes.uptimeTitle')}>
              <thead>
                <tr>
                  <th scope="col">{t('routes.time')}</th>
                  <th scope="col">{t('routes.result')}</th>
                  <th scope="col">{t('routes.httpStatus')}</th>
                  <th scope="col">{t('routes.responseTime')}</th>
                  <th scope="col">{t('routes.errorCol')}</th>
                </tr>
              </thead>
              <tbody>
                {checks.slice(0, 10).map((c) => (
                  <tr key={c.checked_at}>
                    <td data-label={t('routes.time')}>{fmtDate(c.checked_at)}</td>
                    <td data-label={t('routes.result')}>
                      <StatusDot state={c.up ? 'up' : 'down'} label={c.up ? t('routes.monUp') : t('routes.monDown')} />
                    </td>
                    <td data-label={t('routes.httpStatus')}>{c.status ?? '–'}</td>
                    <td data-label={t('routes.responseTime')}>{c.response_ms === null ? '–' : t('routes.ms', { n: c.response_ms })}</td>
                    <td data-label={t('routes.errorCol')}>{c.error ? word(c.error_code, c.error) : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Card>
  );
}

function TraceView(props: { route: Route }) {
  const r = props.route;
  const { data, error, reload, loading } = useApi<TraceResponse>(`/routes/${r.id}/trace`);
  const [open, setOpen] = useState<number | null>(null);
  return (
    <Card
      title={t('routes.traceTitle')}
      class="route-trace"
      actions={
        <button type="button" class="btn small" disabled={loading} aria-busy={loading} onClick={reload}>
          {t('common.refresh')}
        </button>
      }
    >
      <p class="hint">{data?.debug_enabled ? t('routes.traceDebugOn') : t('routes.traceHint')}</p>
      <ErrorBanner error={error} onRetry={reload} />
      {data && !data.requests.length && <p class="muted">{t('routes.traceEmpty')}</p>}
      {data && data.requests.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label={t('routes.traceTitle')}>
            <thead>
              <tr>
                <th scope="col">{t('routes.time')}</th>
                <th scope="col">{t('routes.request')}</th>
                <th scope="col">{t('routes.httpStatus')}</th>
                <th scope="col">{t('routes.duration')}</th>
                <th scope="col">{t('routes.client')}</th>
                <th scope="col">{t('routes.upstream')}</th>
              </tr>
            </thead>
            <tbody>
              {data.requests.map((q, i) => (
                <Fragment key={`${q.time}-${i}`}>
                  <tr>
                    <td data-label={t('routes.time')}>{fmtDate(q.time)}</td>
                    <td data-label={t('routes.request')}>
                      <code>
                        {q.method} {q.uri}
                      </code>
                      {q.request_headers && (
                        <button type="button" class="btn small ghost" aria-expanded={open === i} onClick={() => setOpen(open === i ? null : i)}>
                          {t('routes.headers')}
                        </button>
                      )}
                    </td>
                    <td data-label={t('routes.httpStatus')}>
                      <Badge tone={q.status >= 500 ? 'bad' : q.status >= 400 ? 'warn' : 'ok'}>{q.status}</Badge>
                    </td>
                    <td data-label={t('routes.duration')}>{t('routes.ms', { n: q.duration_ms })}</td>
                    <td data-label={t('routes.client')}>
                      {q.client_ip}
                      {q.auth_user ? ` (${q.auth_user})` : ''}
                    </td>
                    <td data-label={t('routes.upstream')}>{q.upstream ?? '–'}</td>
                  </tr>
                  {open === i && q.request_headers && (
                    <tr class="trace-headers">
                      <td colSpan={6}>
                        <pre>
                          {Object.entries(q.request_headers)
                            .map(([k, v]) => `> ${k}: ${v.join(', ')}`)
                            .join('\n')}
                          {'\n'}
                          {Object.entries(q.response_headers ?? {})
                            .map(([k, v]) => `< ${k}: ${v.join(', ')}`)
                            .join('\n')}
                        </pre>
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
