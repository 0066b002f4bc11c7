// Two (or more) Gatehouse edges on one PostgreSQL, each a whole node (sidecar, its Caddy, its
// WireGuard interface, its keepalived) in its own network namespace, all on one bridge: the set-up
// of the cluster end-to-end test (test/e2e/cluster.test.ts).
//
//   bridge (host namespace, .1: PostgreSQL through a TCP relay, the webhook receiver)
//    ├─ node a (.2)  ├─ node b (.3)  ├─ peer (.10, the tunnel's far end, a backend behind it)
//    └─ visitor (.20)
//   The floating address (.100) is moved between the nodes by keepalived.
//
// PostgreSQL listens on loopback in the host namespace; a relay on the bridge address carries the
// nodes' connections to it (a node's connections end when its link goes down or its processes die,
// as across a real network).
import { execFileSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Network } from './netns.js';
import { waitFor } from './wait.js';

export interface Bridge {
  name: string;
  /** the first three octets of the bridge's /24 */
  subnet: string;
  hostAddr: string;
  /** namespace → its address on the bridge and the host end of its link */
  members: Map<string, { addr: string; hostEnd: string; nsEnd: string }>;
  cleanup(): Promise<void>;
}

/** A bridge in the host namespace with the given namespaces on it (addresses <subnet>.<octet>/24). */
export async function createBridge(network: Network, subnet: string, members: { ns: string; octet: number }[]): Promise<Bridge> {
  const name = network.ifName('br');
  const hostLinks: string[] = [];
  const run = (ns: string | null, args: string[]) => network.exec(ns, 'ip', args, { check: true });
  await run(null, ['link', 'add', name, 'type', 'bridge']);
  hostLinks.push(name);
  await run(null, ['addr', 'add', `${subnet}.1/24`, 'dev', name]);
  await run(null, ['link', 'set', name, 'up']);
  const m = new Map<string, { addr: string; hostEnd: string; nsEnd: string }>();
  for (const { ns, octet } of members) {
    const hostEnd = network.ifName(`h${octet}`);
    const nsEnd = network.ifName(`n${octet}`);
    await run(null, ['link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd, 'netns', ns]);
    hostLinks.push(hostEnd);
    await run(null, ['link', 'set', hostEnd, 'master', name, 'up']);
    await run(ns, ['addr', 'add', `${subnet}.${octet}/24`, 'dev', nsEnd]);
    await run(ns, ['link', 'set', nsEnd, 'up']);
    await run(ns, ['link', 'set', 'lo', 'up']);
    m.set(ns, { addr: `${subnet}.${octet}`, hostEnd, nsEnd });
  }
  return {
    name,
    subnet,
    hostAddr: `${subnet}.1`,
    members: m,
    cleanup: async () => {
      for (const l of hostLinks.reverse()) await network.exec(null, 'ip', ['link', 'del', l]);
    },
  };
}

/** A TCP relay listen → to (the nodes reach PostgreSQL on loopback through it); closing it cuts every connection. */
export async function tcpRelay(listen: { host: string; port: number }, to: { host: string; port: number }): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => {
    const u = net.connect(to.port, to.host);
    for (const s of [c, u]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        c.destroy();
        u.destroy();
      });
    }
    c.pipe(u).pipe(c);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(listen.port, listen.host, resolve));
  return {
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The test PostgreSQL: TEST_DATABASE_URL, else the local cluster scripts/pg-test-server.sh starts (as root); null when neither is there. */
export function testPostgresUrl(): string | null {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  try {
    return execFileSync('bash', [path.resolve(import.meta.dirname, '../../scripts/pg-test-server.sh')], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim()
      .split('\n')
      .pop()!;
  } catch {
    return null;
  }
}

/** A database of its own on the test PostgreSQL (URL as scripts/pg-test-server.sh prints it); dropped by drop(). */
export async function createDatabase(adminUrl: string, name: string): Promise<{ url: (host: string, port: number) => string; drop(): Promise<void> }> {
  const pg = await import('pg');
  const c = new pg.default.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(adminUrl);
  return {
    url: (host, port) => `postgres://${u.username}:${u.password}@${host}:${port}/${name}`,
    drop: async () => {
      const d = new pg.default.Client({ connectionString: adminUrl });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await d.end();
    },
  };
}

export interface NodeProcess {
  name: string;
  ns: string;
  addr: string;
  dir: string;
  env: Record<string, string>;
  child: ChildProcess;
  log(): string;
}

const root = path.resolve(import.meta.dirname, '..', '..');

/** Starts a sidecar (which starts its Caddy and WireGuard) in namespace ns; resolves once GET /health answers 200 on addr:port. */
export async function startNode(
  network: Network,
  o: { name: string; ns: string; addr: string; port: number; env: Record<string, string>; dir: string },
): Promise<NodeProcess> {
  fs.mkdirSync(o.dir, { recursive: true });
  const logFile = path.join(o.dir, 'sidecar.log');
  const env = { ...(process.env as Record<string, string>), ...o.env };
  const child = network.spawn(o.ns, process.execPath, ['--import', 'tsx', path.join(root, 'sidecar/src/main.ts')], {
    env,
    cwd: path.join(root, 'sidecar'),
    stdio: ['ignore', fs.openSync(logFile, 'a'), fs.openSync(logFile, 'a')],
  });
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`node ${o.name} exited (${child.exitCode}):\n${log().slice(-3000)}`);
      return (await getJson(`http://${o.addr}:${o.port}/health`, {}, 1000).catch(() => ({ status: 0 }))).status === 200;
    },
    90_000,
    { intervalMs: 200, what: `node ${o.name} healthy` },
  );
  return { name: o.name, ns: o.ns, addr: o.addr, dir: o.dir, env: o.env, child, log };
}

/** SIGKILL to every process in a namespace (the sidecar, its Caddy, wireguard-go, keepalived). */
export async function killNamespace(network: Network, ns: string): Promise<number[]> {
  const r = await network.exec(null, 'ip', ['netns', 'pids', ns]);
  const pids = r.stdout.split(/\s+/).filter(Boolean).map(Number);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  return pids;
}

/** A small JSON request from the host namespace (over the bridge). */
export function getJson<T = unknown>(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
  timeoutMs = 5000,
): Promise<{ status: number; data: T; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const req = http.request(
      url,
      {
        method: o.method ?? 'GET',
        headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...o.headers },
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        let t = '';
        res.setEncoding('utf8').on('data', (d: string) => (t += d));
        res.on('end', () => {
          let data: unknown = t;
          try {
            data = JSON.parse(t);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, data: data as T, headers: res.headers });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A fresh working directory for one node. */
export function nodeDir(base: string, name: string): string {
  const d = path.join(base, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

/** A temporary base directory for a cluster run. */
export function clusterTmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-cluster-${crypto.randomBytes(3).toString('hex')}-`));
}
