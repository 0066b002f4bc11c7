// The peers feature: WireGuard interface + poller, peers, groups, tags, internal DNS data and the
// dashboard. Services are put on deps as deps.wireguard, deps.peers, deps.groups, deps.tags,
// deps.dns and deps.dashboard.
import type { Deps } from '../deps.js';
import type { Feature } from '../features.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { WireGuardService } from '../wireguard/service.js';
import type { WireGuardDriver } from '@gatehouse/common/wireguard/types.js';
import { wgEndpoints } from '../wireguard/endpoints.js';
import { DnsService } from '../dns/service.js';
import { dnsEndpoints } from '../dns/endpoints.js';
import { GroupsService } from '../groups/service.js';
import { groupEndpoints } from '../groups/endpoints.js';
import { TagsService } from '../tags/service.js';
import { tagEndpoints } from '../tags/endpoints.js';
import { DashboardService } from '../dashboard/service.js';
import { dashboardEndpoints } from '../dashboard/endpoints.js';
import { PeersService } from './service.js';
import { peerEndpoints } from './endpoints.js';

export const peersFeature: Feature = {
  name: 'peers',
  setup(deps: Deps) {
    let wg: WireGuardService | undefined = undefined;
    // A driver may be injected (deps.wgDriver) by tests and benchmarks; otherwise ip/wg/wireguard-go.
    const driver: WireGuardDriver | null = deps.config.wg.manage
      ? ((deps.wgDriver as WireGuardDriver | undefined) ??
        new WgDriver({
          onUserspaceExit: (iface, code, signal, output) => {
            deps.log.error(`wireguard-go for ${iface} exited (${signal ?? `code ${code}`})`, { output: output.slice(-2000) });
            wg?.scheduleHeal();
          },
        }))
      : null;
    wg = new WireGuardService(deps, { driver });
    const dns = new DnsService(deps, wg);
    deps.wireguard = wg;
    deps.dns = dns;
    deps.peers = new PeersService(deps, wg, dns);
    deps.groups = new GroupsService(deps);
    deps.tags = new TagsService(deps);
    deps.dashboard = new DashboardService(deps, wg);
    deps.health.push({ name: 'wireguard', check: () => wg.healthCheck() });
  },
  endpoints: (deps) => [...peerEndpoints(deps), ...groupEndpoints(deps), ...tagEndpoints(deps), ...wgEndpoints(deps), ...dashboardEndpoints(deps), ...dnsEndpoints(deps)],
  async start(deps) {
    await (deps.wireguard as WireGuardService).start();
    await (deps.dns as DnsService).refresh();
  },
  async stop(deps) {
    await (deps.wireguard as WireGuardService).stop();
  },
};
