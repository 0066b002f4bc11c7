// Status pieces shared by the list and the detail: enabled, the last uptime check, the breaker, the
// protection, the certificate and the link to the site.
import type { JSX } from 'preact';
import { Badge, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { lang, t } from '../../i18n';
import type { RouteChecksResponse } from '../../protocol';
import { breakerState, monitorable, type Route } from './model';

/** The newest uptime check of a monitored route (reloaded on route_up/route_down). */
export function MonitorStatus(props: { route: Route }) {
  const r = props.route;
  const on = r.monitoring_enabled && monitorable(r);
  const { data } = useApi<RouteChecksResponse>(on ? `/routes/${r.id}/checks?limit=1` : null, ['route_up', 'route_down']);
  if (!on) return null;
  const last = data?.checks?.[0];
  if (!last) return <StatusDot state="unknown" label={t('routes.monPending')} />;
  return <StatusDot state={last.up ? 'up' : 'down'} label={last.up ? t('routes.monUp') : t('routes.monDown')} />;
}

export function BreakerBadge(props: { route: Route }) {
  const s = breakerState(props.route);
  if (s === 'off') return null;
  const tone = s === 'closed' ? 'ok' : s === 'open' ? 'bad' : 'warn';
  return <Badge tone={tone}>{t(`routes.breaker_${s}`)}</Badge>;
}

export function EnabledBadge(props: { enabled: boolean }) {
  return <Badge tone={props.enabled ? 'ok' : 'muted'}>{props.enabled ? t('common.enabled') : t('common.disabled')}</Badge>;
}

/** The route login's method as a short label (the route-auth methods). */
function methodLabel(m: string): string {
  return t(`routes.login_${m}`);
}

/**
 * What protects a route, as compact badges: route login (its method, second factor, a switch to
 * TOTP pending verification), basic auth, ACL, IP filter; "no protection" when none of them.
 */
export function ProtectionBadges(props: { route: Route }) {
  const r = props.route;
  const items: JSX.Element[] = [];
  const a = r.route_auth;
  if (a) {
    const method = methodLabel(a.method) + (a.two_factor_method ? ` + ${methodLabel(a.two_factor_method)}` : '');
    items.push(
      <Badge key="login" tone="ok">
        {t('routes.protLogin', { method })}
      </Badge>,
    );
    if (a.pending_method)
      items.push(
        <Badge key="pending" tone="warn">
          {t('routes.protPending', { method: methodLabel(a.pending_method) })}
        </Badge>,
      );
  }
  if (r.basic_auth_user !== null)
    items.push(
      <Badge key="basic" tone="ok">
        {t('routes.protBasic')}
      </Badge>,
    );
  if (r.acl_enabled)
    items.push(
      <Badge key="acl" tone="info">
        {t('routes.protAcl', { n: r.acl_peer_ids.length })}
      </Badge>,
    );
  if (r.ip_filter_enabled)
    items.push(
      <Badge key="ip" tone="info">
        {t(r.ip_filter_mode === 'blacklist' ? 'routes.protIpBlock' : 'routes.protIpAllow', { n: r.ip_filter_rules.length })}
      </Badge>,
    );
  // an internal route (its Exposure badge, screens/exposure) is not open to everyone
  if (!items.length && r.exposure !== 'internal')
    items.push(
      <Badge key="none" tone="warn">
        {t('routes.protNone')}
      </Badge>,
    );
  return <span class="route-status route-protection">{items}</span>;
}

const CERT_TONE: Record<Route['certificate']['state'], 'ok' | 'warn' | 'bad' | 'muted' | 'info'> = {
  valid: 'ok',
  expiring: 'warn',
  expired: 'bad',
  pending: 'info',
  error: 'bad',
  not_applicable: 'muted',
  unknown: 'muted',
};

/** The certificate state in one badge (with the expiry date when there is one; issuer and error in its title). */
export function CertificateBadge(props: { route: Route }) {
  const c = props.route.certificate;
  const label = c.custom
    ? t('routes.certCustom', { name: c.custom.name, date: c.not_after ? fmtDay(c.not_after) : '' })
    : t(`routes.cert_${c.state}`, { date: c.not_after ? fmtDay(c.not_after) : '' });
  const title = [c.issuer, c.internal ? t('routes.certInternal') : null, c.last_error].filter(Boolean).join(' · ');
  return (
    <span class="route-cert" title={title || undefined}>
      <Badge tone={CERT_TONE[c.state]}>{label}</Badge>
      {c.internal && c.state !== 'not_applicable' && <span class="hint">{t('routes.certInternal')}</span>}
    </span>
  );
}

/** The site's address: https:// for HTTPS routes, http:// otherwise; none for wildcards and L4 routes. */
export function siteUrl(r: Pick<Route, 'route_type' | 'domain' | 'https_enabled'>): string | null {
  if (r.route_type !== 'http' || !r.domain || r.domain.startsWith('*.')) return null;
  return `${r.https_enabled ? 'https' : 'http'}://${r.domain}`;
}

/** A link to the site, in a new tab. */
export function SiteLink(props: { route: Route; label?: string }) {
  const url = siteUrl(props.route);
  if (!url) return null;
  const label = props.label ?? url;
  // the accessible name begins with the visible text
  const name = label === url ? t('routes.openSiteUrl', { url }) : t('routes.openSite', { label, url });
  return (
    <a class="site-link" href={url} target="_blank" rel="noopener noreferrer" aria-label={name} title={url}>
      {label}
      <span aria-hidden="true"> ↗</span>
    </a>
  );
}

/** A date without the time. */
function fmtDay(iso: string): string {
  return new Intl.DateTimeFormat(lang.get() === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'medium' }).format(new Date(iso));
}
