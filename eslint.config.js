import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import testWaits from './scripts/eslint/test-waits.js';
import castReason from './scripts/eslint/cast-reason.js';

const gatehouse = { rules: { 'cast-reason': castReason, 'test-waits': testWaits } };

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'bin/**', 'caddy-modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Server, shared, gateway, client and admin-app code, their tests and the benchmarks: no `any`, and no cast through unknown
  // without its reason. Where a library forces one, the line above says why:
  // `// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reason: ...`, or
  // `// reason: ...` above an `as unknown as` (scripts/eslint/cast-reason.js). Tests read JSON that
  // no schema types (Caddy configurations, OpenAPI documents) as `unknown` through test/lib/json.ts.
  {
    files: [
      'sidecar/src/**/*.ts',
      'sidecar/common/src/**/*.ts',
      'gateway/src/**/*.ts',
      'client/src/**/*.ts',
      'test/**/*.ts',
      'sidecar/test/**/*.ts',
      'gateway/test/**/*.ts',
      'client/test/**/*.ts',
      'sidecar/ui/src/**/*.{ts,tsx}',
      'sidecar/ui/test/**/*.ts',
      'scripts/bench/**/*.ts',
    ],
    plugins: { gatehouse },
    rules: { '@typescript-eslint/no-explicit-any': 'error', 'gatehouse/cast-reason': 'error' },
  },
  // Tests wait for a condition through the one waitFor (test/lib/wait.ts); time that passes on
  // purpose carries `// not a condition: why` (scripts/eslint/test-waits.js).
  {
    files: ['test/**/*.ts', 'sidecar/test/**/*.ts', 'sidecar/ui/test/**/*.ts', 'gateway/test/**/*.ts', 'client/test/**/*.ts'],
    ignores: ['test/lib/wait.ts'],
    plugins: { gatehouse },
    rules: { 'gatehouse/test-waits': 'error' },
  },
);
