// Custom certificates with the REAL bin/caddy supervised by the sidecar: a CA and a leaf for a test
// domain are made with openssl, uploaded, and named by an HTTPS route; a TLS handshake with that SNI
// to 127.0.0.1 is answered with exactly the uploaded leaf (its SHA-256 fingerprint), while another
// HTTPS route keeps its automatic certificate from the internal CA. Replacing the certificate (the
// renewal) is served at once; switching the route back to automatic serves the internal CA's again.
// Skipped without bin/caddy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import tls from 'node:tls';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';
import { CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';
import { makeChain } from '../../test/lib/certs.js';

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
    { ...managedCaddyEnv(ports), GATEHOUSE_WG_SUBNET: `127.79.${10 + (process.pid % 200)}.0/24`, GATEHOUSE_RATE_LIMIT_ADMIN: '100000' },
    { startFeatures: true },
  );
  auth = bearer(await apiToken(s));
  const peer = await call('/peers', 'POST', { name: 'custom-cert-backend' });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  peerId = peer.data.peer.id;
});
after(async () => {
  if (!skip) await s.close();
});

/** The leaf certificate Caddy serves for this SNI on its HTTPS port (its SHA-256 fingerprint and issuer CN). */
function served(name: string): Promise<{ fingerprint: string; issuer: string }> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port: ports.https, servername: name, rejectUnauthorized: false }, () => {
      const cert = sock.getPeerCertificate();
      sock.end();
      resolve({ fingerprint: cert.fingerprint256, issuer: String(cert.issuer?.CN ?? '') });
    });
    sock.setTimeout(5000, () => {
      sock.destroy();
      reject(new Error('TLS handshake timed out'));
    });
    sock.on('error', reject);
  });
}

test('an uploaded certificate is what Caddy serves for the route that names it; renewal and switching back apply at once', { skip }, async () => {
  const chain = makeChain({ names: ['secure.custom.test'] });
  const up = await call('/certificates', 'POST', { name: 'custom test', certificate_pem: chain.chain, private_key_pem: chain.key });
  assert.equal(up.status, 201, JSON.stringify(up.data));
  const certId = up.data.certificate.id;
  assert.equal(up.data.certificate.fingerprint_sha256, chain.fingerprint);

  const r = await call('/routes', 'POST', { domain: 'secure.custom.test', peer_id: peerId, target_port: 8080, https_enabled: true, certificate_id: certId });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const auto = await call('/routes', 'POST', { domain: 'auto.custom.test', peer_id: peerId, target_port: 8080, https_enabled: true });
  assert.equal(auto.status, 201, JSON.stringify(auto.data));

  const got = await waitFor(
    async () => {
      const c = await served('secure.custom.test');
      if (c.fingerprint !== chain.fingerprint) throw new Error(`served ${c.fingerprint} from ${c.issuer}`);
      return c;
    },
    20_000,
    'Caddy serving the uploaded certificate',
  );
  assert.equal(got.issuer, 'Gatehouse Test CA');
  // the other HTTPS route keeps its automatic certificate (the internal CA, on demand)
  const other = await waitFor(() => served('auto.custom.test'), 20_000, 'the internal CA certificate of auto.custom.test');
  assert.notEqual(other.fingerprint, chain.fingerprint);
  assert.match(other.issuer, /Caddy Local Authority/);

  // renewal by upload: served at once
  const renewed = makeChain({ names: ['secure.custom.test'] });
  const put = await call(`/certificates/${certId}`, 'PUT', { certificate_pem: renewed.chain, private_key_pem: renewed.key });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  assert.equal((await served('secure.custom.test')).fingerprint, renewed.fingerprint);

  // back to automatic: the internal CA issues one on demand
  const back = await call(`/routes/${r.data.route.id}`, 'PUT', { certificate_id: null });
  assert.equal(back.status, 200, JSON.stringify(back.data));
  const auto2 = await waitFor(
    async () => {
      const c = await served('secure.custom.test');
      if (!/Caddy Local Authority/.test(c.issuer)) throw new Error(`still ${c.issuer}`);
      return c;
    },
    20_000,
    'the automatic certificate again',
  );
  assert.notEqual(auto2.fingerprint, renewed.fingerprint);
});
