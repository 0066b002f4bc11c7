// Internal DNS data: a hosts file in the data directory (<dataDir>/hosts.<domain>) with one line per
// peer hostname under GATEHOUSE_DNS_DOMAIN plus gateway.<domain> and server.<domain> (both the
// server's tunnel address). Any resolver that reads hosts files serves it (dnsmasq --addn-hosts,
// CoreDNS `hosts`). It is rewritten atomically (temp file + rename) after every hostname change
// and every deletion of a peer that had one; bursts of changes coalesce into one write.
//
// Internal routes (routes/exposure.ts): each enabled internal HTTP route's domain gets a line with the
// server's tunnel address, so peers reach it by name through the tunnel (the route serves only
// connections from there). A wildcard domain cannot be a hosts-file name and is left out. The file
// follows every route write (the route events).
//
// "Stale": an agent-reported hostname the agent has not refreshed for 7 days (STALE_AFTER_MS). Admin
// hostnames are never stale. Stale names stay in the file (the address is still the peer's); the
// count tells the admin which agents stopped reporting.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import type { PeerRow } from '../peers/model.js';
import { Mutex } from '../util/mutex.js';
import { asBool, findRows } from '../db/define.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { DnsRecord, DnsStatus, PeerDnsRecord, RouteDnsRecord } from './schema.js';

export const STALE_AFTER_MS = 7 * 24 * 3600 * 1000;
/** Names the zone itself uses; peers cannot take them. */
export const RESERVED_HOSTNAMES = new Set(['gateway', 'server']);

export class DnsService {
  private mutex = new Mutex();
  private queued: Promise<void> | null = null;

  constructor(
    private deps: Deps,
    private wg: WireGuardService,
  ) {
    // an internal route's name is in the file (routeRecords): every route write may change it. Not
    // awaited by the write (its answer does not wait for the file; writes close together share one
    // rewrite): a failure is logged, and the next route write or peer change writes it again.
    deps.events.on(['route_created', 'route_updated', 'route_deleted', 'route_enabled', 'route_disabled', 'routes_batch'], () => {
      this.refresh().catch((err: unknown) => deps.log.warn('writing the internal DNS hosts file failed', { err: String(err) }));
    });
  }

  get domain(): string {
    return this.deps.config.dnsDomain;
  }
  get file(): string {
    return path.join(this.deps.config.dataDir, `hosts.${this.domain}`);
  }

  isStale(r: Pick<PeerRow, 'hostname_source' | 'hostname_updated_at'>, now = this.deps.clock()): boolean {
    return r.hostname_source === 'agent' && (r.hostname_updated_at === null || now - Number(r.hostname_updated_at) > STALE_AFTER_MS);
  }

  /** The names of the enabled internal HTTP routes (exact domains; wildcards cannot be hosts-file names) with the server's tunnel address. */
  async routeRecords(): Promise<RouteDnsRecord[]> {
    const rows = await findRows(this.deps.db.models.Route, {
      attributes: ['id', 'domain'],
      where: { exposure: 'internal', route_type: 'http', enabled: true },
      order: [
        ['domain', 'ASC'],
        ['id', 'ASC'],
      ],
    });
    const server = this.wg.serverAddress;
    return rows
      .filter((r) => r.domain && !r.domain.startsWith('*.'))
      .map((r) => ({ type: 'A' as const, name: r.domain, fqdn: r.domain, address: server, route_id: Number(r.id) }));
  }

  async records(): Promise<{ domain: string; static: DnsRecord[]; peers: PeerDnsRecord[]; routes: RouteDnsRecord[] }> {
    const now = this.deps.clock();
    const server = this.wg.serverAddress;
    const rows = await findRows(this.deps.db.models.Peer, {
      attributes: ['id', 'name', 'hostname', 'hostname_source', 'hostname_updated_at', 'address', 'enabled'],
      where: { hostname: { [Op.ne]: null } },
      order: [
        ['hostname', 'ASC'],
        ['id', 'ASC'],
      ],
    });
    const d = this.domain;
    const routes = await this.routeRecords();
    return {
      domain: d,
      routes,
      static: [
        { type: 'A', name: 'gateway', fqdn: `gateway.${d}`, address: server },
        { type: 'A', name: 'server', fqdn: `server.${d}`, address: server },
      ],
      peers: rows
        .filter((r) => r.hostname)
        .map((r) => ({
          type: 'A' as const,
          name: r.hostname!,
          fqdn: `${r.hostname}.${d}`,
          address: r.address,
          peer_id: r.id,
          peer_name: r.name,
          source: r.hostname_source === 'agent' ? ('agent' as const) : ('admin' as const),
          stale: this.isStale(r, now),
          enabled: asBool(r.enabled) ? (1 as const) : (0 as const),
          updated_at: r.hostname_updated_at ? new Date(Number(r.hostname_updated_at)).toISOString() : null,
        })),
    };
  }

  /**
   * The hosts file text for the current records. Without the licence feature internal_dns the file
   * holds no records (the hostnames stay stored and come back with the feature).
   */
  async render(): Promise<string> {
    if (!this.deps.features.isEnabled('internal_dns')) return `# Gatehouse internal DNS for ${this.domain}: off (needs the licence feature internal_dns).\n`;
    const r = await this.records();
    const lines = [`# Gatehouse internal DNS for ${r.domain}: generated from the database, do not edit.`];
    for (const x of [...r.static, ...r.peers, ...r.routes]) lines.push(`${x.address}\t${x.fqdn}`);
    return lines.join('\n') + '\n';
  }

  /** Rewrites the hosts file (coalesced: a call made while a write is queued joins that write). */
  refresh(): Promise<void> {
    if (this.queued) return this.queued;
    const p = this.mutex.run(async () => {
      this.queued = null;
      await this.writeNow();
    });
    this.queued = p;
    return p;
  }

  private async writeNow(): Promise<void> {
    const text = await this.render();
    const file = this.file;
    try {
      if (fs.readFileSync(file, 'utf8') === text) return;
    } catch {
      /* missing: write it */
    }
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    await fs.promises.writeFile(tmp, text, { mode: 0o644 });
    await fs.promises.rename(tmp, file);
  }

  async status(): Promise<DnsStatus> {
    const now = this.deps.clock();
    const rows = await findRows(this.deps.db.models.Peer, {
      attributes: ['hostname_source', 'hostname_updated_at'],
      where: { hostname: { [Op.ne]: null } },
    });
    let admin = 0;
    let agent = 0;
    let stale = 0;
    for (const r of rows) {
      if (r.hostname_source === 'agent') agent++;
      else admin++;
      if (this.isStale(r, now)) stale++;
    }
    let file: DnsStatus['hosts_file'] = { path: this.file, exists: false };
    try {
      const st = fs.statSync(this.file);
      const text = fs.readFileSync(this.file, 'utf8');
      file = {
        path: this.file,
        exists: true,
        size: st.size,
        updated_at: st.mtime.toISOString(),
        records: text.split('\n').filter((l) => l && !l.startsWith('#')).length,
        sha256: crypto.createHash('sha256').update(text).digest('hex'),
      };
    } catch {
      /* not written yet */
    }
    return {
      enabled: this.deps.features.isEnabled('internal_dns'),
      domain: this.domain,
      server_address: this.wg.serverAddress,
      hosts_file: file,
      peers: { total: rows.length, admin, agent, stale },
      stale_after_days: STALE_AFTER_MS / (24 * 3600 * 1000),
    };
  }
}
