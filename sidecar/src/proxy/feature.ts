// The proxy feature: deps.proxy (render + load, coalesced, all-or-nothing writes), the Caddy
// supervisor when GATEHOUSE_MANAGE_CADDY=true, the reconcile loop and the /caddy endpoints.
//
// GATEHOUSE_MANAGE_CADDY=false is the "no proxy" mode: no Caddy is started and nothing is loaded;
// every write still renders the configuration (so it is known to build) and records its hash.
import type { Transaction } from 'sequelize';
import type { Deps } from '../deps.js';
import type { Feature } from '../features.js';
import type { RouteAuthService } from '../route-auth/service.js';
import { CaddyAdminClient } from './admin-client.js';
import { proxyEndpoints } from './endpoints.js';
import { ProxyService } from './service.js';
import { proxySettings } from './snapshot.js';
import { CaddySupervisor } from './supervisor.js';

export const RECONCILE_INTERVAL_MS = 10_000;

export const proxyFeature: Feature = {
  name: 'proxy',
  setup(deps: Deps) {
    const { config } = deps;
    const client = config.manageCaddy ? new CaddyAdminClient(config.caddyAdmin) : null;
    // deps.routeAuth is set up after this feature: looked up per render.
    const protectedRouteIds = async (t?: Transaction) => ((deps.routeAuth as RouteAuthService | undefined)?.protectedRouteIds(t) ?? new Set<number>());
    const proxy = new ProxyService({ db: deps.db, settings: proxySettings(config), clock: deps.clock, log: deps.log, client, protectedRouteIds, events: deps.events });
    deps.proxy = proxy;
    if (config.manageCaddy) {
      const supervisor = new CaddySupervisor({
        bin: config.caddyBin,
        adminAddress: config.caddyAdmin,
        dataDir: config.dataDir,
        log: deps.log,
        clock: deps.clock,
        onReady: async () => {
          proxy.invalidate();
          await proxy.apply({ force: true, reason: 'caddy started' });
        },
      });
      deps.caddySupervisor = supervisor;
      deps.health.push({
        name: 'proxy',
        check: async () => {
          const st = supervisor.status();
          const ping = st.running ? await client!.ping(1000) : false;
          const ps = proxy.status();
          return { ok: st.running && ping, detail: { running: st.running, pid: st.pid, admin_api: st.admin_api, config_hash: ps.config_hash, last_error: ps.last_error } };
        },
      });
    }
  },
  endpoints: (deps) => proxyEndpoints(deps),
  async start(deps) {
    const proxy = deps.proxy as ProxyService;
    const supervisor = deps.caddySupervisor as CaddySupervisor | undefined;
    if (supervisor) await supervisor.start();
    else await proxy.apply({ reason: 'startup (no proxy mode)' });
    deps.scheduler.every('proxy reconcile', RECONCILE_INTERVAL_MS, () => proxy.apply({ verify: true }));
  },
  async stop(deps) {
    deps.scheduler.job('proxy reconcile')?.stop();
    await (deps.caddySupervisor as CaddySupervisor | undefined)?.stop();
  },
};
