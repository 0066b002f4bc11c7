// The layers of sidecar/src, lowest first (docs/contributing/architecture.md, "Layers"). Read by the
// dependency rule (.dependency-cruiser.cjs) and by the structure summary (scripts/layers/summary.ts).
// A module may import values from its own layer and the layers below it, never from a layer above.
//   core         util/, db/ and the leaf modules config.ts, version.ts, events.ts, event-kinds.ts (and @gatehouse/common)
//   kit          http/: the endpoint registry, the Koa app, authentication, errors, OpenAPI
//   features     every other folder: one feature each (its schema, service, endpoints, models, feature.ts)
//   composition  the root modules that build and start everything: app-context.ts, deps.ts,
//                features.ts, endpoints.ts, server.ts, main.ts, cli.ts
const SRC = 'sidecar/src/';

const CORE_FILES = ['config.ts', 'version.ts', 'events.ts', 'event-kinds.ts'];
const CORE_FOLDERS = ['util', 'db'];
const KIT_FOLDERS = ['http'];

/** The layer of a path relative to the repository root (or to sidecar/), or null outside sidecar/src. */
function layerOf(file) {
  const rel = file.startsWith(SRC) ? file.slice(SRC.length) : file.startsWith('src/') ? file.slice(4) : null;
  if (rel === null) return file.includes('sidecar/common/') || file.startsWith('common/') ? 'core' : null;
  const slash = rel.indexOf('/');
  if (slash < 0) return CORE_FILES.includes(rel) ? 'core' : 'composition';
  const folder = rel.slice(0, slash);
  if (CORE_FOLDERS.includes(folder)) return 'core';
  if (KIT_FOLDERS.includes(folder)) return 'kit';
  return 'features';
}

/** The folder of a module under sidecar/src ('(root core)' for the core's root modules, '(root)' for the composition root's), or null outside it. */
function folderOf(file) {
  const rel = file.startsWith(SRC) ? file.slice(SRC.length) : file.startsWith('src/') ? file.slice(4) : null;
  if (rel === null) return null;
  const slash = rel.indexOf('/');
  if (slash < 0) return CORE_FILES.includes(rel) ? '(root core)' : '(root)';
  return rel.slice(0, slash);
}

const ORDER = ['core', 'kit', 'features', 'composition'];

module.exports = { SRC, CORE_FILES, CORE_FOLDERS, KIT_FOLDERS, ORDER, layerOf, folderOf };
