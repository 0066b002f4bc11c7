// The route kinds beyond the HTTP and L4 routes of the routes table, each with its own rows:
// readSnapshot (snapshot.ts) reads every kind listed here inside the snapshot's transaction and
// renderCaddyConfig (render.ts) merges what each renders. A new kind (RDP's linked routes) adds
// itself to this list and edits neither of them. See RouteKind in render-context.ts.
import type { RouteKind } from './render-context.js';

export const routeKinds: readonly RouteKind<unknown>[] = [];
