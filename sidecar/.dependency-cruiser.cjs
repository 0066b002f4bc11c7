// The dependency rule of sidecar/src (npm run lint:layers): a value import may not run against the
// layer order core < kit < features < composition (scripts/layers/layers.cjs; the picture in words:
// docs/contributing/architecture.md, "Layers"). Type-only imports (`import type`) are erased at
// compile time and may cross layers: a feature's endpoints take the container's type (AppContext),
// a service names the types of the services it is handed.
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
      comment: 'util/, db/, config.ts, version.ts, events.ts and event-kinds.ts are the core: they import no value from the HTTP kit, a feature or the composition root',
      severity: 'error',
      from: { path: core },
      to: { path: [kit, feature, composition], ...value },
    },
    {
      name: 'kit-imports-up',
      comment: 'http/ (the HTTP kit) imports values from the core only, never from a feature or the composition root',
      severity: 'error',
      from: { path: kit },
      to: { path: [feature, composition], ...value },
    },
    {
      name: 'feature-imports-composition',
      comment: 'a feature imports no value from the composition root (app-context.ts, features.ts, endpoints.ts, server.ts, ...); the Feature contract is feature.ts, types only',
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
