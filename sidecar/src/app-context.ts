// The typed service container. createDeps() builds the platform services; createAppContext() builds
// every feature service on top of them, once, in dependency order, each one handed what it uses by
// type (no look-up by name, no cast). Features (features.ts; the contract: feature.ts) then declare
// their endpoints, early middleware, fast paths and background work against this AppContext.
//
// Build order: platform -> route-auth tables -> proxy (reads which routes are protected) -> routes
// -> WireGuard, DNS, peers, groups, tags -> uptime monitor -> dashboard -> SMTP -> route auth
// (writes through the proxy, mails through SMTP) -> gateways, wake-on-LAN, tunnel listener
// -> circuit breaker, access log.
import { msg } from '@gatehouse/common/messages/index.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import type { Deps, HealthCheck } from './deps.js';
import { openDatabase } from './db/index.js';
import type { ModelDefiner } from './db/models.js';
import { systemClock, systemTimers, type Clock, type Timers } from './util/clock.js';
import { Scheduler } from './util/scheduler.js';
import { EventBus, watchTables } from './events.js';
import type { FeatureGate } from './licence/features.js';
import { LicenceService } from './licence/service.js';
import { PublicHost } from './system/public-host.js';
import { createLogger, type Logger } from './util/logger.js';
import { MasterKey } from './util/crypto.js';
import { ActivityLog } from './logs/activity.js';
import { SettingsStore } from './settings/store.js';
import { LockoutService } from './auth/lockout.js';
import { SecondFactorService, relyingParty } from './auth/second-factor.js';
import { INITIAL_PASSWORD_FILE, UsersService, generatePassword } from './users/service.js';
import { TokensService } from './tokens/service.js';
import { DbSessionStore } from './http/session-store.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { EXPIRY_WATERMARK_SETTING, WireGuardService } from './wireguard/service.js';
import type { WireGuardDriver } from '@gatehouse/common/wireguard/types.js';
import { DnsService } from './dns/service.js';
import { GroupsService } from './groups/service.js';
import { ShapingService } from './shaping/service.js';
import { QuotaService } from './quotas/service.js';
import { RedirectsService } from './redirects/service.js';
import { TagsService } from './tags/service.js';
import { DashboardService } from './dashboard/service.js';
import { PeersService } from './peers/service.js';
import { CaddyAdminClient } from './proxy/admin-client.js';
import { accessLogFile } from './proxy/fragments/access-log.js';
import { caddyStorageDsn } from './proxy/fragments/storage.js';
import { ProxyService } from './proxy/service.js';
import { CertificatesService, loadCustomCertificates } from './certificates/service.js';
import { proxySettings } from './proxy/snapshot.js';
import { GeoipService } from './geoip/service.js';
import { CaddySupervisor, caddyPaths } from './proxy/supervisor.js';
import { CertificateStore, readStoredCertificates } from './proxy/certificates.js';
import { RoutesService } from './routes/service.js';
import { SmtpService, type Mailer } from './smtp/service.js';
import { hasRouteAuth, protectedRouteIds, routeAuthSummaries, type RouteAuthModels } from './route-auth/models.js';
import { RouteAuthService } from './route-auth/service.js';
import { GatewaysService } from './gateways/service.js';
import { TunnelListener } from './gateways/tunnel-listener.js';
import { WolService } from './gateways/wol.js';
import { AccessLogService } from './resilience/access-log.js';
import { BreakerService, ensureBreakerSecret } from './resilience/breaker.js';
import { AccessWindowsService } from './access-windows/service.js';
import { MonitorService } from './resilience/monitor.js';
import { EventStreams } from './events-stream/hub.js';
import { MetricsService } from './metrics/service.js';
import { DeliveryQueue } from './webhooks/queue.js';
import { WebhooksService } from './webhooks/service.js';
import { BackupService } from './backup/service.js';
import { RdpService } from './rdp/service.js';
import { linkedOwners } from './rdp/linked.js';
import { RdpKeys } from './rdp/keys.js';
import { RdpStatus } from './rdp/status.js';
import { RdpSessions } from './rdp/sessions.js';
import { RdpWol } from './rdp/wol.js';
import { ClientService } from './client-api/service.js';
import { MasterKeyRotation, type MasterKeyHook } from './masterkey/rotation.js';
import { settleMasterKey } from './masterkey/files.js';
import { sampleSealed } from './masterkey/sealed.js';
import { lockHolder } from './masterkey/lock.js';
import { guardedFetch, policyFor, type Lookup, type OutboundUse } from './util/outbound.js';
import { ClusterFeed } from './cluster/feed.js';
import { ClusterService } from './cluster/service.js';

export interface ContextOptions {
  /**
   * The features' models (features.ts featureModels), defined with the platform's when the database
   * opens. Handed in by the caller (server.ts, cli.ts): this module may not import the feature list,
   * whose endpoints name its AppContext.
   */
  models: readonly ModelDefiner[];
  clock?: Clock;
  /** The timers periodic work runs on (default node's; tests may pass a manual clock's .timers). */
  timers?: Timers;
  log?: Logger;
  sqliteFile?: string;
  /** A WireGuard driver for tests and benchmarks; otherwise ip/wg/wireguard-go when GATEHOUSE_WG_MANAGE=true. */
  wgDriver?: WireGuardDriver;
  /** A feature gate in place of the licence's (tests switch features off and on with it); default: the LicenceService. */
  featureGate?: FeatureGate;
  /** The resolver of server-side fetches (util/outbound.ts; default the system's): tests answer names from a table, the addresses are checked all the same. */
  lookup?: Lookup;
  /** This machine's hostname, the public host's fallback (default os.hostname; tests pass their own). */
  hostname?: () => string;
}

/** Every service of the sidecar, typed. */
export interface AppContext extends Deps {
  health: HealthCheck[];
  // peers
  wireguard: WireGuardService;
  dns: DnsService;
  peers: PeersService;
  groups: GroupsService;
  /** per-peer speed caps (traffic control on the interface) */
  shaping: ShapingService;
  /** per-peer data quotas: counts, warns, disables or throttles (src/quotas) */
  quotas: QuotaService;
  tags: TagsService;
  dashboard: DashboardService;
  // proxy and routes
  proxy: ProxyService;
  /** null in "no proxy" mode (GATEHOUSE_MANAGE_CADDY=false) */
  caddySupervisor: CaddySupervisor | null;
  routes: RoutesService;
  /** The country database of the routes' country filters (GATEHOUSE_GEOIP_DB). */
  geoip: GeoipService;
  /** redirect hosts and the default site */
  redirects: RedirectsService;
  /** Custom certificates (uploaded PEM, src/certificates): what routes name with certificate_id. */
  customCertificates: CertificatesService;
  // smtp
  smtp: SmtpService;
  mailer: Mailer;
  // route auth
  routeAuth: RouteAuthService;
  // gateways
  gateways: GatewaysService;
  gatewayAuth: GatewaysService;
  gatewayWol: WolService;
  gatewayTunnelListener: TunnelListener;
  // resilience
  breaker: BreakerService;
  accessLog: AccessLogService;
  monitor: MonitorService;
  /** access windows of routes and peers: the boundary scheduler and closed-answer counts (src/access-windows) */
  accessWindows: AccessWindowsService;
  // live events: the open GET /api/v1/events streams (server stop ends them)
  eventStreams: EventStreams;
  // GET /metrics: the one prom-client registry (metrics/service.ts)
  metrics: MetricsService;
  // webhooks: CRUD, delivery log, test; the delivery queue (a bus subscriber) and its worker
  webhooks: WebhooksService;
  webhookQueue: DeliveryQueue;
  // backup and restore, auto-backup jobs
  backup: BackupService;
  // RDP routes (licence feature remote_desktop): CRUD, linked L4 routes, credential envelopes, server key pairs
  rdp: RdpService;
  // RDP operations: reachability status (scheduled + on demand), Wake-on-LAN, sessions and their history (src/rdp)
  rdpStatus: RdpStatus;
  rdpWol: RdpWol;
  rdpSessions: RdpSessions;
  // desktop clients: registered machines, their configs and reports (src/client-api)
  clientMachines: ClientService;
  /** this node in the cluster: the registry, the leader's lock, GET /cluster (src/cluster) */
  cluster: ClusterService;
  // master-key rotation (npm run cli -- rotate-master-key) and its hooks
  masterKeyRotation: MasterKeyRotation;
  /** The cluster's change feed (GATEHOUSE_CLUSTER on PostgreSQL; null otherwise): cluster/feed.ts */
  clusterFeed: ClusterFeed | null;
  /** Registers a hook run inside the rotation's transaction with the new key (masterkey/rotation.ts MasterKeyHook). */
  onMasterKeyRotated(fn: MasterKeyHook, name?: string): void;
}

/** The platform services (database, clock, logger, accounts, ...), for the CLI and the container. */
export async function createDeps(config: Config, opts: ContextOptions): Promise<Deps> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, sqliteFile: opts.sqliteFile, models: opts.models });
  // A rotation interrupted by a crash is settled here (masterkey/files.ts), unless another live process
  // (a rotation in progress, the running sidecar) holds the data directory: then the key file as it is.
  const { key } = lockHolder(config.dataDir)
    ? MasterKey.loadOrCreate(config.masterKeyFile)
    : await settleMasterKey(config.masterKeyFile, () => sampleSealed(db), log);
  const { models } = db;
  const scheduler = new Scheduler({ log, clock, timers: opts.timers ?? systemTimers });
  const events = new EventBus({ clock, log });
  watchTables(events, { routes: models.Route, peers: models.Peer });
  const activity = new ActivityLog(models, clock, log, events);
  const settings = new SettingsStore(models, clock);
  const lockout = new LockoutService(models, settings, clock);
  const users = new UsersService(models, clock, lockout, activity, events, { initialPasswordFile: path.join(config.dataDir, INITIAL_PASSWORD_FILE) });
  const secondFactor = new SecondFactorService(db, key, clock, settings, events, relyingParty(config.adminOrigin));
  const tokens = new TokensService(models, clock, activity, events);
  const sessions = new DbSessionStore(models, clock);
  // this server's public host and the rest of the Network settings: stored value, else the environment
  const publicHost = new PublicHost(config, opts.hostname, settings);
  await publicHost.load();
  const outbound = (use: OutboundUse) => policyFor(use, { outbound: config.outbound, publicIp: publicHost.publicIp().value }, opts.lookup);
  const licence = new LicenceService({
    config,
    settings,
    clock,
    log,
    events,
    fetch: guardedFetch(outbound('licence')),
    // in a cluster each node checks its own view of the licence; the leader announces a change once
    announces: () => scheduler.isLeader(),
  });
  await licence.load();
  const features = opts.featureGate ?? licence;
  return {
    config,
    db,
    clock,
    log,
    scheduler,
    events,
    crypto: key,
    activity,
    settings,
    lockout,
    users,
    secondFactor,
    tokens,
    sessions,
    features,
    licence,
    outbound,
    publicHost,
  };
}

/** The whole container: the platform, then every feature service in dependency order. */
export async function createAppContext(config: Config, opts: ContextOptions): Promise<AppContext> {
  const core = await createDeps(config, opts);
  const { db, clock, log, activity, events } = core;
  // Peer configs carry this host as their endpoint: say so at start when the internet cannot resolve it.
  const publicHostWarning = core.publicHost.current().warning;
  if (publicHostWarning) log.warn(publicHostWarning);
  const health: HealthCheck[] = [];
  // first: services built below register their master-key hooks on it
  const masterKeyRotation = new MasterKeyRotation(core);
  const onMasterKeyRotated = (fn: MasterKeyHook, name?: string) =>
    masterKeyRotation.onRotated(name ?? (fn.name || `hook ${masterKeyRotation.hookNames().length + 1}`), fn);

  // proxy: render + load (coalesced, all-or-nothing writes); the Caddy supervisor when managed
  const raModels: RouteAuthModels = db.models;
  let clusterFeed: ClusterFeed | null = null;
  const client = config.manageCaddy ? new CaddyAdminClient(config.caddyAdmin) : null;
  // metrics first: the proxy and route auth count into it; its scrape reads the services built below
  const built: { wireguard?: WireGuardService; gateways?: GatewaysService; accessWindows?: AccessWindowsService } = {};
  const metrics = new MetricsService({
    db,
    clock,
    log,
    caddy: () => client,
    get wireguard() {
      return built.wireguard;
    },
    gateways: async () => (built.gateways ? built.gateways.list() : []),
    closedAnswers: () => built.accessWindows?.allClosedAnswers() ?? new Map(),
  });
  // the country database of the routes' country filters (GATEHOUSE_GEOIP_DB): read at each render
  const geoip = new GeoipService(config.geoipDb);
  const proxy = new ProxyService({
    db,
    settings: proxySettings(config, core.crypto, core.publicHost, geoip),
    clock,
    log,
    client,
    protectedRouteIds: (t) => protectedRouteIds(raModels, t),
    customCertificates: (ids, t) => loadCustomCertificates(core, ids, t),
    events,
    features: core.features,
    onLoad: (seconds, ok) => metrics.proxyApply.observe({ result: ok ? 'ok' : 'error' }, seconds),
    // the cluster's change feed, built last (below): the write batch NOTIFYs what it changed
    publish: (routes, t) => clusterFeed?.publish({ routes }, t) ?? Promise.resolve(),
  });
  let caddySupervisor: CaddySupervisor | null = null;
  // Caddy's certificates for the route views: its storage is <XDG_DATA_HOME>/caddy (supervisor.ts caddyPaths)
  const certificates = client
    ? new CertificateStore({
        storageDir: path.join(caddyPaths(config.dataDir).xdgData, 'caddy'),
        clock,
        tls: () => core.publicHost.tls().value,
        // in a cluster the certificates are rows of the shared storage (any node may have obtained them)
        stored: caddyStorageDsn(config) ? () => readStoredCertificates(db) : undefined,
      })
    : null;
  if (client) {
    const supervisor = new CaddySupervisor({
      bin: config.caddyBin,
      adminAddress: config.caddyAdmin,
      dataDir: config.dataDir,
      storageDsn: caddyStorageDsn(config),
      log,
      clock,
      onReady: async () => {
        proxy.invalidate();
        await proxy.apply({ force: true, reason: 'caddy started' });
      },
      onState: (st) => void events.emit({ type: 'caddy_state', ...st }),
      onLogLine: (entry) => certificates?.noteLog(entry),
    });
    caddySupervisor = supervisor;
    health.push({
      name: 'proxy',
      check: async () => {
        const st = supervisor.status();
        const ping = st.running ? await client.ping(1000) : false;
        const ps = proxy.status();
        return {
          ok: st.running && ping,
          detail: { running: st.running, pid: st.pid, admin_api: st.admin_api, config_hash: ps.config_hash, last_error: ps.last_error },
        };
      },
    });
  }
  const customCertificates = new CertificatesService(core, proxy);
  const routes = new RoutesService({
    geoip,
    db,
    config,
    clock,
    events,
    proxy,
    hasRouteAuth: (id, t) => hasRouteAuth(raModels, id, t),
    linkedOwners: (ids, t) => linkedOwners(db, ids, t),
    licence: { features: core.features, limits: () => core.licence.limits() },
    publicHost: core.publicHost,
    routeAuthSummaries: (ids) => routeAuthSummaries(raModels, ids),
    certificates,
    customCertificates: (ids) => customCertificates.summaries(ids),
  });
  // redirect hosts and the default site (proxy/fragments/redirects.ts renders them)
  const redirects = new RedirectsService(core, proxy);

  // peers: WireGuard interface + poller, peers, groups, tags, internal DNS data, dashboard
  let wg: WireGuardService | undefined = undefined;
  const driver: WireGuardDriver | null = config.wg.manage
    ? (opts.wgDriver ??
      new WgDriver({
        onUserspaceExit: (iface, code, signal, output) => {
          log.error(`wireguard-go for ${iface} exited (${signal ?? `code ${code}`})`, { output: output.slice(-2000) });
          wg?.scheduleHeal();
        },
      }))
    : null;
  const wireguard = new WireGuardService(core, { driver });
  wg = wireguard;
  health.push({ name: 'wireguard', check: () => wireguard.healthCheck() });
  const shaping = new ShapingService(core, wireguard);
  const dns = new DnsService(core, wireguard);
  // A licence change can add or remove gated modules (circuit breaker) and the internal DNS records:
  // announced (licence_changed), or seen by a follower's own check without an announcement.
  const licenceApplied = async () => {
    await dns.refresh().catch((err) => log.warn(`DNS hosts file not rewritten after a licence change: ${(err as Error).message}`));
    await proxy.apply({ reason: 'licence changed' }).catch((err) => log.warn(`Proxy not re-rendered after a licence change: ${(err as Error).message}`));
  };
  events.on('licence_changed', licenceApplied);
  core.licence.onQuietChange = licenceApplied;
  const peers = new PeersService(core, wireguard, dns, proxy);
  const groups = new GroupsService(core);
  const quotas = new QuotaService(core, peers, shaping, { intervalMs: wireguard.pollIntervalMs });
  const tags = new TagsService(core);
  const monitor = new MonitorService({ db, clock, log, events, settings: proxySettings(config, core.crypto), scheduler: core.scheduler });
  const dashboard = new DashboardService(core, wireguard, monitor);

  // smtp: settings, and what other features send mail with
  const smtp = new SmtpService(core.settings, core.crypto, activity, events);

  // route auth: writes through the proxy (forward auth on/off with the database change)
  const routeAuth = new RouteAuthService(core, { models: raModels, proxy, mailer: smtp });
  routeAuth.watchRoutes();
  routeAuth.watchUsers();

  // gateways (after peers: the tunnel; and routes)
  const gateways = new GatewaysService(core, peers, wireguard);
  const gatewayWol = new WolService(core, gateways);
  const gatewayTunnelListener = new TunnelListener(core, wireguard);

  // resilience (after proxy and routes)
  const breaker = new BreakerService({ db, clock, activity, events, proxy, secret: ensureBreakerSecret(config.dataDir) });
  const file = accessLogFile(config.dataDir);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const accessLog = new AccessLogService({ db, clock, log, file, scheduler: core.scheduler });
  // access windows (after proxy, routes and WireGuard)
  const accessWindows = new AccessWindowsService({ db, clock, timers: core.scheduler.timers, log, events, proxy, wireguard });
  routes.closedAnswers = (id) => accessWindows.closedAnswers(id);
  built.accessWindows = accessWindows;
  built.wireguard = wireguard;
  built.gateways = gateways;

  // RDP routes (after routes: a gateway-mode RDP route owns an L4 route)
  const rdp = new RdpService({ db, clock, events, proxy, routes, keys: new RdpKeys({ db, clock, masterKey: core.crypto }) });
  // a master-key rotation retires the RDP key pair (its private half was sealed under the old key) and
  // puts every route with stored credentials into rotation pending, inside the rotation's transaction
  onMasterKeyRotated(async (newKey, { transaction }) => {
    await rdp.onMasterKeyRotated(newKey, transaction);
  }, 'rdp');
  // RDP operations (after RDP routes and gateways: gateway-mode status and WoL go through the companion)
  const rdpStatus = new RdpStatus(core, rdp, gateways);
  const rdpSessions = new RdpSessions(core, rdp, db.models.RdpSession, gateways);
  rdpSessions.installRouteHooks();
  const rdpWol = new RdpWol(core, rdp, rdpStatus, gatewayWol);

  // webhooks: the queue subscribes to the bus once, here
  const webhookQueue = new DeliveryQueue(core);
  const webhooks = new WebhooksService(core, webhookQueue);
  // desktop clients (after peers, WireGuard and DNS)
  const clientMachines = new ClientService(core, peers, wireguard, dns);
  // backup (after everything it restores into: one apply to the proxy and WireGuard afterwards)
  const backup = new BackupService(core, { proxy, wireguard, routeAuth, gateways, peers, dns, clientMachines });
  // the cluster (src/cluster): singleton jobs run only while this node leads (always, alone; in
  // cluster mode while it holds the leader's lock). The server joins the registry (startServer).
  const cluster = new ClusterService({ ...core, configHash: () => proxy.status().config_hash });
  core.scheduler.setLeadership(() => cluster.isLeader());
  // a node taking the lead makes the scheduled backups that fell due while no node led
  core.scheduler.onLeadershipGained(() => backup.catchUpMissed());

  // the cluster's change feed (cluster/feed.ts): writes here are published, other nodes' applied here
  if (config.cluster.enabled && db.dialect === 'postgres' && config.databaseUrl) {
    const feed = new ClusterFeed({
      db,
      databaseUrl: config.databaseUrl,
      node: config.cluster.nodeName,
      log,
      timers: core.scheduler.timers,
      targets: {
        applyRoutes: (ids, reason) => proxy.apply(ids === 'all' ? { reason } : { routes: ids, reason }),
        reconcilePeer: (id, key) => wireguard.reconcilePeer({ id, public_key: key ?? '' }),
        syncPeers: () => wireguard.fullSync(),
        reloadSettings: async (keys) => {
          core.settings.invalidate();
          await core.publicHost.load();
          await core.licence.load();
          // the expiry check's watermark (written at every check) is read by no rendering
          return !keys || keys.some((k) => k !== EXPIRY_WATERMARK_SETTING);
        },
        dropCaches: ({ sessions }) => {
          routeAuth.view.invalidateRoutes();
          if (sessions) routeAuth.view.forgetSessions();
        },
        reloadBackupSchedules: () => backup.reloadSchedules(),
        runJobs: (names) => {
          for (const name of names)
            void core.scheduler
              .job(name)
              ?.runNow({ wake: false })
              .catch(() => undefined);
        },
      },
    });
    clusterFeed = feed;
    core.settings.onWrite = (key) => feed.publishCommitted({ settings: [key] });
    peers.onTunnelChange = (peer, routes) => feed.publishCommitted({ peers: [peer], routes });
    wireguard.onExpired = (peer) => feed.publishCommitted({ peers: [peer] });
    routeAuth.view.onDropped = () => feed.publishCommitted({ caches: ['route_auth_sessions'] });
    backup.onSchedulesChanged = () => feed.publishCommitted({ caches: ['backup_schedules'] });
    // a follower's runNow() of a singleton job (a webhook queued here) asks the leader to run it
    core.scheduler.setWaker((jobs) => feed.publishCommitted({ jobs }));
  }

  return {
    ...core,
    health,
    wireguard,
    shaping,
    quotas,
    dns,
    peers,
    groups,
    tags,
    dashboard,
    proxy,
    caddySupervisor,
    routes,
    geoip,
    redirects,
    customCertificates,
    smtp,
    mailer: smtp,
    routeAuth,
    gateways,
    gatewayAuth: gateways,
    gatewayWol,
    gatewayTunnelListener,
    breaker,
    accessLog,
    monitor,
    accessWindows,
    eventStreams: new EventStreams({ events, clock, timers: core.scheduler.timers, log }),
    metrics,
    webhooks,
    webhookQueue,
    backup,
    rdp,
    rdpStatus,
    rdpWol,
    rdpSessions,
    clientMachines,
    cluster,
    masterKeyRotation,
    onMasterKeyRotated,
    clusterFeed,
  };
}

/**
 * First start: with an empty users table, create the admin from GATEHOUSE_ADMIN_USER/PASSWORD, or
 * with a generated password written to <dataDir>/initial-admin-password.txt (mode 0600).
 */
export async function bootstrapAdmin(deps: Deps): Promise<{ created: boolean; username?: string; passwordFile?: string }> {
  if ((await deps.users.count()) > 0) return { created: false };
  const username = deps.config.initialAdmin.user ?? 'admin';
  let password = deps.config.initialAdmin.password;
  let passwordFile: string | undefined;
  if (!password) {
    password = generatePassword();
    passwordFile = path.join(deps.config.dataDir, INITIAL_PASSWORD_FILE);
    fs.writeFileSync(passwordFile, `username: ${username}\npassword: ${password}\n`, { mode: 0o600 });
    fs.chmodSync(passwordFile, 0o600);
  }
  // A generated password is changed at the first sign-in (GET /password); the file goes then.
  await deps.users.create({ username, password, role: 'admin', mustChangePassword: passwordFile !== undefined });
  await deps.activity.record({
    source: 'system',
    event_type: 'admin_bootstrapped',
    msg: msg('user.bootstrapped', { username }),
    details: { password_file: passwordFile ?? null },
  });
  return { created: true, username, passwordFile };
}
