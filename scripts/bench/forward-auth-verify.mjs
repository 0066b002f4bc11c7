// Setup half of scripts/bench/forward-auth-verify.sh (plain JS on the sidecar compiled to
// $BENCH_DIST, so the figures are those of production code, not of tsx): starts a throwaway sidecar (SQLite, no Caddy
// or WireGuard management) on BENCH_SIDECAR_PORT, creates an HTTP route with route auth and one
// signed-in session, prints one JSON line {port, domain, routeId, cookie}, and keeps serving until
// SIGTERM. With BENCH_FAST_PORT it also serves verify on a plain node http server through
// the server's fast path (running.fastPath: no Koa). With BENCH_CADDY_CONFIG set it also writes a Caddy config (built with the route-auth
// builders) that serves the same route twice on BENCH_CADDY_PORT: host `protected.bench` with
// forward auth to this sidecar, host `open.bench` without, both proxying to BENCH_BACKEND.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.BENCH_DIST;
if (!dist) throw new Error('BENCH_DIST (the compiled sidecar) is required');
const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
const { loadConfig } = await load('config.js');
const { startServer } = await load('server.js');
const { createLogger } = await load('util/logger.js');
const { protectionRoutes } = await load('proxy/fragments/protection.js');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-fa-'));
const port = Number(process.env.BENCH_SIDECAR_PORT ?? 0);
const config = loadConfig({
  GATEHOUSE_DATA_DIR: dataDir,
  GATEHOUSE_PORT: String(port),
  GATEHOUSE_ADMIN_PASSWORD: 'bench-password-1',
  GATEHOUSE_MANAGE_CADDY: 'false',
  GATEHOUSE_WG_MANAGE: 'false',
  GATEHOUSE_LOG_LEVEL: 'error',
});
const running = await startServer(config, { startFeatures: false, log: createLogger('error', true) });
const domain = 'protected.bench';
const now = Date.now();
const row = await running.deps.db.models.Route.create({ domain, route_type: 'http', target_kind: 'peer', enabled: true, created_at: now, updated_at: now });
const routeId = Number(row.get('id'));
const svc = running.deps.routeAuth;
await svc.save(routeId, { method: 'email_password', email: 'bench@example.test', password: 'bench password', session_max_age: 86_400_000 });
const token = await svc.createSession(routeId, 'bench@example.test', 'active', 'email_password', 86_400_000);

// The same verify on node's http server without Koa (running.fastPath), in this process.
let fastPort = null;
if (process.env.BENCH_FAST_PORT) {
  const http = await import('node:http');
  const fast = running.fastPath;
  const srv = http.createServer((req, res) => {
    if (!fast(req, res)) {
      res.statusCode = 404;
      res.end();
    }
  });
  srv.keepAliveTimeout = 65_000;
  await new Promise((resolve) => srv.listen(Number(process.env.BENCH_FAST_PORT), '127.0.0.1', resolve));
  fastPort = srv.address().port;
}

if (process.env.BENCH_CADDY_CONFIG) {
  const base = {
    id: routeId,
    domain,
    basic_auth_user: null,
    basic_auth_password_hash: null,
    ip_filter_enabled: false,
    ip_filter_mode: null,
    ip_filter_rules: null,
    acl_enabled: false,
    rate_limit_enabled: false,
    rate_limit_requests: null,
    rate_limit_window: null,
  };
  const rest = [{ handler: 'reverse_proxy', upstreams: [{ dial: process.env.BENCH_BACKEND }] }];
  const site = (host, routeAuth) => ({
    match: [{ host: [host] }],
    handle: [
      {
        handler: 'subroute',
        routes: protectionRoutes({ ...base, domain: host }, { routeAuth, sidecarUpstream: `127.0.0.1:${running.port}`, aclAddresses: [] }, rest),
      },
    ],
    terminal: true,
  });
  const caddy = {
    admin: { disabled: true },
    logging: { logs: { default: { level: 'ERROR' } } },
    apps: {
      http: {
        servers: {
          bench: {
            listen: [`127.0.0.1:${process.env.BENCH_CADDY_PORT}`],
            automatic_https: { disable: true },
            routes: [site(domain, true), site('open.bench', false)],
          },
        },
      },
    },
  };
  fs.writeFileSync(process.env.BENCH_CADDY_CONFIG, JSON.stringify(caddy));
}

process.stdout.write(JSON.stringify({ port: running.port, fastPort, domain, routeId, cookie: `gh_ra_${routeId}=${token}` }) + '\n');
const stop = async () => {
  await running.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
