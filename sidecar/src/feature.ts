// The Feature contract: what one folder of sidecar/src owns, serves and runs, declared against the
// built container (AppContext, app-context.ts). Types only. Every folder that serves anything
// (endpoints, middleware, pages, fast paths) or runs anything (scheduled jobs, pollers) exports one
// Feature from its feature.ts, which names the models of its own tables and mounts only that
// folder's endpoints; the composition root lists them (features.ts) in start order, the database
// defines their models when it opens, and server.ts mounts and starts them.
import type http from 'node:http';
import type Koa from 'koa';
import type { AppContext } from './app-context.js';
import type { ModelDefiner } from './db/models.js';
import type { Endpoint } from './http/registry.js';

/** A handler on node's http ahead of Koa: answers and returns true, or returns false to leave the request to the app. */
export type FastPath = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/** A feature: what it serves and the background work it runs, against the built container. */
export interface Feature {
  name: string;
  /** Its tables' models (its model.ts `define<Thing>Models`), defined when the database opens. */
  models?: ModelDefiner;
  /** Its endpoints (mounted by http/app.ts, documented by http/openapi.ts). */
  endpoints?: (ctx: AppContext) => Endpoint[];
  /** Koa middleware mounted ahead of the session, body parsing and the router. */
  early?: (ctx: AppContext) => Koa.Middleware[];
  /** Koa middleware mounted after the router: pages served outside the registry (listed in http/served-paths.ts). */
  late?: (ctx: AppContext) => Koa.Middleware[];
  /** Handlers on node's http, tried before Koa. */
  fastPaths?: (ctx: AppContext) => FastPath[];
  /** Start background work (pollers, reconcile loops) once the HTTP server listens. */
  start?: (ctx: AppContext) => Promise<void> | void;
  /** Stop background work; called in reverse order on shutdown. */
  stop?: (ctx: AppContext) => Promise<void> | void;
}
