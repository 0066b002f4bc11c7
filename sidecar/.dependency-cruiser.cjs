// The dependency rule of sidecar/src (npm run lint:layers): an import may not run against the layer
// order core < kit < features < composition (scripts/layers/layers.cjs; the picture in words:
// docs/contributing/architecture.md, "Layers"). The core and the HTTP kit import nothing from a layer
// above them, not even a type. A feature may import types (`import type`, erased at compile time)
// from the composition root: its endpoints take the container's type (AppContext), and the Feature
// contract (feature.ts) is types only; it imports no value from there.
const { CORE_FILES, CORE_FOLDERS, KIT_FOLDERS } = require('../scripts/layers/layers.cjs');

const alt = (xs) => xs.map((x) => x.replace(/\./g, '\\.')).join('|');
const core = `^src/((${alt(CORE_FOLDERS)})/|(${alt(CORE_FILES)})$)`;
const kit = `^src/(${alt(KIT_FOLDERS)})/`;
const feature = `^src/(?!(${alt([...CORE_FOLDERS, ...KIT_FOLDERS])})/)[^/]+/`;
const composition = `^src/(?!(${alt(CORE_FILES)})$)[^/]+$`;
const value = { dependencyTypesNot: ['type-only', 'type-import'] };

module.exports = {
  forbidden: [
    {
      name: 'core-imports-up',
      comment:
        'util/, db/, config.ts, version.ts, events.ts and event-kinds.ts are the core: they import nothing (no value, no type) from the HTTP kit, a feature or the composition root',
      severity: 'error',
      from: { path: core },
      to: { path: [kit, feature, composition] },
    },
    {
      name: 'kit-imports-up',
      comment:
        'http/ (the HTTP kit) imports from the core only: nothing (no value, no type) from a feature or the composition root; what it needs of the container it names by type in http/platform.ts',
      severity: 'error',
      from: { path: kit },
      to: { path: [feature, composition] },
    },
    {
      name: 'feature-imports-composition',
      comment:
        'a feature imports no value from the composition root (app-context.ts, features.ts, endpoints.ts, server.ts, ...); the Feature contract is feature.ts, types only',
      severity: 'error',
      from: { path: feature },
      to: { path: composition, ...value },
    },
    {
      name: 'no-circular',
      comment: 'no file circle of value imports (madge --circular checks the same with type-only imports)',
      severity: 'error',
      from: {},
      to: { circular: true, ...value },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
