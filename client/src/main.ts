#!/usr/bin/env node
// gatehouse-client: the reference desktop client of Gatehouse (Linux). Commands: register, up,
// status, services, rdp list, rdp connect <id>, down. `gatehouse-client --help` lists the options;
// the root README, "Reference desktop client", describes them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger, type Level } from '@gatehouse/common/json-log.js';
import { ApiError, ClientApi } from './api.js';
import { has, opt, parseArgs, seconds, UsageError, type ParsedArgs } from './cli-args.js';
import { Daemon, dnsHostname } from './daemon.js';
import { FingerprintError, machineFingerprint } from './fingerprint.js';
import { rdpConnect } from './rdp.js';
import { defaultStateDir, pidAlive, StateDir, StateError, type ClientState } from './state.js';
import { Tunnel } from './tunnel.js';
import { parseWgQuick } from './wgconf.js';

const DEFAULT_IFACE = 'gatehouse-c0';
const IFACE_RE = /^[a-zA-Z0-9_.=+-]{1,15}$/;

const USAGE = `usage: gatehouse-client <command> [options]

commands:
  register --server URL --token TOKEN   register this machine (token also from $GATEHOUSE_CLIENT_TOKEN
                                        or --token-file FILE); stores server, token and state
  up                                    fetch the tunnel config, bring the tunnel up, stay in the
                                        foreground: config checks, heartbeats, hostname reports
  status                                the tunnel and the server's view
  services                              the routes this client may use
  rdp list                              the RDP routes this client may use
  rdp status <id> [--refresh]           reachability of an RDP route's target (--refresh: check now)
  rdp connect <id> [-- xfreerdp args]   write the .rdp profile, decrypt the credentials, start xfreerdp
  down                                  stop the running 'up' (pid file) and take the tunnel down

options (environment variable in brackets):
  --state-dir DIR          state directory [GATEHOUSE_CLIENT_STATE_DIR]; default /var/lib/gatehouse-client
                           for root, else ~/.config/gatehouse-client
  --fingerprint VALUE      send this machine fingerprint instead of the one of /etc/machine-id
                           [GATEHOUSE_CLIENT_FINGERPRINT] (register stores it for later commands)
  --machine-id-file FILE   read the machine id from FILE [GATEHOUSE_CLIENT_MACHINE_ID_FILE]
  --hostname NAME          the hostname to register and report [GATEHOUSE_CLIENT_HOSTNAME]
  --interface NAME         WireGuard interface (up, status, down) [GATEHOUSE_CLIENT_INTERFACE]; default ${DEFAULT_IFACE}
  --userspace              wireguard-go even when the kernel has WireGuard [GATEHOUSE_CLIENT_USERSPACE=1]
  --listen-port PORT       the tunnel's UDP port [GATEHOUSE_CLIENT_LISTEN_PORT]; default a free one
  --no-tunnel              up: talk to the server but manage no interface
  --poll-interval S        seconds between config checks [GATEHOUSE_CLIENT_POLL_INTERVAL]; default 15
  --heartbeat-interval S   seconds between heartbeats [GATEHOUSE_CLIENT_HEARTBEAT_INTERVAL]; default 60
  --max-backoff S          ceiling of the retry back-off [GATEHOUSE_CLIENT_MAX_BACKOFF]; default 300
  --log-level LEVEL        error, warn, info, debug [GATEHOUSE_CLIENT_LOG_LEVEL]; default info
  --json                   machine-readable output (register, status, services, rdp list, rdp status, rdp connect)
  rdp connect only:
  --out FILE               where the .rdp profile goes; default <state-dir>/rdp/<id>.rdp
  --no-launch              only write the profile (and check the credentials decrypt)
  --xfreerdp PATH          the FreeRDP binary [GATEHOUSE_CLIENT_XFREERDP]; default xfreerdp
  --xfreerdp-arg ARG       one more xfreerdp argument (repeatable; also everything after --)
  --probe-timeout S        access mode both: seconds per reachability check; default 3
  --session-heartbeat S    seconds between session heartbeats; default: the server's interval
`;

const VALUED = new Set([
  'server',
  'token',
  'token-file',
  'state-dir',
  'fingerprint',
  'machine-id-file',
  'hostname',
  'interface',
  'listen-port',
  'poll-interval',
  'heartbeat-interval',
  'max-backoff',
  'log-level',
  'out',
  'xfreerdp',
  'xfreerdp-arg',
  'probe-timeout',
  'session-heartbeat',
]);

class CliError extends Error {
  constructor(
    message: string,
    readonly code = 1,
  ) {
    super(message);
  }
}

export function clientVersion(): string {
  // src/main.ts (tsx) and dist/gatehouse-client.mjs (bundle) both sit one level below package.json
  const p = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
  try {
    return (JSON.parse(fs.readFileSync(p, 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

interface Ctx {
  args: ParsedArgs;
  state: StateDir;
  json: boolean;
  print: (text: string) => void;
  say: (text: string) => void;
}

function hostnameOf(a: ParsedArgs): string {
  return opt(a, 'hostname', 'GATEHOUSE_CLIENT_HOSTNAME') ?? os.hostname();
}

function ifaceOf(a: ParsedArgs, fallback?: string): string {
  const v = opt(a, 'interface', 'GATEHOUSE_CLIENT_INTERFACE') ?? fallback ?? DEFAULT_IFACE;
  if (!IFACE_RE.test(v)) throw new UsageError('--interface: 1 to 15 letters, digits or _.=+-');
  return v;
}

function fingerprintFor(a: ParsedArgs, client: ClientState | null): string {
  const override = opt(a, 'fingerprint', 'GATEHOUSE_CLIENT_FINGERPRINT') ?? client?.fingerprint;
  return machineFingerprint({ override, machineIdFile: opt(a, 'machine-id-file', 'GATEHOUSE_CLIENT_MACHINE_ID_FILE') });
}

function apiFor(c: Ctx): { api: ClientApi; client: ClientState } {
  const client = c.state.requireClient();
  return { api: new ClientApi(client.server_url, client.token, fingerprintFor(c.args, client)), client };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]))).join('  ')).join('\n');
}

// ---------------------------------------------------------------- commands

/** What `status` learnt from the server: reachable with its version and answers, or why not. */
type ServerCheck = {
  reachable: boolean;
  version?: string;
  registered?: boolean;
  config_current?: boolean | null;
  permissions?: unknown;
  error?: string;
  status?: number | null;
};

async function cmdRegister(c: Ctx): Promise<void> {
  const server = opt(c.args, 'server', 'GATEHOUSE_CLIENT_SERVER');
  const tokenFile = opt(c.args, 'token-file');
  let token = opt(c.args, 'token', 'GATEHOUSE_CLIENT_TOKEN');
  if (!token && tokenFile) token = fs.readFileSync(tokenFile, 'utf8').trim();
  if (!server || !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(server)) throw new UsageError('register needs --server http(s)://host[:port]');
  if (!token) throw new UsageError('register needs --token TOKEN (or $GATEHOUSE_CLIENT_TOKEN, --token-file FILE)');
  const override = opt(c.args, 'fingerprint', 'GATEHOUSE_CLIENT_FINGERPRINT');
  const fingerprint = machineFingerprint({ override, machineIdFile: opt(c.args, 'machine-id-file', 'GATEHOUSE_CLIENT_MACHINE_ID_FILE') });
  const api = new ClientApi(server, token, fingerprint);
  const hostname = dnsHostname(hostnameOf(c.args)) || 'linux-client';
  const r = await api.register({ hostname, platform: `${os.platform()}-${os.arch()}`, client_version: clientVersion() });
  const { ok: _ok, ...registration } = r;
  c.state.writeClient({
    server_url: api.baseUrl,
    token,
    ...(override ? { fingerprint: override } : {}),
    registered_at: new Date().toISOString(),
    registration,
  });
  if (c.json) c.print(JSON.stringify({ ok: true, state_dir: c.state.dir, ...registration }, null, 2));
  else
    c.print(
      `${r.created ? 'registered' : 'already registered'}: machine ${r.machine.id}, peer ${r.peer.name} (${r.peer.address}); state in ${c.state.dir}\nnext: gatehouse-client up`,
    );
}

async function cmdUp(c: Ctx): Promise<void> {
  const { api } = apiFor(c);
  const iface = ifaceOf(c.args);
  const level = (opt(c.args, 'log-level', 'GATEHOUSE_CLIENT_LOG_LEVEL') ?? 'info') as Level;
  if (!['error', 'warn', 'info', 'debug'].includes(level)) throw new UsageError('--log-level: error, warn, info or debug');
  const log = createLogger(level);
  const listenPortText = opt(c.args, 'listen-port', 'GATEHOUSE_CLIENT_LISTEN_PORT');
  const listenPort = listenPortText === undefined ? undefined : Number(listenPortText);
  if (listenPort !== undefined && !(Number.isInteger(listenPort) && listenPort > 0 && listenPort < 65536)) throw new UsageError('--listen-port: 1-65535');
  const userspace = has(c.args, 'userspace') || ['1', 'true', 'yes'].includes(process.env.GATEHOUSE_CLIENT_USERSPACE ?? '');
  let daemon: Daemon | null = null;
  const tunnel = has(c.args, 'no-tunnel') ? null : new Tunnel({ iface, userspaceOnly: userspace, listenPort, onExit: () => daemon?.onTunnelExit() }, log);
  daemon = new Daemon({
    state: c.state,
    api,
    log,
    iface,
    tunnel,
    pollIntervalMs: seconds(c.args, 'poll-interval', 'GATEHOUSE_CLIENT_POLL_INTERVAL', 15),
    heartbeatIntervalMs: seconds(c.args, 'heartbeat-interval', 'GATEHOUSE_CLIENT_HEARTBEAT_INTERVAL', 60),
    maxBackoffMs: seconds(c.args, 'max-backoff', 'GATEHOUSE_CLIENT_MAX_BACKOFF', 300),
    hostname: () => hostnameOf(c.args),
    version: clientVersion(),
  });
  const d = daemon;
  let stopping = false;
  const stop = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${sig}: stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await d.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  log.info(`gatehouse-client ${clientVersion()} up: server ${api.baseUrl}, interface ${tunnel ? iface : '(none: --no-tunnel)'}, state ${c.state.dir}`);
  try {
    await d.start();
  } catch (err) {
    await d.stop().catch(() => undefined);
    throw err;
  }
  await new Promise<never>(() => undefined); // runs until a signal
}

async function tunnelView(iface: string): Promise<Record<string, unknown>> {
  const t = new Tunnel({ iface }, createLogger('error'));
  const exists = await t.exists().catch(() => false);
  if (!exists) return { interface: iface, up: false };
  const mode = await t.driver.mode(iface).catch(() => null);
  const dump = await t.driver.dump(iface).catch(() => null);
  const p = dump?.peers[0];
  return {
    interface: iface,
    up: true,
    mode,
    listen_port: dump?.iface.listenPort ?? null,
    server_public_key: p?.publicKey ?? null,
    endpoint: p?.endpoint ?? null,
    allowed_ips: p?.allowedIps ?? [],
    handshake_age_s: p && p.latestHandshake > 0 ? Math.round((Date.now() - p.latestHandshake) / 1000) : null,
    rx_bytes: p?.rx ?? 0,
    tx_bytes: p?.tx ?? 0,
  };
}

async function cmdStatus(c: Ctx): Promise<void> {
  const client = c.state.readClient();
  const daemonStatus = c.state.readStatus();
  const pid = c.state.runningPid();
  const saved = c.state.readTunnel();
  const iface = ifaceOf(c.args, pid && daemonStatus ? daemonStatus.iface : undefined);
  let address: string[] = [];
  let dns: string[] = [];
  try {
    if (saved) ({ addresses: address, dns } = parseWgQuick(String(saved.config.config ?? '')));
  } catch {
    /* shown as missing */
  }
  const tunnel = await tunnelView(iface);
  let server: ServerCheck | null = null;
  const out: Record<string, unknown> = {
    ok: true,
    state_dir: c.state.dir,
    registered: !!client,
    server_url: client?.server_url ?? null,
    machine: client ? (client.registration.machine ?? null) : null,
    peer: client ? (client.registration.peer ?? null) : null,
    daemon: { running: pid !== null, pid, ...(daemonStatus && pid === daemonStatus.pid ? { status: daemonStatus } : {}) },
    config: saved ? { config_hash: saved.config_hash, saved_at: saved.saved_at, address, dns } : null,
    tunnel,
    server,
  };
  if (client) {
    const api = new ClientApi(client.server_url, client.token, fingerprintFor(c.args, client), 5000);
    try {
      const [ping, perms] = await Promise.all([api.ping(), api.permissions()]);
      const check = saved ? await api.check(saved.config_hash) : undefined;
      out.server = server = {
        reachable: true,
        version: ping.version,
        registered: ping.registered,
        config_current: check === undefined ? null : check === null,
        permissions: perms,
      };
    } catch (err) {
      const e = err as ApiError;
      out.server = server = { reachable: e.status !== null && e.status !== undefined, error: e.message, status: e.status ?? null };
    }
  }
  if (c.json) {
    c.print(JSON.stringify(out, null, 2));
    return;
  }
  const t = tunnel;
  const s = server;
  const lines = [
    `state:     ${c.state.dir}${client ? '' : ' (not registered)'}`,
    ...(client
      ? [
          `server:    ${client.server_url} — ${s?.reachable ? `reachable, version ${s.version}${s.config_current === false ? ', a newer config is waiting' : ''}` : `unreachable (${s?.error})`}`,
        ]
      : []),
    ...(client ? [`peer:      ${(client.registration.peer as { name?: string } | null | undefined)?.name ?? '?'} ${address.join(', ')}`] : []),
    `daemon:    ${pid ? `running (pid ${pid})` : 'not running'}${daemonStatus && pid === daemonStatus.pid ? `, last check ${daemonStatus.last_check_at ?? 'never'}, last heartbeat ${daemonStatus.last_heartbeat_at ?? 'never'}` : ''}`,
    `tunnel:    ${t.interface} ${t.up ? `up (${t.mode}), endpoint ${t.endpoint ?? '?'}, handshake ${t.handshake_age_s === null ? 'never' : `${t.handshake_age_s}s ago`}, rx ${t.rx_bytes} B, tx ${t.tx_bytes} B` : 'down'}`,
    ...(saved ? [`config:    ${saved.config_hash} (saved ${saved.saved_at})${dns.length ? `, DNS offered: ${dns.join(', ')}` : ''}`] : []),
  ];
  c.print(lines.join('\n'));
}

async function cmdServices(c: Ctx): Promise<void> {
  const { api } = apiFor(c);
  const r = await api.services();
  if (c.json) return c.print(JSON.stringify(r, null, 2));
  if (!r.services.length) return c.print('no services');
  c.print(
    table([
      ['ROUTE', 'NAME', 'PROTOCOL', 'ADDRESS', 'ACCESS'],
      ...r.services.map((s) => [
        String(s.route_id),
        s.name,
        s.protocol,
        s.url ?? `${s.host}${s.port ? `:${s.port}` : ''}`,
        `${s.access}${s.requires_login ? ' (login)' : ''}`,
      ]),
    ]),
  );
}

async function cmdRdp(c: Ctx): Promise<number> {
  const sub = c.args.positional[1];
  const { api } = apiFor(c);
  if (sub === 'list') {
    const r = await api.rdpList();
    if (c.json) c.print(JSON.stringify(r, null, 2));
    else if (!r.routes.length) c.print('no RDP routes');
    else
      c.print(
        table([
          ['ID', 'NAME', 'MODE', 'CREDENTIALS', 'STATE'],
          ...r.routes.map((x) => [
            String(x.id),
            x.name,
            x.access_mode,
            x.has_credentials ? 'stored' : '-',
            x.maintenance ? `maintenance until ${x.maintenance.to}: ${x.maintenance.note}` : x.rotation_pending ? 'credentials await re-entry' : 'ready',
          ]),
        ]),
      );
    return 0;
  }
  if (sub === 'status') {
    const id = Number(c.args.positional[2]);
    if (!Number.isInteger(id) || id <= 0) throw new UsageError('rdp status needs the route id (see: gatehouse-client rdp list)');
    const r = await api.rdpStatus(id, has(c.args, 'refresh'));
    if (c.json) c.print(JSON.stringify(r, null, 2));
    else {
      const st = r.status;
      c.print(
        `${st.name}: ${st.reachable ? `reachable${st.latency_ms !== null ? ` (${st.latency_ms} ms)` : ''}` : `unreachable${st.error ? ` (${st.error})` : ''}`}, checked ${new Date(st.checked_at).toISOString()}${st.maintenance ? `; maintenance until ${st.maintenance.to}: ${st.maintenance.note}` : ''}`,
      );
    }
    return 0;
  }
  if (sub === 'connect') {
    const id = Number(c.args.positional[2]);
    if (!Number.isInteger(id) || id <= 0) throw new UsageError('rdp connect needs the route id (see: gatehouse-client rdp list)');
    const hb = opt(c.args, 'session-heartbeat');
    const abort = new AbortController();
    const onSig = () => abort.abort();
    process.once('SIGINT', onSig);
    process.once('SIGTERM', onSig);
    const r = await rdpConnect({
      api,
      routeId: id,
      out: opt(c.args, 'out') ?? c.state.rdpFile(id),
      launch: !has(c.args, 'no-launch'),
      xfreerdp: opt(c.args, 'xfreerdp', 'GATEHOUSE_CLIENT_XFREERDP') ?? 'xfreerdp',
      extraArgs: [...(c.args.flags.get('xfreerdp-arg') ?? []), ...c.args.rest],
      clientName: dnsHostname(hostnameOf(c.args)) || 'linux-client',
      probeTimeoutMs: seconds(c.args, 'probe-timeout', 'GATEHOUSE_CLIENT_PROBE_TIMEOUT', 3),
      heartbeatS: hb === undefined ? undefined : seconds(c.args, 'session-heartbeat', '', 1) / 1000,
      say: c.say,
      abort: abort.signal,
    });
    if (c.json) c.print(JSON.stringify({ ok: true, ...r }, null, 2));
    return r.launched ? (r.disconnected ? 3 : (r.exit_code ?? 1)) : 0;
  }
  throw new UsageError('rdp list | rdp status <id> | rdp connect <id>');
}

async function cmdDown(c: Ctx): Promise<void> {
  const pid = c.state.runningPid();
  const st = c.state.readStatus();
  const iface = ifaceOf(c.args, st?.iface);
  if (pid) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (pidAlive(pid)) throw new CliError(`the daemon (pid ${pid}) did not stop within 15 s`);
    c.say(`stopped the daemon (pid ${pid})`);
  }
  const t = new Tunnel({ iface }, createLogger('error'));
  if (await t.exists().catch(() => false)) {
    await t.down();
    c.say(`took ${iface} down`);
  } else if (!pid) {
    c.say(`nothing to do: no daemon running for ${c.state.dir} and no interface ${iface}`);
  }
}

export async function main(argv: string[]): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, VALUED);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (has(args, 'version')) {
    process.stdout.write(`${clientVersion()}\n`);
    return 0;
  }
  const command = args.positional[0];
  if (has(args, 'help') || !command) {
    process.stdout.write(USAGE);
    return command || has(args, 'help') ? 0 : 2;
  }
  const c: Ctx = {
    args,
    state: new StateDir(path.resolve(opt(args, 'state-dir', 'GATEHOUSE_CLIENT_STATE_DIR') ?? defaultStateDir())),
    json: has(args, 'json'),
    print: (t) => process.stdout.write(t + '\n'),
    say: (t) => process.stderr.write(t + '\n'),
  };
  try {
    switch (command) {
      case 'register':
        await cmdRegister(c);
        return 0;
      case 'up':
        await cmdUp(c);
        return 0;
      case 'status':
        await cmdStatus(c);
        return 0;
      case 'services':
        await cmdServices(c);
        return 0;
      case 'rdp':
        return await cmdRdp(c);
      case 'down':
        await cmdDown(c);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n(gatehouse-client --help lists commands and options)\n`);
      return 2;
    }
    const msg =
      err instanceof ApiError || err instanceof StateError || err instanceof FingerprintError || err instanceof CliError
        ? err.message
        : ((err as Error).stack ?? String(err));
    if (c.json)
      process.stdout.write(
        JSON.stringify({ ok: false, error: (err as Error).message, status: (err as ApiError).status ?? null, body: (err as ApiError).body ?? null }) + '\n',
      );
    process.stderr.write(`gatehouse-client ${command}: ${msg}\n`);
    return err instanceof CliError ? err.code : 1;
  }
}

// run when executed (tsx src/main.ts, node dist/gatehouse-client.mjs), not when imported by tests
const self = fileURLToPath(import.meta.url);
if (process.argv[1] && fs.realpathSync(path.resolve(process.argv[1])) === fs.realpathSync(self)) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
