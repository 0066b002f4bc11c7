// WgDriver against fake `ip`, `wg` and `wireguard-go` programs (no root needed): which commands it
// runs, in which order, with which files, inside `ip netns exec` when asked, and what its errors
// carry. The real thing runs in test/e2e/wireguard-driver.test.ts (root, network namespaces).
import { test, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WgCommandError, WgDriver, type WgDriverOptions } from '@gatehouse/common/wireguard/driver.js';
import { renderServerConfig } from '@gatehouse/common/wireguard/render.js';
import type { WgInterfaceSpec } from '@gatehouse/common/wireguard/types.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wgdrv-unit-'));
const bin = path.join(root, 'bin');
const state = path.join(root, 'state');
const sockDir = path.join(root, 'sock');
const logFile = path.join(root, 'log');
fs.mkdirSync(bin);
after(() => fs.rmSync(root, { recursive: true, force: true }));

const FAKE_IP = `#!/usr/bin/env bash
echo "ip $*" >> "$FAKE_LOG"
S="$FAKE_STATE"
if [ "$1" = netns ] && [ "$2" = exec ]; then shift 3; exec "$@"; fi
detail=0; json=0
while [ "\${1:0:1}" = - ]; do case "$1" in -d) detail=1;; -j) json=1;; esac; shift; done
case "$1 $2" in
  "link show")
    [ -f "$S/link-$4" ] || { echo "Device \\"$4\\" does not exist." >&2; exit 1; }
    echo "5: $4: <POINTOPOINT,NOARP> mtu 1420"; [ $detail = 1 ] && echo "    $(cat "$S/link-$4") type"; exit 0;;
  "link add")
    [ "\${FAKE_KERNEL:-0}" = 1 ] || { echo "Error: Unknown device type." >&2; exit 2; }
    echo wireguard > "$S/link-$4"; exit 0;;
  "link del")
    [ -f "$S/link-$4" ] || { echo "Cannot find device \\"$4\\"" >&2; exit 1; }
    rm -f "$S/link-$4"; exit 0;;
  "link set") exit 0;;
  "address show")
    printf '[{"ifname":"%s","addr_info":[' "$4"; sep=""
    for a in $(cat "$S/addr-$4" 2>/dev/null); do printf '%s{"family":"inet","local":"%s","prefixlen":%s,"scope":"global"}' "$sep" "\${a%/*}" "\${a#*/}"; sep=","; done
    printf ']}]\\n'; exit 0;;
  "address add") echo "$3" >> "$S/addr-$5"; exit 0;;
  "address del") grep -vx "$3" "$S/addr-$5" > "$S/tmp" || true; mv "$S/tmp" "$S/addr-$5"; exit 0;;
esac
echo "fake ip: unhandled $*" >&2; exit 99
`;

const FAKE_WG = `#!/usr/bin/env bash
echo "wg $*" >> "$FAKE_LOG"
S="$FAKE_STATE"
case "$1" in
  setconf|syncconf)
    [ "\${FAKE_FAIL:-}" = "$1" ] && { echo "Unable to modify interface: Protocol not supported" >&2; exit 1; }
    cp "$3" "$S/conf-$2"; stat -c %a "$3" > "$S/confmode-$2"; stat -c %a "$(dirname "$3")" > "$S/confdirmode-$2"; echo "$3" > "$S/confpath-$2"; exit 0;;
  set)
    while [ $# -gt 0 ]; do
      if [ "$1" = preshared-key ] && [ "$2" != /dev/null ]; then cp "$2" "$S/psk"; stat -c %a "$2" > "$S/pskmode"; fi
      shift
    done; exit 0;;
  show)
    [ -f "$S/link-$2" ] || { echo "Unable to access interface: No such device" >&2; exit 1; }
    [ -f "$S/dump-$2" ] || { echo "Unable to access interface: Protocol not supported" >&2; exit 1; }
    cat "$S/dump-$2"; exit 0;;
esac
exit 99
`;

// Foreground "wireguard-go -f <if>": makes the tun link and the control socket, until SIGTERM or
// until its link is deleted (as the real one does).
const FAKE_WG_GO = `#!/usr/bin/env node
const fs = require('fs'), net = require('net'), path = require('path');
const iface = process.argv[3];
fs.appendFileSync(process.env.FAKE_LOG, 'wireguard-go ' + process.argv.slice(2).join(' ') + ' env=' + process.env.WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD + '\\n');
if (process.env.FAKE_WG_GO_FAIL) { console.error('failed to create TUN device: operation not permitted'); process.exit(1); }
const link = path.join(process.env.FAKE_STATE, 'link-' + iface);
fs.writeFileSync(link, 'tun');
const sock = path.join(process.env.FAKE_SOCKDIR, iface + '.sock');
// the control socket speaks enough UAPI for set=1: logs the transaction, answers errno
const srv = net.createServer((c) => {
  let buf = '';
  c.setEncoding('utf8');
  c.on('data', (d) => {
    buf += d;
    if (!buf.endsWith('\\n\\n')) return;
    fs.appendFileSync(process.env.FAKE_LOG, 'uapi ' + buf.trim().split('\\n').join(' ') + '\\n');
    c.end('errno=' + (process.env.FAKE_UAPI_ERRNO || '0') + '\\n\\n');
    buf = '';
  });
}).listen(sock);
const bye = () => { srv.close(); try { fs.unlinkSync(sock); } catch {} process.exit(0); };
process.on('SIGTERM', bye);
setInterval(() => { if (!fs.existsSync(link)) bye(); }, 20);
`;

for (const [name, text] of [
  ['ip', FAKE_IP],
  ['wg', FAKE_WG],
  ['wireguard-go', FAKE_WG_GO],
] as const) {
  fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
}

const key = (b: number) => Buffer.alloc(32, b).toString('base64');
const spec: WgInterfaceSpec = {
  iface: 'wgt0',
  privateKey: key(1),
  listenPort: 51820,
  address: '10.8.0.1/24',
  peers: [{ publicKey: key(2), presharedKey: key(3), allowedIps: ['10.8.0.2/32'] }],
};

function driver(o: WgDriverOptions = {}): WgDriver {
  return new WgDriver({ ipBin: path.join(bin, 'ip'), wgBin: path.join(bin, 'wg'), wireguardGoBin: path.join(bin, 'wireguard-go'), socketDir: sockDir, ...o });
}
const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').trim().split('\n') : []).map((l) => l.replaceAll(bin + '/', ''));
const st = (f: string) => fs.readFileSync(path.join(state, f), 'utf8').trim();

beforeEach(() => {
  fs.rmSync(state, { recursive: true, force: true });
  fs.rmSync(sockDir, { recursive: true, force: true });
  fs.rmSync(logFile, { force: true });
  fs.mkdirSync(state);
  fs.mkdirSync(sockDir);
  Object.assign(process.env, {
    FAKE_LOG: logFile,
    FAKE_STATE: state,
    FAKE_SOCKDIR: sockDir,
    FAKE_KERNEL: '0',
    FAKE_FAIL: '',
    FAKE_WG_GO_FAIL: '',
    FAKE_UAPI_ERRNO: '',
  });
});

test('up() with a kernel module: link add, setconf from a private 0600 file, address, mtu, up', async () => {
  process.env.FAKE_KERNEL = '1';
  const d = driver();
  assert.deepEqual(await d.up(spec), { mode: 'kernel' });
  const confPath = st('confpath-wgt0');
  assert.deepEqual(log(), [
    'ip -d link show dev wgt0',
    'ip link add dev wgt0 type wireguard',
    `wg setconf wgt0 ${confPath}`,
    'ip -j address show dev wgt0',
    'ip address add 10.8.0.1/24 dev wgt0',
    'ip link set dev wgt0 mtu 1420 up',
  ]);
  assert.equal(st('conf-wgt0') + '\n', renderServerConfig(spec));
  assert.equal(st('confmode-wgt0'), '600');
  assert.equal(st('confdirmode-wgt0'), '700');
  assert.equal(fs.existsSync(confPath), false, 'the secret file is deleted');
  assert.equal(fs.existsSync(path.dirname(confPath)), false, 'and its directory');
});

test('up() without kernel WireGuard runs wireguard-go -f as a supervised child; down() stops it', async () => {
  const d = driver();
  assert.deepEqual(await d.up(spec), { mode: 'userspace' });
  const pid = d.userspacePid('wgt0');
  assert.ok(pid);
  process.kill(pid, 0);
  assert.ok(log().includes('wireguard-go -f wgt0 env=1'), log().join('\n'));
  assert.equal(await d.mode('wgt0'), 'userspace');
  await d.down('wgt0');
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  assert.equal(d.userspacePid('wgt0'), null);
  assert.equal(fs.existsSync(path.join(sockDir, 'wgt0.sock')), false);
  assert.equal(await d.exists('wgt0'), false);
  await d.down('wgt0'); // nothing left: no error
});

test('a stale socket from a killed wireguard-go does not count as started', async () => {
  fs.writeFileSync(path.join(sockDir, 'wgt0.sock'), ''); // not even a socket
  process.env.FAKE_WG_GO_FAIL = '1';
  const d = driver({ startTimeoutMs: 1000 });
  await assert.rejects(d.up(spec), (e: unknown) => e instanceof WgCommandError && /exited during start/.test(e.message) && /TUN/.test(e.message));
});

test('up() on an existing interface reuses it: syncconf, stale addresses replaced', async () => {
  process.env.FAKE_KERNEL = '1';
  fs.writeFileSync(path.join(state, 'link-wgt0'), 'wireguard');
  fs.writeFileSync(path.join(state, 'addr-wgt0'), '10.9.0.1/24\n');
  const d = driver();
  assert.deepEqual(await d.up(spec), { mode: 'kernel' });
  const l = log();
  assert.ok(!l.some((x) => x.startsWith('ip link add')), 'no new link');
  assert.ok(
    l.some((x) => x.startsWith('wg syncconf wgt0 ')),
    'peers synced, not reset',
  );
  assert.ok(l.includes('ip address del 10.9.0.1/24 dev wgt0'));
  assert.equal(st('addr-wgt0'), '10.8.0.1/24');
});

test('netns: every command runs inside ip netns exec', async () => {
  process.env.FAKE_KERNEL = '1';
  fs.writeFileSync(path.join(state, 'dump-wgt0'), `${key(1)}\t${key(9)}\t51820\toff\n`);
  const d = driver({ netns: 'testns' });
  await d.up(spec);
  await d.setPeer('wgt0', { publicKey: key(4), allowedIps: ['10.8.0.3/32'] });
  assert.equal((await d.dump('wgt0'))?.iface.listenPort, 51820);
  await d.down('wgt0');
  // The fake ip logs "ip netns exec testns <cmd>" and then runs <cmd>, which logs itself.
  const cmds = log();
  assert.ok(cmds.length >= 14, cmds.join('\n'));
  for (let i = 0; i < cmds.length; i += 2) {
    assert.match(cmds[i], /^ip netns exec testns (ip|wg) /);
    assert.equal(cmds[i].replace(/^ip netns exec testns /, ''), cmds[i + 1]);
  }
});

test('setPeer: preshared key through a 0600 file or /dev/null; exact keepalive and allowed IPs', async () => {
  const d = driver();
  await d.setPeer('wgt0', {
    publicKey: key(4),
    presharedKey: key(5),
    allowedIps: ['10.8.0.3/32', '192.168.1.0/24'],
    endpoint: '10.0.0.9:51820',
    persistentKeepalive: 25,
  });
  const [first] = log();
  assert.match(
    first,
    new RegExp(
      `^wg set wgt0 peer ${key(4).replace(/[+/]/g, '\\$&')} preshared-key \\S+ endpoint 10\\.0\\.0\\.9:51820 persistent-keepalive 25 allowed-ips 10\\.8\\.0\\.3/32,192\\.168\\.1\\.0/24$`,
    ),
  );
  assert.equal(st('psk'), key(5));
  assert.equal(st('pskmode'), '600');
  await d.setPeer('wgt0', { publicKey: key(4), allowedIps: ['10.8.0.3/32'] });
  assert.equal(log()[1], `wg set wgt0 peer ${key(4)} preshared-key /dev/null persistent-keepalive off allowed-ips 10.8.0.3/32`);
  await d.removePeer('wgt0', key(4));
  assert.equal(log()[2], `wg set wgt0 peer ${key(4)} remove`);
  await assert.rejects(d.removePeer('wgt0', 'nope'), /WireGuard key/);
});

test('setPeer / removePeer on wireguard-go go through its control socket (UAPI), no wg process, no key file', async () => {
  const d = driver();
  await d.up(spec);
  const before = log().length;
  const hex = (b: number) => Buffer.alloc(32, b).toString('hex');
  await d.setPeer('wgt0', {
    publicKey: key(4),
    presharedKey: key(5),
    allowedIps: ['10.8.0.3/32', '192.168.1.0/24'],
    endpoint: '10.0.0.9:51820',
    persistentKeepalive: 25,
  });
  await d.setPeer('wgt0', { publicKey: key(4), allowedIps: ['10.8.0.3/32'], endpoint: '[2001:db8::9]:51820' });
  await d.removePeer('wgt0', key(4));
  assert.deepEqual(log().slice(before), [
    `uapi set=1 public_key=${hex(4)} preshared_key=${hex(5)} endpoint=10.0.0.9:51820 persistent_keepalive_interval=25 replace_allowed_ips=true allowed_ip=10.8.0.3/32 allowed_ip=192.168.1.0/24`,
    `uapi set=1 public_key=${hex(4)} preshared_key=${'0'.repeat(64)} endpoint=[2001:db8::9]:51820 persistent_keepalive_interval=0 replace_allowed_ips=true allowed_ip=10.8.0.3/32`,
    `uapi set=1 public_key=${hex(4)} remove=true`,
  ]);
  // a host name as endpoint needs wg (it resolves names; UAPI does not)
  await d.setPeer('wgt0', { publicKey: key(4), allowedIps: ['10.8.0.3/32'], endpoint: 'peer.example.test:51820' });
  assert.match(log().at(-1)!, /^wg set wgt0 peer \S+ preshared-key \/dev\/null endpoint peer\.example\.test:51820 /);
  await d.down('wgt0');
});

test('UAPI: wireguard-go refusing a change is an error naming the errno; without a socket, wg set', async () => {
  process.env.FAKE_UAPI_ERRNO = '22';
  const d = driver();
  await d.up(spec);
  await assert.rejects(
    d.setPeer('wgt0', { publicKey: key(4), allowedIps: ['10.8.0.3/32'] }),
    (e: unknown) => e instanceof WgCommandError && /set peer refused \(errno=22\)/.test(e.message) && e.code === 22,
  );
  await assert.rejects(d.removePeer('wgt0', key(4)), /remove peer refused \(errno=22\)/);
  await d.down('wgt0');
  // no socket (kernel interface, or wireguard-go gone): wg set
  await d.removePeer('wgt0', key(4));
  assert.equal(log().at(-1), `wg set wgt0 peer ${key(4)} remove`);
});

test('errors carry the command and its stderr; a failed setconf removes the half-made interface', async () => {
  process.env.FAKE_KERNEL = '1';
  process.env.FAKE_FAIL = 'setconf';
  const d = driver();
  await assert.rejects(d.up(spec), (e: unknown) => {
    assert.ok(e instanceof WgCommandError);
    assert.match(e.message, /^\S*\bwg setconf wgt0 \S+: exit 1: Unable to modify interface: Protocol not supported$/);
    assert.match(e.stderr, /Protocol not supported/);
    assert.equal(e.code, 1);
    assert.ok(e.args.includes('setconf'));
    return true;
  });
  assert.equal(await d.exists('wgt0'), false);
});

test('invalid specs are refused before any command runs', async () => {
  const d = driver();
  await assert.rejects(d.up({ ...spec, privateKey: 'bad' }), /privateKey/);
  await assert.rejects(d.up({ ...spec, iface: 'x; rm -rf /' }), /interface name/);
  await assert.rejects(d.setPeer('wgt0', { publicKey: key(2), allowedIps: ['10.8.0.2/32,0.0.0.0/0'] }), /allowedIps/);
  assert.deepEqual(log(), []);
});

test('dump(): parsed when present, null when the interface is missing, an error otherwise', async () => {
  const d = driver();
  assert.equal(await d.dump('wgt0'), null);
  fs.writeFileSync(path.join(state, 'link-wgt0'), 'tun');
  await assert.rejects(d.dump('wgt0'), (e: unknown) => e instanceof WgCommandError && /Protocol not supported/.test(e.message));
  fs.writeFileSync(path.join(state, 'dump-wgt0'), `${key(1)}\t${key(9)}\t51820\toff\n${key(2)}\t(none)\t10.0.0.2:4000\t10.8.0.2/32\t1700000000\t10\t20\toff\n`);
  const dump = await d.dump('wgt0');
  assert.equal(dump?.iface.publicKey, key(9));
  assert.deepEqual(
    dump?.peers.map((p) => [p.publicKey, p.rx, p.tx, p.latestHandshake]),
    [[key(2), 10, 20, 1700000000000]],
  );
});
