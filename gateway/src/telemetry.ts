// Telemetry of the gateway host, read from the OS for every heartbeat: CPU, load, memory, disk,
// versions, DNS resolvers and the default gateway.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Heartbeat } from '@gatehouse/common/gateway-protocol.js';

type Telemetry = Heartbeat['telemetry'];

function run(cmd: string, args: string[], timeoutMs = 3000): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout) => resolve(err ? null : stdout));
  });
}

let version: string | null = null;
/** The companion's version (gateway/package.json). */
export function gatewayVersion(): string {
  if (version) return version;
  for (const p of [path.resolve(import.meta.dirname, '..', 'package.json'), path.resolve(import.meta.dirname, '..', '..', '..', 'package.json')]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@gatehouse/gateway' && pkg.version) return (version = pkg.version);
    } catch {
      /* next */
    }
  }
  return (version = '0.0.0');
}

let wgVersion: Promise<string | null> | null = null;
/** First line of `wg --version` (e.g. "wireguard-tools v1.0.20210914 - https://…"), cached. */
export function wgToolsVersion(): Promise<string | null> {
  wgVersion ??= run('wg', ['--version']).then((out) => {
    const line = out?.split('\n')[0]?.trim();
    return line ? line.replace(/\s+-\s+https?:\/\/\S+$/, '').slice(0, 128) : null;
  });
  return wgVersion;
}

/** nameserver lines of /etc/resolv.conf. */
export function dnsResolvers(file = '/etc/resolv.conf'): string[] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1])
      .filter((x): x is string => !!x)
      .slice(0, 32);
  } catch {
    return [];
  }
}

/** The IPv4 default route's gateway (`ip -j route show default`), or null. */
export async function defaultGateway(): Promise<string | null> {
  const out = await run('ip', ['-j', '-4', 'route', 'show', 'default']);
  if (!out) return null;
  try {
    const routes = JSON.parse(out) as { gateway?: string }[];
    return routes.find((r) => r.gateway)?.gateway ?? null;
  } catch {
    return null;
  }
}

export async function diskUsage(p: string): Promise<{ total: number; free: number; used: number } | null> {
  try {
    const s = await fs.promises.statfs(p);
    const total = s.blocks * s.bsize;
    const free = s.bavail * s.bsize;
    return { total, free, used: total - s.bfree * s.bsize };
  } catch {
    return null;
  }
}

export async function telemetry(diskPath: string): Promise<Telemetry> {
  const total = os.totalmem();
  const free = os.freemem();
  const [wg, gw, disk] = await Promise.all([wgToolsVersion(), defaultGateway(), diskUsage(diskPath)]);
  return {
    gateway_version: gatewayVersion(),
    node_version: process.version,
    wg_tools_version: wg,
    cpu_cores: Math.max(1, os.availableParallelism?.() ?? os.cpus().length),
    cpu_load_avg: os.loadavg().map((x) => Math.round(x * 100) / 100) as [number, number, number],
    mem_total: total,
    mem_free: free,
    mem_used: total - free,
    disk,
    os_platform: os.platform(),
    os_release: os.release(),
    arch: os.arch(),
    dns_resolvers: dnsResolvers(),
    default_gateway_ip: gw,
  };
}
