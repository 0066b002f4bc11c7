// The floating address of a cluster (docs/guides/cluster.md#the-floating-address-keepalived):
// keepalived (VRRP) moves one address between the nodes, and the node holding it carries the
// WireGuard tunnels and the public traffic. Gatehouse does not run keepalived; it renders its
// configuration (`npm run cli -- keepalived-config`) and reads back which state keepalived put
// this node in (`npm run cli -- vrrp-state`): the rendered `notify` command writes MASTER, BACKUP,
// FAULT or STOP into a state file on every transition, and the reader checks that file against
// whether the address is on a local interface and whether keepalived still runs.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';

/** What the status reports of a node: master holds the floating address, backup stands by. */
export type VrrpRole = 'master' | 'backup' | 'unknown';

export interface KeepalivedOptions {
  /** this node's name, written into the header comment */
  nodeName?: string;
  /** the interface the floating address goes on (and VRRP adverts leave by) */
  iface: string;
  /** VRRP router id, 1-255: the same on every node of the cluster, unique on the network segment */
  routerId: number;
  /** 1-254: the higher wins the first election; nopreempt keeps the holder afterwards */
  priority: number;
  /** the floating address with its prefix, e.g. 203.0.113.10/24 */
  address: string;
  /** the other nodes' addresses (unicast VRRP); empty: multicast */
  peers: string[];
  /** the file the notify command writes the state into (absolute; read by readVrrpStatus) */
  stateFile: string;
  /** seconds between adverts (default 1: a backup takes over about 3.5 s after the master went silent) */
  advertIntS?: number;
}

export class VrrpConfigError extends Error {}

const IFACE = /^[a-zA-Z0-9_.=+-]{1,15}$/;
// The state file lands inside a single-quoted sh -c script: no quote, space or shell character.
const SAFE_PATH = /^\/[A-Za-z0-9._/-]+$/;

function parseCidr(v: string): { ip: string; family: 4 | 6; bits: number } | null {
  const [ip, bits, extra] = v.split('/');
  const family = net.isIP(ip ?? '');
  if (extra !== undefined || !family || !bits || !/^\d{1,3}$/.test(bits)) return null;
  const n = Number(bits);
  return n <= (family === 4 ? 32 : 128) ? { ip: ip!, family: family as 4 | 6, bits: n } : null;
}

/** Refuses options keepalived would reject or that would not do what they say; the message names the option. */
export function checkKeepalivedOptions(o: KeepalivedOptions): void {
  const bad = (what: string) => {
    throw new VrrpConfigError(what);
  };
  if (!IFACE.test(o.iface)) bad(`interface: ${JSON.stringify(o.iface)} is not an interface name`);
  if (!Number.isInteger(o.routerId) || o.routerId < 1 || o.routerId > 255) bad('virtual router id: must be 1-255');
  if (!Number.isInteger(o.priority) || o.priority < 1 || o.priority > 254) bad('priority: must be 1-254');
  const addr = parseCidr(o.address);
  if (!addr) bad(`address: ${JSON.stringify(o.address)} is not an address with a prefix such as 203.0.113.10/24`);
  for (const p of o.peers) {
    const family = net.isIP(p);
    if (!family) bad(`peers: ${JSON.stringify(p)} is not an IP address`);
    if (family !== addr!.family) bad(`peers: ${p} is not of the floating address's family (IPv${addr!.family})`);
    if (p === addr!.ip) bad(`peers: ${p} is the floating address itself`);
  }
  if (!SAFE_PATH.test(o.stateFile)) bad(`state file: ${JSON.stringify(o.stateFile)} must be an absolute path of letters, digits, ".", "_", "-" and "/"`);
  const advert = o.advertIntS ?? 1;
  if (!(advert >= 0.01 && advert <= 255)) bad('advert interval: must be 0.01-255 seconds');
}

/**
 * keepalived.conf for one node (pure: same options, same text). Every node gets the same
 * instance, router id and address; only the priority (and the peer list: the others) differ.
 * `state BACKUP` + `nopreempt` on every node: a node that comes back does not take the address
 * back (no second failover); the first election goes to the highest priority.
 */
export function renderKeepalivedConfig(o: KeepalivedOptions): string {
  checkKeepalivedOptions(o);
  const tmp = `${o.stateFile}.tmp`;
  const lines = [
    `# keepalived configuration of Gatehouse node ${o.nodeName ?? os.hostname()} (npm run cli -- keepalived-config)`,
    '# Install as /etc/keepalived/keepalived.conf (apt-get install keepalived), then: systemctl restart keepalived',
    '# Every node: the same router id and address; its own priority; the other nodes as unicast peers.',
    'global_defs {',
    '  script_user root',
    '  enable_script_security',
    '}',
    '',
    'vrrp_instance gatehouse {',
    '  state BACKUP',
    '  nopreempt',
    `  interface ${o.iface}`,
    `  virtual_router_id ${o.routerId}`,
    `  priority ${o.priority}`,
    `  advert_int ${o.advertIntS ?? 1}`,
  ];
  if (o.peers.length) lines.push('  unicast_peer {', ...o.peers.map((p) => `    ${p}`), '  }');
  lines.push(
    '  virtual_ipaddress {',
    `    ${o.address} dev ${o.iface}`,
    '  }',
    '  # keepalived runs it with: INSTANCE gatehouse <MASTER|BACKUP|FAULT|STOP> <priority>; the state goes to the file Gatehouse reads',
    `  notify "/bin/sh -c 'echo $3 > ${tmp} && mv ${tmp} ${o.stateFile}' gatehouse-vrrp-notify"`,
    '}',
  );
  return lines.join('\n') + '\n';
}

export interface VrrpStatus {
  vrrp: VrrpRole;
  /** the state keepalived last wrote (MASTER, BACKUP, FAULT, STOP), null: no state file */
  keepalived_state: string | null;
  /** whether the floating address is on a local interface (null: no address configured) */
  address_held: boolean | null;
  /** whether keepalived's process is alive (null: no pid file configured) */
  keepalived_running: boolean | null;
  /** why the role is what it is, in words */
  reason: string;
}

/**
 * The role from what was observed (pure). master: keepalived runs, says MASTER, and the address is
 * here; backup: keepalived runs, says BACKUP, and the address is not here. Everything else is
 * unknown: keepalived gone (a killed keepalived leaves its address behind and a MASTER in the file),
 * FAULT or STOP, no state yet, or a state that contradicts the address.
 */
export function vrrpRoleFrom(seen: { stateText: string | null; addressHeld: boolean | null; running: boolean | null }): VrrpStatus {
  const state = seen.stateText === null ? null : (seen.stateText.trim().split(/\s+/)[0] ?? '').toUpperCase() || null;
  const base = { keepalived_state: state, address_held: seen.addressHeld, keepalived_running: seen.running };
  const is = (vrrp: VrrpRole, reason: string): VrrpStatus => ({ vrrp, ...base, reason });
  if (seen.running === false) return is('unknown', 'keepalived is not running');
  if (state === null) return is('unknown', 'keepalived has not written a state');
  if (state === 'MASTER') {
    return seen.addressHeld === false ? is('unknown', 'MASTER, but the floating address is not on a local interface') : is('master', 'MASTER');
  }
  if (state === 'BACKUP') {
    return seen.addressHeld === true ? is('unknown', 'BACKUP, but the floating address is on a local interface') : is('backup', 'BACKUP');
  }
  if (state === 'FAULT' || state === 'STOP') return is('unknown', `keepalived reports ${state}`);
  return is('unknown', `unrecognised state ${JSON.stringify(state.slice(0, 32))}`);
}

export interface VrrpStatusSource {
  /** the notify command's state file */
  stateFile: string;
  /** the floating address (with or without prefix); unset: not checked */
  address?: string;
  /** keepalived's pid file; unset or '': not checked (e.g. keepalived runs outside this container) */
  pidFile?: string;
}

/** The addresses on this machine's interfaces (of the network namespace this process runs in). */
export function localAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a !== undefined)
    .map((a) => a.address);
}

function readOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function pidAlive(pidFile: string): boolean {
  const pid = Number((readOrNull(pidFile) ?? '').trim());
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This node's VRRP role, from the state file, the local interfaces and keepalived's pid file. */
export function readVrrpStatus(src: VrrpStatusSource, addresses: () => string[] = localAddresses): VrrpStatus {
  const ip = src.address ? src.address.split('/')[0]!.toLowerCase() : null;
  return vrrpRoleFrom({
    stateText: readOrNull(src.stateFile),
    addressHeld: ip === null ? null : addresses().some((a) => a.toLowerCase() === ip),
    running: src.pidFile ? pidAlive(src.pidFile) : null,
  });
}
