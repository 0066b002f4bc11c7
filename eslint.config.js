import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import testWaits from './scripts/eslint/test-waits.js';

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
  // Tests wait for a condition through the one waitFor (test/lib/wait.ts); time that passes on
  // purpose carries `// not a condition: why` (scripts/eslint/test-waits.js).
  {
    files: ['test/**/*.ts', 'sidecar/test/**/*.ts', 'sidecar/ui/test/**/*.ts', 'gateway/test/**/*.ts', 'client/test/**/*.ts'],
    ignores: ['test/lib/wait.ts'],
    plugins: { gatehouse: { rules: { 'test-waits': testWaits } } },
    rules: { 'gatehouse/test-waits': 'error' },
  },
);
