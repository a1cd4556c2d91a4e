import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import importCycles from './scripts/eslint-import-cycles.mjs';

// The layers of src/, bottom first (docs/architecture.md): a file imports from its own layer and the
// layers below, type imports included; jobs/ stands beside them and imports only the first two. Inside a
// layer, folders import each other without a circle (the import-cycles rule below).
const LAYERS = [
  ['contract', 'nextql', 'client', 'durable-files.ts', 'one-at-a-time.ts', 'quiet-timers.ts', 'version.ts'],
  ['linalg', 'geo', 'lake', 'artifacts', 'vector'],
  ['store'],
  ['state'],
  ['models'],
  ['engine'],
  ['analytics', 'config', 'feeds', 'tenants', 'evaluation'],
  ['runtime.ts'],
  ['ingestion', 'identity', 'following'],
  ['server', 'commands', 'cluster', 'daemon.ts', 'demo.ts'],
];
// A folder or file new in src/ takes its place in a layer (and a line in docs/architecture.md) first.
const unplaced = readdirSync(new URL('./src', import.meta.url)).filter(
  (name) => !LAYERS.flat().includes(name),
);
if (unplaced.length > 0) {
  throw new Error(
    `place src/${unplaced.join(', src/')} in a layer of eslint.config.js (docs/architecture.md)`,
  );
}
const inSrc = (names) => names.map((name) => `./src/${name}`);
const LAYER_ZONES = [
  ...LAYERS.slice(0, -1).map((layer, i) => ({
    target: inSrc(layer),
    from: inSrc(LAYERS.slice(i + 1).flat()),
    message: 'imports point down the layers (docs/architecture.md)',
  })),
  {
    target: './jobs',
    from: inSrc(LAYERS.slice(2).flat()),
    message: 'batch jobs import only the shared code of the first two layers (docs/architecture.md)',
  },
];

// Only src/store knows which store runs (docs/architecture.md, "The store"): no DuckDB, no store
// implementation and no raw SQL operation outside it.
const STORE_ONLY = [
  { group: ['@duckdb/node-api', '**/store/duckdb/**'], message: 'only src/store knows the store is DuckDB' },
  {
    group: ['**/store/api/ops.js'],
    importNames: ['sqlOp'],
    message: 'write a typed operation of src/store/api',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'cluster-data/', 'coverage/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // No import cycles anywhere, type imports included; the layers only point down.
  {
    files: ['**/*.ts', '**/*.mjs'],
    plugins: { 'import-x': importX, local: { rules: { 'import-cycles': importCycles } } },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    rules: {
      'local/import-cycles': 'error',
      'import-x/no-restricted-paths': ['error', { zones: LAYER_ZONES }],
    },
  },
  // The batch half and the serving half meet only through artifacts, the lake and shared pure code
  // (src/artifacts, src/lake, src/linalg); the CLI's commands may call both (docs/batch-models.md).
  {
    files: ['src/**/*.ts'],
    ignores: ['src/commands/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/jobs/**'], message: 'serving code never imports the batch jobs' },
            ...STORE_ONLY,
          ],
        },
      ],
    },
  },
  {
    files: ['src/commands/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: STORE_ONLY }] },
  },
  // Inside the store, its implementations share its code; the batch jobs stay out as above.
  {
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/jobs/**'], message: 'serving code never imports the batch jobs' }] },
      ],
    },
  },
  // What runs for every request, and the serving state: no object literal begins with a spread. Under
  // Node 20, such a literal's objects outlive the young generation's collections, and so does what they
  // refer to, until a full collection; on the ranking thread that meant a full collection every few
  // seconds while serving (docs/memory.md).
  {
    files: ['src/engine/**/*.ts', 'src/state/**/*.ts', 'src/server/routes/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression > SpreadElement:first-child',
          message: 'begin the literal with a key of its own, or use Object.assign (docs/memory.md)',
        },
      ],
    },
  },
  // The signing helper runs in browsers too: Web Crypto only, nothing of Node or of the rest of the package.
  {
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*', '../*'], message: 'nextrec/client imports only its own files' }] },
      ],
    },
  },
  // The dashboard runs in browsers: their globals, and nothing of Node or of the server's code.
  {
    files: ['dashboard/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', '../*'], message: 'the dashboard imports only its own files and chart.js' },
          ],
        },
      ],
    },
  },
  // Build scripts run on Node.
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['jobs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/src/server/**',
                '**/src/engine/**',
                '**/src/state/**',
                '**/src/store/**',
                '**/src/models/**',
                '**/src/commands/**',
              ],
              message: 'batch jobs never import serving code',
            },
          ],
        },
      ],
    },
  },
);
