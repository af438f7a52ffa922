// Lint: typescript-eslint with type information (no-floating-promises) and import-x's
// no-cycle, so the layout in docs/architecture.md cannot grow import cycles.
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

export default tseslint.config(
  // examples/wasm-tools is AssemblyScript (its own types, built by asc), not keel's TS.
  {
    ignores: [
      'node_modules/**',
      'bench/results/**',
      '.keel/**',
      'dist/**',
      'examples/wasm-tools/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    // The console's browser modules (docs/console.md): plain ES modules with JSDoc types,
    // type-checked by tsconfig.console.json (npm run typecheck), linted here without
    // type information; the vendored preact/htm builds are served, never linted.
    files: ['src/console/assets/**/*.js'],
    languageOptions: { sourceType: 'module' },
    plugins: { 'import-x': importX },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/resolver-next': [createTypeScriptImportResolver()],
    },
    rules: {
      // node:test's describe/it return promises the runner itself tracks.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: [
                'describe',
                'it',
                'test',
                'suite',
                'before',
                'after',
                'beforeEach',
                'afterEach',
              ],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.name='eval']", message: 'no eval' },
      ],
    },
  },
);
