// The `.rdp` connect profile renderer (src/rdp/rdp-file.ts): golden files per access mode's address
// and option set, the mapping of each route field to its Microsoft setting, and what a profile must
// never carry (a password, a second line smuggled in through a value).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseRdpFile, RdpFileError, renderRdpFile, type RdpProfileInput } from '../src/rdp/rdp-file.js';
import { assertGolden, goldenDir } from './lib/golden.js';

const GOLDEN = goldenDir('rdp');
const golden = (name: string, actual: string) => assertGolden(path.join(GOLDEN, name), actual);

/** The defaults of a new RDP route (data contract: NLA on, audio local, clipboard on, full screen, 32 bpp, no RD gateway). */
const defaults: Omit<RdpProfileInput, 'address'> = {
  resolution: null,
  color_depth: 32,
  audio_mode: 'local',
  clipboard_enabled: true,
  network_level_auth: true,
  gateway_host: null,
  gateway_port: null,
};

test('internal mode: the target through the tunnel, route defaults (golden)', () => {
  const text = renderRdpFile({ ...defaults, address: { host: '10.8.0.5', port: 3389 } });
  golden('internal-defaults.rdp', text);
  assert.equal(renderRdpFile({ ...defaults, address: { host: '10.8.0.5', port: 3389 } }), text, 'deterministic');
  assert.ok(text.endsWith('\r\n') && !/[^\r]\n/.test(text), 'every line ends in CRLF');
});

test('external mode: public host and port, fixed resolution, 16 bpp, audio at the remote computer, no clipboard (golden)', () => {
  golden(
    'external-options.rdp',
    renderRdpFile({
      ...defaults,
      address: { host: 'desk.example.com', port: 53389 },
      resolution: '1920x1080',
      color_depth: 16,
      audio_mode: 'remote',
      clipboard_enabled: false,
    }),
  );
});

test('gateway mode: the server public host and the linked L4 port, NLA off, audio off (golden)', () => {
  golden(
    'gateway-no-nla.rdp',
    renderRdpFile({
      ...defaults,
      address: { host: 'vpn.example.org', port: 33890 },
      network_level_auth: false,
      audio_mode: 'off',
      color_depth: 24,
    }),
  );
});

test('RD gateway pair, IPv6 target, user name and domain from the client (golden)', () => {
  golden(
    'rd-gateway-ipv6-user.rdp',
    renderRdpFile({
      ...defaults,
      address: { host: 'fd00:8::5', port: 3389 },
      resolution: '1280x800',
      color_depth: 15,
      gateway_host: 'rdg.example.com',
      gateway_port: 8443,
      username: 'alice',
      domain: 'CORP',
    }),
  );
});

test('each field maps to its documented Microsoft setting', () => {
  const s = (input: Partial<RdpProfileInput>) => parseRdpFile(renderRdpFile({ ...defaults, address: { host: 'h', port: 3389 }, ...input }));
  const v = (input: Partial<RdpProfileInput>, key: string) => s(input).get(key)?.value;
  assert.equal(v({}, 'full address'), 'h:3389');
  assert.equal(s({}).get('full address')?.type, 's');
  assert.equal(v({ address: { host: '2001:db8::1', port: 3390 } }, 'full address'), '[2001:db8::1]:3390');
  // full screen: no fixed size
  assert.equal(v({}, 'screen mode id'), '2');
  assert.equal(v({}, 'desktopwidth'), undefined);
  assert.equal(v({ resolution: '1024x768' }, 'screen mode id'), '1');
  assert.equal(v({ resolution: '1024x768' }, 'desktopwidth'), '1024');
  assert.equal(v({ resolution: '1024x768' }, 'desktopheight'), '768');
  for (const bpp of [15, 16, 24, 32] as const) assert.equal(v({ color_depth: bpp }, 'session bpp'), String(bpp));
  assert.equal(v({ audio_mode: 'local' }, 'audiomode'), '0');
  assert.equal(v({ audio_mode: 'remote' }, 'audiomode'), '1');
  assert.equal(v({ audio_mode: 'off' }, 'audiomode'), '2');
  assert.equal(v({ clipboard_enabled: true }, 'redirectclipboard'), '1');
  assert.equal(v({ clipboard_enabled: false }, 'redirectclipboard'), '0');
  assert.equal(v({ network_level_auth: true }, 'enablecredsspsupport'), '1');
  assert.equal(v({ network_level_auth: true }, 'authentication level'), '2');
  assert.equal(v({ network_level_auth: false }, 'enablecredsspsupport'), '0');
  assert.equal(v({ network_level_auth: false }, 'authentication level'), '0');
  // RD gateway: always used when the pair is set; never a default gateway otherwise
  assert.equal(v({}, 'gatewayusagemethod'), '0');
  assert.equal(v({}, 'gatewayprofileusagemethod'), '1');
  assert.equal(v({}, 'gatewayhostname'), undefined);
  assert.equal(v({ gateway_host: 'g.example', gateway_port: null }, 'gatewayhostname'), 'g.example');
  assert.equal(v({ gateway_host: 'g.example', gateway_port: 443 }, 'gatewayhostname'), 'g.example');
  assert.equal(v({ gateway_host: 'g.example', gateway_port: 4443 }, 'gatewayhostname'), 'g.example:4443');
  assert.equal(v({ gateway_host: 'g.example' }, 'gatewayusagemethod'), '1');
  assert.equal(v({ gateway_host: 'g.example' }, 'gatewayprofileusagemethod'), '1');
  // no user name unless passed
  assert.equal(v({}, 'username'), undefined);
  assert.equal(v({}, 'domain'), undefined);
  assert.equal(v({ username: 'bob', domain: '' }, 'username'), 'bob');
  assert.equal(v({ username: 'bob', domain: '' }, 'domain'), undefined);
});

test('a profile never carries a password and no value can add a line', () => {
  const text = renderRdpFile({ ...defaults, address: { host: 'h', port: 3389 }, username: 'alice', domain: 'CORP', ...({ password: 'hunter2' } as object) });
  assert.ok(!text.includes('hunter2'));
  assert.ok(!/password/i.test(text));
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: 'h', port: 3389 }, username: 'alice\r\npassword 51:b:00' }), RdpFileError);
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: 'h\nx', port: 3389 } }), RdpFileError);
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: 'h', port: 3389 }, gateway_host: 'g\u0000' }), RdpFileError);
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: '', port: 3389 } }), RdpFileError);
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: 'h', port: 70000 } }), RdpFileError);
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: 'h', port: 3389 }, resolution: 'big' }), RdpFileError);
  assert.throws(() => renderRdpFile({ ...defaults, address: { host: 'h', port: 3389 }, color_depth: 8 as never }), RdpFileError);
});
