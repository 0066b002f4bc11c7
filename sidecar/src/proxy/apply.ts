// The apply path: what Caddy runs, host by host, and the smallest change that brings it to a new
// rendering. ProxyService (service.ts) owns the queue, the transactions and the Caddy calls; this
// module owns the state and the "changed hosts" computation, and is pure apart from the memory it
// keeps (no I/O, no clock).
//
// What Caddy runs is held as
// - the FRAME: the configuration without host entries (render.ts renderFrame: admin, tls, the
//   servers with empty host maps, layer4, logging), as last loaded with a full POST /load;
// - the HOST MAPS: per host map (HTTP server name) the host entries Caddy holds, each as the
//   renderer rendered it, and which route rendered which host (owners).
//
// A change of rows becomes a PLAN:
// - planRoutes(rendered, ids): the hosts of the given routes, rendered by the same pure renderer
//   from a snapshot of only those routes (render.ts renderHosts), against the hosts those routes
//   held: puts for the hosts whose entry differs, deletes for the hosts they no longer render
//   (a rename, a disable, a delete, HTTPS switched on or off). O(changed).
// - planAll(rendered): a full rendering against every host (unscoped writes, licence changes, peer
//   changes, the reconcile loop). O(all) in the sidecar, still O(changed) in Caddy.
// Either plan is 'full' when the frame would change: the first load, an L4 route, the first or
// last HTTPS host, the first or last host using the shared reverse_proxy, a wildcard HTTPS host
// (its certificate is managed up front), metrics switched by the licence, a global setting. Then
// ProxyService makes a full load.
//
// A plan's changes are exactly the body of caddy-modules/hostroute's POST
// /gatehouse/hostroute/changes ({maps: {<map>: {put: {<host>: entry}, delete: [<host>]}}}), all or
// nothing in Caddy. It is a pure function of the database rows it was rendered from and of the
// state it was planned against, so another edge that holds the same state can apply the same
// change set by rendering the same route ids from the same database (docs/contributing/
// architecture.md "Applying changes").
import crypto from 'node:crypto';
import { configHash } from '@gatehouse/common/canonical.js';
import type { CaddyConfig, HostEntry } from './caddy-json.js';
import type { ProxySettings } from './render-context.js';
import { assembleConfig, frameHostMap, renderFrame, type HostRef, type HostSummary, type RenderedHosts } from './render.js';
import { HTTP_SERVER, HTTPS_SERVER, usesSharedProxy } from './fragments/servers.js';

/**
 * config_hash of a configuration: SHA-256 (hex) of the canonical hash of its frame (the
 * configuration with its host maps emptied), a newline, and the XOR of SHA-256(map NUL host NUL
 * configHash(entry)) over every host of every host map. Equal configurations have equal hashes
 * whatever their key order (like configHash of the whole), and it can be kept up to date host by
 * host: a change costs what it changes, not a hash of 100,000 hosts.
 */
export function proxyConfigHash(cfg: CaddyConfig): string {
  const frame = frameOf(cfg);
  const acc = Buffer.alloc(32);
  for (const m of MAPS) for (const [h, entry] of Object.entries(frameHostMap(cfg, m) ?? {})) xorInto(acc, hostTerm(m, h, configHash(entry)));
  return combine(configHash(frame), acc);
}

const hostTerm = (m: string, host: string, hash: string) => crypto.createHash('sha256').update(`${m}\0${host}\0${hash}`).digest();
const combine = (frameHash: string, acc: Buffer) =>
  crypto
    .createHash('sha256')
    .update(`${frameHash}\n${acc.toString('hex')}`)
    .digest('hex');
function xorInto(acc: Buffer, term: Buffer): void {
  for (let i = 0; i < 32; i++) acc[i] ^= term[i];
}

/** The body of POST /gatehouse/hostroute/changes. */
export interface HostChanges {
  maps: Record<string, { put: Record<string, HostEntry>; delete: string[] }>;
}

export interface Plan {
  changes: HostChanges;
  /** Number of hosts put or deleted. */
  count: number;
  /** The owners after the plan, for the routes it covers. */
  owners: Map<number, HostRef[]>;
  /** planAll: every owner is replaced. */
  allOwners: boolean;
}

interface HostRecord {
  entry: HostEntry;
  json?: string;
  hash?: string;
}

const MAPS = [HTTP_SERVER, HTTPS_SERVER] as const;

const entryJson = (r: HostRecord): string => (r.json ??= JSON.stringify(r.entry));

export class AppliedState {
  private frameJson: string | null = null;
  private rest: Pick<RenderedHosts, 'l4Servers' | 'certSubjects' | 'fallback' | 'customCerts'> = { l4Servers: {}, certSubjects: [], customCerts: [] };
  /** Routes served with a custom certificate (their certificates are in the frame: changing one needs a full load). */
  private customCertRoutes = new Set<number>();
  private maps = new Map<string, Map<string, HostRecord>>(MAPS.map((m) => [m, new Map()]));
  private owners = new Map<number, HostRef[]>();
  /** Routes with an L4 server in the frame (changing one needs a full load). */
  private l4Routes = new Set<number>();
  /** XOR of hostTerm over every host (null: not computed since the last full load). */
  private acc: Buffer | null = null;
  private frameHashCache: string | null = null;
  /** Per map, the hosts that invoke the shared reverse_proxy; the wildcard keys of the HTTPS map. */
  private shared = new Map<string, number>();
  private wildcards = new Set<string>();

  /** Nothing known (before the first load, after a Caddy restart or a failed commit). */
  get empty(): boolean {
    return this.frameJson === null;
  }

  reset(): void {
    this.frameJson = null;
    this.acc = null;
    this.frameHashCache = null;
  }

  /** After a full load of `frame` filled with `rendered`. */
  setFull(frame: CaddyConfig, rendered: RenderedHosts, l4Routes: Iterable<number>): void {
    this.frameJson = JSON.stringify(frame);
    this.rest = { l4Servers: rendered.l4Servers, certSubjects: rendered.certSubjects, fallback: rendered.fallback, customCerts: rendered.customCerts };
    this.customCertRoutes = new Set(rendered.customCertRoutes);
    this.maps = new Map(MAPS.map((m) => [m, new Map(Object.entries(rendered.maps[m]).map(([h, entry]) => [h, { entry }]))]));
    this.owners = new Map(rendered.owners);
    this.l4Routes = new Set(l4Routes);
    this.acc = null;
    this.frameHashCache = null;
    this.shared = new Map(MAPS.map((m) => [m, Object.values(rendered.maps[m]).filter(usesSharedProxy).length]));
    this.wildcards = new Set(Object.keys(rendered.maps[HTTPS_SERVER]).filter((h) => h.startsWith('*.')));
  }

  /** The frame for the host maps as they would be after `changes` (same settings, layer4, metrics). */
  private frameAfter(settings: ProxySettings, changes: HostChanges, metrics: boolean, rest = this.rest): string {
    const summary = this.summaryAfter(changes);
    return JSON.stringify(renderFrame(settings, summary, rest, metrics));
  }

  private summaryAfter(changes: HostChanges): HostSummary {
    // O(changed) apart from the list of HTTPS wildcards (few).
    const out: HostSummary = { tlsHosts: 0, exactTlsHosts: 0, wildcardTlsHosts: [], shared: [] };
    for (const m of MAPS) {
      const map = this.maps.get(m)!;
      const c = changes.maps[m] ?? { put: {}, delete: [] };
      let size = map.size;
      let shared = this.shared.get(m) ?? 0;
      const wild = new Set(m === HTTPS_SERVER ? this.wildcards : []);
      for (const h of c.delete) {
        const old = map.get(h);
        if (!old) continue;
        size--;
        if (usesSharedProxy(old.entry)) shared--;
        wild.delete(h);
      }
      for (const [h, entry] of Object.entries(c.put)) {
        const old = map.get(h);
        if (old) {
          if (usesSharedProxy(old.entry)) shared--;
        } else size++;
        if (usesSharedProxy(entry)) shared++;
        if (h.startsWith('*.') && m === HTTPS_SERVER) wild.add(h);
      }
      if (shared > 0) out.shared.push(m);
      if (m === HTTPS_SERVER) {
        out.tlsHosts = size;
        out.wildcardTlsHosts = [...wild].sort();
        out.exactTlsHosts = size - wild.size;
      }
    }
    return out;
  }

  /**
   * The plan for a rendering of only the routes `ids` (their rows as they are now: a route missing
   * from `rendered.owners` renders no host any more). 'full' when the frame would change or an L4
   * route is among them.
   */
  planRoutes(settings: ProxySettings, rendered: RenderedHosts, ids: Iterable<number>, l4Now: Set<number>, metrics: boolean): Plan | 'full' {
    if (this.empty) return 'full';
    const changes: HostChanges = { maps: {} };
    const owners = new Map<number, HostRef[]>();
    const put = (m: string) => (changes.maps[m] ??= { put: {}, delete: [] });
    const putKeys = new Set<string>();
    const idList = [...ids];
    for (const id of idList) {
      if (this.l4Routes.has(id) || l4Now.has(id)) return 'full';
      if (this.customCertRoutes.has(id) || rendered.customCertRoutes.includes(id)) return 'full';
      const refs = rendered.owners.get(id) ?? [];
      owners.set(id, refs);
      for (const ref of refs) {
        const entry = rendered.maps[ref.map as keyof RenderedHosts['maps']][ref.host];
        const old = this.maps.get(ref.map)!.get(ref.host);
        putKeys.add(`${ref.map}\0${ref.host}`);
        if (old && entryJson(old) === JSON.stringify(entry)) continue;
        put(ref.map).put[ref.host] = entry;
      }
    }
    for (const id of idList) {
      for (const ref of this.owners.get(id) ?? []) {
        if (putKeys.has(`${ref.map}\0${ref.host}`) || !this.maps.get(ref.map)!.has(ref.host)) continue;
        put(ref.map).delete.push(ref.host);
        putKeys.add(`${ref.map}\0${ref.host}`);
      }
    }
    return this.finish(settings, changes, owners, false, metrics);
  }

  /** The plan for a full rendering: every host compared. 'full' when the frame would change. */
  planAll(settings: ProxySettings, rendered: RenderedHosts, metrics: boolean): Plan | 'full' {
    if (this.empty) return 'full';
    const changes: HostChanges = { maps: {} };
    for (const m of MAPS) {
      const have = this.maps.get(m)!;
      const want = rendered.maps[m];
      const c: { put: Record<string, HostEntry>; delete: string[] } = { put: {}, delete: [] };
      for (const [h, entry] of Object.entries(want)) {
        const old = have.get(h);
        if (!old || entryJson(old) !== JSON.stringify(entry)) c.put[h] = entry;
      }
      for (const h of have.keys()) if (!(h in want)) c.delete.push(h);
      if (Object.keys(c.put).length || c.delete.length) changes.maps[m] = c;
    }
    const frame = this.frameAfter(settings, changes, metrics, rendered);
    if (frame !== this.frameJson) return 'full';
    return { ...this.count(changes), owners: new Map(rendered.owners), allOwners: true };
  }

  private count(changes: HostChanges): Pick<Plan, 'changes' | 'count'> {
    let count = 0;
    for (const c of Object.values(changes.maps)) count += Object.keys(c.put).length + c.delete.length;
    return { changes, count };
  }

  private finish(settings: ProxySettings, changes: HostChanges, owners: Map<number, HostRef[]>, allOwners: boolean, metrics: boolean): Plan | 'full' {
    const { count } = this.count(changes);
    if (this.frameAfter(settings, changes, metrics) !== this.frameJson) return 'full';
    return { changes, count, owners, allOwners };
  }

  /** Caddy accepted the plan's changes and the database committed: hold them. */
  commit(plan: Plan): void {
    for (const [m, c] of Object.entries(plan.changes.maps)) {
      const map = this.maps.get(m)!;
      let shared = this.shared.get(m) ?? 0;
      const drop = (h: string) => {
        const old = map.get(h);
        if (old && this.acc) xorInto(this.acc, hostTerm(m, h, (old.hash ??= configHash(old.entry))));
        if (old && usesSharedProxy(old.entry)) shared--;
        map.delete(h);
        if (m === HTTPS_SERVER) this.wildcards.delete(h);
      };
      for (const h of c.delete) drop(h);
      for (const [h, entry] of Object.entries(c.put)) {
        drop(h);
        const rec: HostRecord = { entry };
        map.set(h, rec);
        if (this.acc) xorInto(this.acc, hostTerm(m, h, (rec.hash = configHash(entry))));
        if (usesSharedProxy(entry)) shared++;
        if (m === HTTPS_SERVER && h.startsWith('*.')) this.wildcards.add(h);
      }
      this.shared.set(m, shared);
    }
    if (plan.allOwners) this.owners = new Map(plan.owners);
    else {
      for (const [id, refs] of plan.owners) {
        if (refs.length) this.owners.set(id, refs);
        else this.owners.delete(id);
      }
    }
  }

  /** The whole configuration Caddy runs (frame + host maps), as the renderer would render it. */
  config(): CaddyConfig | null {
    if (this.frameJson === null) return null;
    const frame = JSON.parse(this.frameJson) as CaddyConfig;
    const maps: Record<string, Record<string, HostEntry>> = {};
    for (const [m, map] of this.maps) maps[m] = Object.fromEntries([...map].map(([h, r]) => [h, r.entry]));
    return assembleConfig(frame, maps);
  }

  /** config_hash of what Caddy runs (proxyConfigHash of config(), kept up to date host by host). */
  configHash(): string | null {
    if (this.frameJson === null) return null;
    if (!this.acc) {
      const acc = Buffer.alloc(32);
      for (const [m, map] of this.maps) for (const [h, r] of map) xorInto(acc, hostTerm(m, h, (r.hash ??= configHash(r.entry))));
      this.acc = acc;
    }
    return combine(this.frameHash()!, this.acc);
  }

  /** The canonical hash of the frame (the running configuration with its host maps emptied). */
  frameHash(): string | null {
    if (this.frameJson === null) return null;
    return (this.frameHashCache ??= configHash(JSON.parse(this.frameJson)));
  }

  /** Per host of a map, the hash caddy-modules/hostroute reports for it (configHash of the entry). */
  hostHashes(m: string): Map<string, string> {
    const out = new Map<string, string>();
    for (const [h, r] of this.maps.get(m) ?? []) out.set(h, (r.hash ??= configHash(r.entry)));
    return out;
  }

  hostMaps(): string[] {
    return [...this.maps.keys()].filter(
      (m) => m === HTTP_SERVER || this.maps.get(m)!.size > 0 || (this.frameJson !== null && frameHostMap(JSON.parse(this.frameJson), m) !== undefined),
    );
  }

  hostEntry(m: string, host: string): HostEntry | undefined {
    return this.maps.get(m)?.get(host)?.entry;
  }
}

/** A configuration with its host maps emptied: what the frame of a running configuration is (`inPlace`: cfg itself is emptied). */
export function frameOf(cfg: CaddyConfig, inPlace = false): CaddyConfig {
  const copy = inPlace ? cfg : (JSON.parse(JSON.stringify(cfg)) as CaddyConfig);
  for (const m of MAPS) {
    const map = frameHostMap(copy, m);
    if (map) for (const k of Object.keys(map)) delete map[k];
  }
  return copy;
}
