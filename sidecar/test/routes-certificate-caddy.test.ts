// The certificate state of the route views with the REAL bin/caddy supervised by the sidecar and its
// internal CA (GATEHOUSE_TLS=internal, the tests' default): an HTTPS route is pending until its first
// TLS handshake (exact names are issued on demand), then valid, issued by Caddy's local CA, read from
// the certificate file Caddy wrote into its storage under the data directory. Skipped without bin/caddy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import tls from 'node:tls';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { caddyPaths } from '../src/proxy/supervisor.js';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';
import { CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
let s: TestServer;
let auth: Record<string, string>;
let ports: { http: number; https: number; admin: number };
let peerId: number;
const call = apiCall(
  () => s,
  () => auth,
);

before(async () => {
  if (skip) return;
  ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
  s = await startTestServer(
    { ...managedCaddyEnv(ports), GATEHOUSE_WG_SUBNET: `127.78.${10 + (process.pid % 200)}.0/24`, GATEHOUSE_RATE_LIMIT_ADMIN: '100000' },
    { startFeatures: true },
  );
  auth = bearer(await apiToken(s));
  const peer = await call('/peers', 'POST', { name: 'cert-backend' });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  peerId = peer.data.peer.id;
});
after(async () => {
  if (!skip) await s.close();
});

/** A TLS handshake with this SNI on Caddy's HTTPS port (what makes Caddy issue an on-demand certificate). */
function handshake(name: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tls.connect({ host: '127.0.0.1', port: ports.https, servername: name, rejectUnauthorized: false }, () => {
      sock.end();
      resolve(true);
    });
    sock.setTimeout(3000, () => {
      sock.destroy();
      resolve(false);
    });
    sock.on('error', () => resolve(false));
  });
}

test(
  'an HTTPS route: pending, then valid from the internal CA once Caddy wrote its certificate; HTTP-only and L4 without TLS: not applicable',
  { skip },
  async () => {
    const c = await call('/routes', 'POST', { domain: 'cert.test', peer_id: peerId, target_port: 8080, https_enabled: true });
    assert.equal(c.status, 201, JSON.stringify(c.data));
    const id = c.data.route.id;
    assert.equal(c.data.route.certificate.state, 'pending');
    assert.equal(c.data.route.certificate.domain, 'cert.test');
    assert.equal(c.data.route.certificate.internal, true);
    assert.equal(c.data.route.route_auth, null);

    const route = await waitFor(
      async () => {
        await handshake('cert.test');
        const r = (await call(`/routes/${id}`)).data.route;
        if (r.certificate.state !== 'valid') throw new Error(`state ${r.certificate.state}`);
        return r;
      },
      20_000,
      'the certificate of cert.test from the internal CA',
    );
    const crt = `${caddyPaths(s.dataDir).xdgData}/caddy/certificates/local/cert.test/cert.test.crt`;
    assert.ok(fs.existsSync(crt), `Caddy wrote ${crt}`);
    assert.equal(route.certificate.internal, true);
    assert.match(route.certificate.issuer!, /Caddy Local Authority/);
    assert.ok(Date.parse(route.certificate.not_after!) > Date.now());
    assert.equal(route.certificate.last_error, null);
    const inList = (await call('/routes?q=cert.test')).data.routes.find((r: { id: number }) => r.id === id);
    assert.deepEqual(inList!.certificate, route.certificate);

    const plain = await call('/routes', 'POST', { domain: 'plain.test', peer_id: peerId, target_port: 8080 });
    assert.equal(plain.data.route.certificate.state, 'not_applicable');
    const l4 = await call('/routes', 'POST', { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: await freePort(), peer_id: peerId, target_port: 22 });
    assert.equal(l4.status, 201, JSON.stringify(l4.data));
    assert.equal(l4.data.route.certificate.state, 'not_applicable');
  },
);
