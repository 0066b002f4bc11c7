// This server's public host (system/public-host.ts): the classifier that judges by form whether the
// internet can resolve a host; PublicHost (GATEHOUSE_PUBLIC_HOST, else the machine's hostname) with
// its warning for a fallback the internet cannot resolve; the field GET /settings/app
// `app.public_host`, the peer config's Endpoint from the same place, and the warning in the log at start.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import winston from 'winston';
import { classifyHost, PublicHost, type PublicHostProblem } from '../src/system/public-host.js';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { objAt } from '../../test/lib/json.js';

describe('classifyHost (by form, no DNS)', () => {
  test('names and addresses the internet can resolve or reach', () => {
    for (const h of [
      'gatehouse.example.com',
      'vpn.acme.de',
      'GATEHOUSE.Example.COM.',
      'a-b.c-d.io',
      'x.y.z.example.org',
      '203.0.113.1x.example.net',
      '8.8.8.8',
      '1.1.1.1',
      '2001:4860:4860::8888',
      '[2001:4860:4860::8888]',
      '  vpn.example.com  ',
    ]) {
      assert.deepEqual(classifyHost(h), { public: true, problem: null }, h);
    }
  });

  test('what it cannot: single labels, local-only suffixes, invalid names, non-global addresses', () => {
    const cases: Array<[string, PublicHostProblem]> = [
      ['', 'empty'],
      ['   ', 'empty'],
      ['vm', 'single_label'],
      ['gatehouse', 'single_label'],
      ['gatehouse.', 'single_label'],
      ['localhost', 'local_suffix'],
      ['box.localhost', 'local_suffix'],
      ['gatehouse.local', 'local_suffix'],
      ['nas.lan', 'local_suffix'],
      ['srv.home', 'local_suffix'],
      ['srv.fritz.home.arpa', 'local_suffix'],
      ['home.arpa', 'local_suffix'],
      ['gw.internal', 'local_suffix'],
      ['gw.corp', 'local_suffix'],
      ['host.localdomain', 'local_suffix'],
      ['app.test', 'local_suffix'],
      ['x.invalid', 'local_suffix'],
      ['my_host.example.com', 'invalid_name'],
      ['-bad.example.com', 'invalid_name'],
      ['a..b.com', 'invalid_name'],
      ['127.0.0.1', 'loopback_ip'],
      ['::1', 'loopback_ip'],
      ['[::1]', 'loopback_ip'],
      ['0.0.0.0', 'loopback_ip'],
      ['10.0.0.5', 'private_ip'],
      ['172.16.3.4', 'private_ip'],
      ['192.168.178.1', 'private_ip'],
      ['100.64.0.1', 'private_ip'],
      ['fd12:3456::1', 'private_ip'],
      ['::ffff:192.168.1.1', 'private_ip'],
      ['169.254.1.1', 'link_local_ip'],
      ['fe80::1', 'link_local_ip'],
      ['fe80::1%eth0', 'link_local_ip'],
      ['224.0.0.1', 'not_global_ip'],
      ['192.0.2.10', 'not_global_ip'],
      ['127.1', 'not_global_ip'],
      ['10.1', 'not_global_ip'],
    ];
    for (const [h, problem] of cases) assert.deepEqual(classifyHost(h), { public: false, problem }, JSON.stringify(h));
  });
});

describe('PublicHost', () => {
  test('GATEHOUSE_PUBLIC_HOST set: it applies, no warning (also when it is a private address: set on purpose)', () => {
    assert.deepEqual(new PublicHost({ publicHost: 'vpn.example.com' }, () => 'vm').current(), {
      host: 'vpn.example.com',
      source: 'env',
      internet_resolvable: true,
      problem: null,
      warning: null,
    });
    const lan = new PublicHost({ publicHost: '192.168.1.10' }, () => 'vm');
    assert.deepEqual(lan.current(), { host: '192.168.1.10', source: 'env', internet_resolvable: false, problem: 'private_ip', warning: null });
    assert.equal(lan.configured(), '192.168.1.10');
    // brackets around an IPv6 address are dropped (the endpoint adds them back)
    assert.equal(new PublicHost({ publicHost: '[2001:db8::1]' }).current().host, '2001:db8::1');
  });

  test('unset: the hostname, with a warning when the internet cannot resolve it', () => {
    const single = new PublicHost({}, () => 'vm').current();
    assert.equal(single.host, 'vm');
    assert.equal(single.source, 'hostname');
    assert.equal(single.internet_resolvable, false);
    assert.equal(single.problem, 'single_label');
    assert.match(single.warning!, /GATEHOUSE_PUBLIC_HOST is not set/);
    assert.match(single.warning!, /"vm"/);
    assert.match(single.warning!, /a single-label name/);
    assert.equal(new PublicHost({ publicHost: '  ' }, () => 'box.local').current().problem, 'local_suffix');
    assert.match(new PublicHost({}, () => 'box.local').current().warning!, /local-only suffix/);
    assert.equal(new PublicHost({}, () => 'box.local').configured(), null);
    // a hostname that may resolve: used, no warning
    assert.deepEqual(new PublicHost({}, () => 'srv1.example.net').current(), {
      host: 'srv1.example.net',
      source: 'hostname',
      internet_resolvable: true,
      problem: null,
      warning: null,
    });
  });
});

describe('GET /settings/app public_host, the peer config endpoint and the start log', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  const appOf = async (s: TestServer) => {
    const r = await s.req('/api/v1/settings/app', { headers: bearer(await apiToken(s)) });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    return r.data.app;
  };
  const endpointOf = async (s: TestServer) => {
    const h = bearer(await apiToken(s));
    const p = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name: 'laptop' } });
    assert.equal(p.status, 201, JSON.stringify(p.data));
    const conf = await s.req(`/api/v1/peers/${p.data.peer.id}/config`, { headers: h });
    return /^Endpoint = (.+)$/m.exec(conf.data as string)![1];
  };

  test('unset, the hostname a single label: the field carries the warning, logged once at start; the peer config carries the hostname', async () => {
    const logged: string[] = [];
    const log = winston.createLogger({
      level: 'debug',
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream: new Writable({ write: (c, _e, cb) => (logged.push(String(c)), cb()) }) })],
    });
    const s = await startTestServer({ GATEHOUSE_PUBLIC_HOST: '', GATEHOUSE_WG_PORT: '51820' }, { log, hostname: () => 'gatehouse-box' });
    servers.push(s);
    const app = await appOf(s);
    assert.equal(app.public_host.host, 'gatehouse-box');
    assert.equal(app.public_host.source, 'hostname');
    assert.equal(app.public_host.internet_resolvable, false);
    assert.equal(app.public_host.problem, 'single_label');
    assert.match(app.public_host.warning!, /GATEHOUSE_PUBLIC_HOST is not set, so peer configs use this machine's hostname "gatehouse-box"/);
    assert.equal(app.wireguard.public_host, null);
    assert.equal(await endpointOf(s), 'gatehouse-box:51820');
    const warnings = logged.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn' && /GATEHOUSE_PUBLIC_HOST is not set/.test(l.message));
    assert.equal(warnings.length, 1, 'logged once at start');
    assert.equal(warnings[0].message, app.public_host.warning);
    // the OpenAPI document describes the field
    const doc = (await s.req('/api/v1/openapi.json', { headers: bearer(await apiToken(s)) })).data;
    const props = objAt(
      doc,
      'paths',
      '/api/v1/settings/app',
      'get',
      'responses',
      '200',
      'content',
      'application/json',
      'schema',
      'properties',
      'app',
      'properties',
      'public_host',
    );
    assert.deepEqual(Object.keys(objAt(props, 'properties')).sort(), ['host', 'internet_resolvable', 'problem', 'source', 'warning']);
  });

  test('unset, the hostname a dotted public-looking name: used, no warning', async () => {
    const s = await startTestServer({ GATEHOUSE_PUBLIC_HOST: '', GATEHOUSE_WG_PORT: '51820' }, { hostname: () => 'edge1.example.net' });
    servers.push(s);
    assert.deepEqual((await appOf(s)).public_host, { host: 'edge1.example.net', source: 'hostname', internet_resolvable: true, problem: null, warning: null });
    assert.equal(await endpointOf(s), 'edge1.example.net:51820');
  });

  test('set: it applies everywhere, no warning', async () => {
    const s = await startTestServer({ GATEHOUSE_PUBLIC_HOST: 'vpn.example.com', GATEHOUSE_WG_PORT: '51820' });
    servers.push(s);
    const app = await appOf(s);
    assert.deepEqual(app.public_host, { host: 'vpn.example.com', source: 'env', internet_resolvable: true, problem: null, warning: null });
    assert.equal(app.wireguard.public_host, 'vpn.example.com');
    assert.equal(await endpointOf(s), 'vpn.example.com:51820');
  });
});
