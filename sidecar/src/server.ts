// Starts the whole sidecar: services, features, the HTTP server; and stops it gracefully.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Config } from './config.js';
import { bootstrapAdmin, createAppContext, type AppContext, type ContextOptions } from './app-context.js';
import type { FastPath } from './feature.js';
import { createApp } from './http/app.js';
import { allEndpoints } from './endpoints.js';
import { earlyMiddleware, fastPaths, featureModels, features, lateMiddleware } from './features.js';
import type { Endpoint } from './http/registry.js';
import { acquireDataDirLock, DataDirLocked } from './masterkey/lock.js';

export interface Running {
  deps: AppContext;
  app: Koa;
  /** The features' handlers on node's http, tried in order before Koa (true: answered). */
  fastPath: FastPath;
  server: http.Server;
  endpoints: Endpoint[];
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface StartOptions extends Omit<ContextOptions, 'models'> {
  /** Skip feature start() hooks (unit tests of the API alone). */
  startFeatures?: boolean;
  listen?: boolean;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<Running> {
  // <dataDir>/gatehouse.pid (masterkey/lock.ts): a master-key rotation refuses while it is held, and
  // the sidecar does not start while a rotation holds it. A sidecar holder (one that crashed moments
  // ago, or another one on the same directory) is taken over.
  let release: () => void;
  try {
    release = acquireDataDirLock(config.dataDir, 'sidecar', { takeOverFrom: 'sidecar' });
  } catch (err) {
    throw err instanceof DataDirLocked ? new Error(`${err.message}: start the sidecar again when it is done`) : err;
  }
  let deps: AppContext;
  try {
    deps = await createAppContext(config, { ...opts, models: featureModels });
  } catch (err) {
    release();
    throw err;
  }
  // cluster mode: this node enters the registry before anything starts; a second node without the
  // licence feature `cluster` stops here (ClusterRefused, cluster/service.ts)
  try {
    await deps.cluster.join();
  } catch (err) {
    await deps.db.close();
    release();
    throw err;
  }
  const boot = await bootstrapAdmin(deps);
  if (boot.created) {
    deps.log.warn(
      boot.passwordFile
        ? `first start: admin account "${boot.username}" created; its one-time password is in ${boot.passwordFile} (readable by root only)`
        : `first start: admin account "${boot.username}" created from GATEHOUSE_ADMIN_USER/GATEHOUSE_ADMIN_PASSWORD`,
    );
  }
  const endpoints = allEndpoints(deps);
  const app = createApp(deps, endpoints, { early: earlyMiddleware(deps), late: lateMiddleware(deps) });
  const koaHandler = app.callback();
  // e.g. GET /route-auth/verify (Caddy's forward auth, once per proxied request of a protected
  // route) is answered on node's http without Koa (route-auth/verify.ts).
  const paths = fastPaths(deps);
  const fastPath: FastPath = (req, res) => paths.some((p) => p(req, res));
  const server = http.createServer(paths.length ? (req, res) => void (fastPath(req, res) || koaHandler(req, res)) : koaHandler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen === false ? 0 : config.port, opts.listen === false ? '127.0.0.1' : config.bind, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const started: (typeof features)[number][] = [];
  if (opts.startFeatures !== false) {
    for (const f of features) {
      await f.start?.(deps);
      started.push(f);
    }
  }
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Live event streams never finish by themselves: end them first (their clients reconnect elsewhere or later).
      await deps.eventStreams.closeAll();
      // Finish requests in flight; idle keep-alive sockets are closed at once, and so is every
      // keep-alive socket as soon as its request in flight is answered (server.close() alone closes
      // only the sockets idle at the moment it is called: a client that had a request in flight at
      // SIGTERM kept its socket open, and the shutdown waited the full 10 s below for it).
      await new Promise<void>((resolve) => {
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearInterval(idle);
          resolve();
        });
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
      // no periodic work after this point, and none left touching the database when it closes
      deps.scheduler.stop();
      if (!(await deps.scheduler.idle(10_000))) deps.log.warn('periodic work still running after 10 s at shutdown; closing the database anyway');
      // writes still buffered (gateway heartbeats) are stored before the database closes, also when the
      // gateways feature never started (a server started without its features, as tests do)
      await deps.gateways.stop();
      // the leader's lock is released once no singleton work runs here (a follower leads at its next try)
      await deps.cluster.stop();
      await deps.db.close();
      release();
    })());
  return { deps, app, fastPath, server, endpoints, url: `http://127.0.0.1:${port}`, port, close };
}
