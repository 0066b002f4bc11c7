// Pure and local parts of the reference client: fingerprint, state directory, wg-quick parsing and
// routes, argument parsing, RDP candidate choice, xfreerdp command line, and the one-time key
// round trip of the credential envelope.
//   cd client && npm test
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encryptCredentials, decryptCredentials, EnvelopeError } from '@gatehouse/common/rdp-credentials.js';
import { renderPeerConfig } from '@gatehouse/common/wireguard/render.js';
import { generateKeyPair } from '@gatehouse/common/wireguard/keys.js';
import { parseArgs, opt, seconds, UsageError } from '../src/cli-args.js';
import { dnsHostname } from '../src/daemon.js';
import { fingerprintOf, machineFingerprint, readMachineId, FingerprintError, FINGERPRINT_LABEL } from '../src/fingerprint.js';
import { oneTimeKey, pickCandidate, which, xfreerdpArgs } from '../src/rdp.js';
import { defaultStateDir, StateDir, StateError } from '../src/state.js';
import { parseWgQuick, routesFor, WgConfigError } from '../src/wgconf.js';

const tmp = (p: string) => fs.mkdtempSync(path.join(os.tmpdir(), p));

describe('fingerprint', () => {
  test('SHA-256 of the label and the machine id, hex; stable, whitespace ignored', () => {
    const id = '0123456789abcdef0123456789abcdef';
    const fp = fingerprintOf(id);
    assert.equal(
      fp,
      crypto
        .createHash('sha256')
        .update(FINGERPRINT_LABEL + id)
        .digest('hex'),
    );
    assert.match(fp, /^[0-9a-f]{64}$/);
    assert.equal(fingerprintOf(`${id}\n`), fp);
    assert.notEqual(fingerprintOf('fedcba9876543210fedcba9876543210'), fp);
    assert.notEqual(fp, crypto.createHash('sha256').update(id).digest('hex'), 'the raw machine id hash is not sent');
  });

  test('reads the first readable machine-id file; override wins; errors name the way out', () => {
    const d = tmp('gc-fp-');
    const f = path.join(d, 'machine-id');
    fs.writeFileSync(f, '\n  abcdef0123456789abcdef0123456789\n');
    assert.equal(readMachineId([path.join(d, 'missing'), f]), 'abcdef0123456789abcdef0123456789');
    assert.equal(machineFingerprint({ machineIdFile: f }), fingerprintOf('abcdef0123456789abcdef0123456789'));
    assert.equal(machineFingerprint({ override: 'test-machine-1', machineIdFile: f }), 'test-machine-1');
    assert.throws(() => machineFingerprint({ override: 'has space in it' }), FingerprintError);
    assert.throws(() => readMachineId([path.join(d, 'missing')]), /--fingerprint or --machine-id-file/);
    fs.rmSync(d, { recursive: true });
  });
});

describe('state directory', () => {
  test('files are 0600 in a 0700 directory, written atomically, read back', () => {
    const d = path.join(tmp('gc-state-'), 'nested', 'state');
    const s = new StateDir(d);
    assert.equal(s.readClient(), null);
    assert.throws(
      () => s.requireClient(),
      (e: Error) => e instanceof StateError && /run: gatehouse-client register/.test(e.message),
    );
    s.writeClient({ server_url: 'http://127.0.0.1:1', token: 'gth_secret', registered_at: 'x', registration: { peer: { id: 3 } } });
    s.writeTunnel('sha256:' + 'a'.repeat(64), { config: '[Interface]\n' });
    assert.equal(fs.statSync(d).mode & 0o777, 0o700);
    for (const f of [s.clientFile, s.tunnelFile]) assert.equal(fs.statSync(f).mode & 0o777, 0o600, f);
    assert.equal(s.requireClient().token, 'gth_secret');
    assert.equal(s.readTunnel()?.config_hash, 'sha256:' + 'a'.repeat(64));
    assert.deepEqual(fs.readdirSync(d).sort(), ['client.json', 'tunnel.json'], 'no temp files left behind');
    fs.writeFileSync(s.clientFile, '{broken');
    assert.throws(() => s.readClient(), /not valid JSON/);
  });

  test('pid file: claimed, refused while a live process holds it, stale ones ignored, released', () => {
    const s = new StateDir(tmp('gc-pid-'));
    assert.equal(s.runningPid(), null);
    s.claimPid();
    assert.equal(s.runningPid(), process.pid);
    assert.throws(() => s.claimPid(process.pid + 100_000), /already running/);
    s.releasePid();
    assert.equal(s.runningPid(), null);
    fs.writeFileSync(s.pidFile, '999999999\n'); // no such process
    assert.equal(s.runningPid(), null);
    s.claimPid();
    assert.equal(s.runningPid(), process.pid);
  });

  test('default directory: env, root, XDG', () => {
    assert.equal(defaultStateDir({ GATEHOUSE_CLIENT_STATE_DIR: '/x' }, 1000), '/x');
    assert.equal(defaultStateDir({}, 0), '/var/lib/gatehouse-client');
    assert.equal(defaultStateDir({ XDG_CONFIG_HOME: '/home/u/.cfg' }, 1000), '/home/u/.cfg/gatehouse-client');
  });
});

describe('tunnel config', () => {
  const k = generateKeyPair();
  const srv = generateKeyPair();
  const psk = generateKeyPair().privateKey;
  test('parses what the server renders (renderPeerConfig)', () => {
    const text = renderPeerConfig({
      privateKey: k.privateKey,
      address: '10.8.0.7',
      dns: ['10.8.0.1', 'vpn.internal'],
      serverPublicKey: srv.publicKey,
      presharedKey: psk,
      endpoint: 'vpn.example.com:51820',
      allowedIps: ['10.8.0.0/24', '192.168.1.0/24'],
      persistentKeepalive: 25,
      mtu: 1380,
    });
    const c = parseWgQuick(text);
    assert.deepEqual(c, {
      privateKey: k.privateKey,
      addresses: ['10.8.0.7/32'],
      dns: ['10.8.0.1', 'vpn.internal'],
      mtu: 1380,
      peer: {
        publicKey: srv.publicKey,
        presharedKey: psk,
        endpoint: 'vpn.example.com:51820',
        allowedIps: ['10.8.0.0/24', '192.168.1.0/24'],
        persistentKeepalive: 25,
      },
    });
  });

  test('refuses what wg or ip must never see', () => {
    const good = renderPeerConfig({
      privateKey: k.privateKey,
      address: '10.8.0.7/32',
      serverPublicKey: srv.publicKey,
      endpoint: '203.0.113.5:51820',
      subnet: '10.8.0.0/24',
    });
    assert.equal(parseWgQuick(good).peer.persistentKeepalive, 25);
    const bad: Array<[string, RegExp]> = [
      [good.replace(/PrivateKey = .*/, 'PrivateKey = nope'), /PrivateKey/],
      [good.replace(/Address = .*/, 'Address = 10.8.0.300/32'), /Address/],
      [good.replace(/Endpoint = .*/, 'Endpoint = 203.0.113.5'), /Endpoint/],
      [good.replace(/AllowedIPs = .*/, 'AllowedIPs = 10.8.0.0/24; rm -rf /'), /AllowedIPs/],
      [good + '\n[Peer]\nPublicKey = ' + k.publicKey + '\n', /one \[Peer\]/],
      ['PrivateKey = x\n', /inside a section/],
    ];
    for (const [text, re] of bad)
      assert.throws(
        () => parseWgQuick(text),
        (e: Error) => e instanceof WgConfigError && re.test(e.message),
        re.source,
      );
  });

  test('routes: the allowed ranges; a default route becomes the two /1 halves', () => {
    assert.deepEqual(routesFor(['10.8.0.0/24', '192.168.1.0/24']), { routes: ['10.8.0.0/24', '192.168.1.0/24'], fullTunnel: false });
    assert.deepEqual(routesFor(['10.8.0.0/24', '0.0.0.0/0']), { routes: ['10.8.0.0/24', '0.0.0.0/1', '128.0.0.0/1'], fullTunnel: true });
  });
});

describe('command line', () => {
  const valued = new Set(['server', 'state-dir', 'xfreerdp-arg', 'poll-interval']);
  test('flags anywhere, --x=y, repeatable values, everything after -- kept apart', () => {
    const p = parseArgs(
      ['rdp', '--state-dir', '/s', 'connect', '--json', '4', '--xfreerdp-arg=/cert:ignore', '--xfreerdp-arg', '+auth-only', '--', '/log-level:WARN', '--json'],
      valued,
    );
    assert.deepEqual(p.positional, ['rdp', 'connect', '4']);
    assert.equal(opt(p, 'state-dir'), '/s');
    assert.deepEqual(p.flags.get('xfreerdp-arg'), ['/cert:ignore', '+auth-only']);
    assert.deepEqual(p.rest, ['/log-level:WARN', '--json']);
    assert.ok(p.flags.has('json'));
  });

  test('environment fallbacks and checked numbers; unknown options refused', () => {
    const p = parseArgs(['up'], valued);
    assert.equal(opt(p, 'server', 'GH_TEST_SERVER', { GH_TEST_SERVER: 'http://x' }), 'http://x');
    assert.equal(seconds(p, 'poll-interval', 'GH_POLL', 10, {}), 10_000);
    assert.equal(seconds(p, 'poll-interval', 'GH_POLL', 10, { GH_POLL: '0.5' }), 500);
    assert.throws(() => seconds(p, 'poll-interval', 'GH_POLL', 10, { GH_POLL: '-1' }), UsageError);
    assert.throws(() => parseArgs(['up', '--bogus'], valued), /unknown option --bogus/);
    assert.throws(() => parseArgs(['up', '--server'], valued), /needs a value/);
  });

  test('hostnames are made acceptable to the internal DNS', () => {
    assert.equal(dnsHostname('My_Laptop.Local'), 'my-laptop.local');
    assert.equal(dnsHostname('-weird--name-'), 'weird--name');
    assert.equal(dnsHostname('x'.repeat(80)), 'x'.repeat(63));
  });
});

describe('rdp', () => {
  test('the one-time key opens only envelopes made for it', async () => {
    const key = await oneTimeKey(2048);
    const other = await oneTimeKey(2048);
    const creds = { username: 'alice', password: 'pä$$ word', domain: 'CORP' };
    const env = await encryptCredentials(key.spki, creds);
    assert.equal(env.kid, key.kid);
    assert.deepEqual(await decryptCredentials(key.privateKey, key.kid, env), creds);
    await assert.rejects(decryptCredentials(other.privateKey, other.kid, env), EnvelopeError);
    await assert.rejects(decryptCredentials(other.privateKey, key.kid, env), EnvelopeError);
    await assert.rejects(decryptCredentials(key.privateKey, key.kid, { ...env, data: env.data.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }), EnvelopeError);
  });

  test('the xfreerdp command line never holds the password', () => {
    const args = xfreerdpArgs('/s/rdp/4.rdp', { username: 'alice', domain: 'CORP' }, ['+auth-only', '/cert:ignore']);
    assert.deepEqual(args, ['/s/rdp/4.rdp', '/u:alice', '/d:CORP', '/from-stdin:force', '+auth-only', '/cert:ignore']);
    assert.deepEqual(xfreerdpArgs('/p.rdp', { username: 'bob', domain: '' }, []), ['/p.rdp', '/u:bob', '/from-stdin:force']);
    assert.deepEqual(xfreerdpArgs('/p.rdp', null, []), ['/p.rdp']);
  });

  test('access mode both takes the first candidate that answers; others the first', async () => {
    const c = [
      { host: '10.8.0.9', port: 3389, mode: 'internal' as const, rdp_file: 'a' },
      { host: 'rdp.example.com', port: 3390, mode: 'external' as const, rdp_file: 'b' },
    ];
    const seen: string[] = [];
    const probe = async (h: string) => {
      seen.push(h);
      return h === 'rdp.example.com';
    };
    const both = await pickCandidate('both', c, probe);
    assert.equal(both.chosen.rdp_file, 'b');
    assert.deepEqual(
      both.probed.map((p) => p.reachable),
      [false, true],
    );
    seen.length = 0;
    assert.equal((await pickCandidate('gateway', c, probe)).chosen.rdp_file, 'a');
    assert.deepEqual(seen, [], 'no probe outside mode both');
    assert.equal((await pickCandidate('both', c, async () => false)).chosen.rdp_file, 'a', 'nothing answers: the first');
    await assert.rejects(pickCandidate('both', [], probe), /no address/);
  });

  test('which finds executables on PATH only', () => {
    const d = tmp('gc-which-');
    fs.writeFileSync(path.join(d, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(d, 'data'), 'x', { mode: 0o644 });
    assert.equal(which('tool', `/nonexistent:${d}`), path.join(d, 'tool'));
    assert.equal(which('data', d), null);
    assert.equal(which(path.join(d, 'tool'), ''), path.join(d, 'tool'));
  });
});
