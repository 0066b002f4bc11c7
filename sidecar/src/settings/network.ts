// The Network settings (GET/PUT /settings/network): this server's public host and IPv4, the TLS mode
// and the ACME e-mail, stored in the settings table (key `network`, so they travel in backups) and
// read through ctx.publicHost (system/public-host.ts), which every consumer asks: peer configs,
// gateway.env, desktop clients, gateway-mode RDP, Check DNS, the Caddy renderer. A save re-renders
// Caddy (the TLS mode and e-mail take effect at once) and drops the desktop clients' rendered configs.
import { Op } from 'sequelize';
import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import type { StoredNetwork } from '../system/public-host.js';
import { invalidFields } from '../util/errors.js';
import type { NetworkBody, NetworkView } from './schema.js';

type NetworkDeps = Pick<AppContext, 'publicHost' | 'config' | 'wireguard'>;

export function networkView(deps: NetworkDeps): NetworkView {
  const ph = deps.publicHost;
  const stored = ph.storedValues();
  const host = ph.current();
  const ip = ph.publicIp();
  const tls = ph.tls();
  const email = ph.acmeEmail();
  return {
    public_host: {
      value: host.host,
      source: host.source,
      stored: stored?.public_host ?? null,
      env: deps.config.publicHost?.trim() || null,
      internet_resolvable: host.internet_resolvable,
      problem: host.problem,
      warning: host.warning,
    },
    public_ip: { value: ip.value, source: ip.source, stored: stored?.public_ip ?? null, env: deps.config.publicIp || null },
    tls_mode: { value: tls.value, source: tls.source, stored: stored?.tls_mode ?? null, env: deps.config.tls },
    acme_email: { value: email.value, source: email.source, stored: stored?.acme_email ?? null, env: deps.config.acmeEmail || null },
    hostname: ph.suggestion(),
    endpoint: deps.wireguard.endpoint,
    setup: ph.setup(),
  };
}

/** Validates against the routes (ACME cannot issue wildcard certificates), stores, applies, reports. */
export async function saveNetwork(deps: AppContext, body: NetworkBody, actor: number | null): Promise<NetworkView> {
  const before = deps.publicHost.storedValues();
  const next: StoredNetwork = {
    public_host: body.public_host !== undefined ? body.public_host : (before?.public_host ?? null),
    public_ip: body.public_ip !== undefined ? body.public_ip : (before?.public_ip ?? null),
    tls_mode: body.tls_mode !== undefined ? body.tls_mode : (before?.tls_mode ?? null),
    acme_email: body.acme_email !== undefined ? body.acme_email : (before?.acme_email ?? null),
  };
  // the same rule as a route write (routes/service.ts): a wildcard HTTPS route needs internal TLS
  if ((next.tls_mode ?? deps.config.tls) === 'acme') {
    const count =
      (await deps.db.models.Route.count({ where: { https_enabled: true, domain: { [Op.like]: '*.%' } } })) +
      // a wildcard redirect host is served over HTTPS too (redirects/service.ts has the same rule)
      (await deps.db.models.RedirectHost.count({ where: { domain: { [Op.like]: '*.%' } } }));
    if (count > 0) throw invalidFields({ tls_mode: msg('settings.field.wildcard_routes_need_internal_tls', { count }) });
  }
  const tlsBefore = deps.publicHost.tls().value;
  const emailBefore = deps.publicHost.acmeEmail().value;
  const changed = (Object.keys(next) as (keyof StoredNetwork)[]).filter((k) => (before?.[k] ?? null) !== next[k]);
  await deps.publicHost.save(next);
  // desktop clients get their config from a cache: the next one carries the new endpoint
  deps.clientMachines.invalidate();
  if (deps.publicHost.tls().value !== tlsBefore || deps.publicHost.acmeEmail().value !== emailBefore) {
    await deps.proxy
      .apply({ force: true, reason: 'network settings changed' })
      .catch((err) => deps.log.warn(`Proxy not re-rendered after a Network settings change: ${(err as Error).message}`));
  }
  const view = networkView(deps);
  await deps.events.emit({
    type: 'settings_changed',
    section: 'network',
    public_host: view.public_host.value,
    endpoint: view.endpoint,
    tls_mode: view.tls_mode.value,
    changed,
    actor,
  });
  return view;
}
