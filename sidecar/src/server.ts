// Starts the whole sidecar: services, features, the HTTP server; and stops it gracefully.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Config } from './config.js';
import type { Deps } from './deps.js';
import { bootstrapAdmin, createDeps, type ContextOptions } from './app-context.js';
import { createApp } from './http/app.js';
import { allEndpoints } from './endpoints.js';
import { features, setupFeatures } from './features.js';
import type { Endpoint } from './http/registry.js';
import { webMiddleware } from './web/index.js';

export interface Running {
  deps: Deps;
  app: Koa;
  server: http.Server;
  endpoints: Endpoint[];
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface StartOptions extends ContextOptions {
  /** Skip feature start() hooks (unit tests of the API alone). */
  startFeatures?: boolean;
  listen?: boolean;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<Running> {
  const deps = await createDeps(config, opts);
  const boot = await bootstrapAdmin(deps);
  if (boot.created) {
    deps.log.warn(
      boot.passwordFile
        ? `first start: admin account "${boot.username}" created; its one-time password is in ${boot.passwordFile} (readable by root only)`
        : `first start: admin account "${boot.username}" created from GATEHOUSE_ADMIN_USER/GATEHOUSE_ADMIN_PASSWORD`,
    );
  }
  await setupFeatures(deps);
  const endpoints = allEndpoints(deps);
  const early = (deps.earlyMiddleware as Koa.Middleware[] | undefined) ?? [];
  const app = createApp(deps, endpoints, { early, late: [webMiddleware(deps)] });
  const koaHandler = app.callback();
  // GET /route-auth/verify (Caddy's forward auth, once per proxied request of a protected route) is
  // answered on node's http without Koa when the route-auth feature offers it (route-auth/verify.ts).
  const fast = deps.routeAuthFastPath as ((req: http.IncomingMessage, res: http.ServerResponse) => boolean) | undefined;
  const server = http.createServer(fast ? (req, res) => void (fast(req, res) || koaHandler(req, res)) : koaHandler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen === false ? 0 : config.port, opts.listen === false ? '127.0.0.1' : config.bind, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const started: typeof features = [];
  if (opts.startFeatures !== false) {
    for (const f of features) {
      await f.start?.(deps);
      started.push(f);
    }
  }
  // Housekeeping: expired sessions and old login attempts, hourly.
  const housekeeping = deps.scheduler.every('session housekeeping', 3_600_000, () =>
    Promise.all([deps.sessions.prune().catch(() => undefined), deps.lockout.prune().catch(() => undefined)]),
  );
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      housekeeping.stop();
      // Finish requests in flight; idle keep-alive sockets are closed at once.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 10_000).unref();
      });
      for (const f of started.reverse()) {
        try {
          await f.stop?.(deps);
        } catch (err) {
          deps.log.error(`stopping ${f.name} failed`, { err: String(err) });
        }
      }
      await deps.db.close();
    })());
  return { deps, app, server, endpoints, url: `http://127.0.0.1:${port}`, port, close };
}
