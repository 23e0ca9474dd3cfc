// `npm run lint` (part of `npm test`): typescript-eslint's type-aware rules on every TypeScript file.
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** Everything of the local gateway but its public entries (gateway/local/index.ts and the narrower ones). */
const GATEWAY_INTERNALS = { from: './gateway/local', except: ['./index.ts', './settings.ts', './data-plane-entry.ts', './snapshot.schema.json', './package.json'] };
/** The same for the backend (backend/src/index.ts), the provisioning and usage libraries and the consumers CLI. */
const BACKEND_INTERNALS = { from: './backend/src', except: ['./index.ts'] };
const PROVISIONING_INTERNALS = { from: './packages/provisioning', except: ['./index.ts'] };
const USAGE_INTERNALS = { from: './packages/usage', except: ['./index.ts'] };
const CLI_INTERNALS = { from: './scripts/cli', except: ['./index.ts'] };
const PORTAL_INTERNALS = { from: './portal/src', except: ['./index.ts', './settings.ts', './invitations-entry.ts'] };

/** Where tests reach past a public entry: each unit-tests the one internal module it imports. */
const UNIT_TESTS_OF_INTERNALS = [
  'test/backend/repositories.test.ts', // PetRepository's queries, on a database of its own
  'test/backend/idempotency.test.ts', // the idempotency store and its expiry, on a fake clock
  'test/backend/contract.test.ts', // the servers the backend reads from the contract
  'test/backend/pagination.test.ts', // cursors forged to test their checks
  'test/backend/page-cache.test.ts', // the page cache's bounds, without filling memory through HTTP
  'test/bench/backend-bench.ts', // a deep page's cursor, without paging there first
];

/** Layers that hold everywhere. */
const LAYERS = [
  { target: './gateway/local/control-plane', from: './gateway/local/cmd', message: 'the control plane does not depend on the process that runs it' },
  { target: './gateway/local/control-plane', from: './gateway/local/data-plane', message: 'the planes meet at snapshot.schema.json only' },
  { target: './gateway/local/control-plane', from: './gateway/local/index.ts', message: 'the public entry is for outside the gateway' },
  { target: './gateway', from: './backend', message: 'the gateway and the backend do not import each other' },
  { target: './backend', from: './gateway', message: 'the gateway and the backend do not import each other' },
  { target: './test', ...GATEWAY_INTERNALS, message: "tests use the gateway's public entry (gateway/local/index.ts) or its HTTP surfaces" },
  { target: './scripts', ...GATEWAY_INTERNALS, message: "scripts use the gateway's public entry (gateway/local/index.ts)" },
  { target: './scripts', ...PROVISIONING_INTERNALS, message: "scripts use the provisioning library's public entry (packages/provisioning/index.ts)" },
  { target: './test', ...PROVISIONING_INTERNALS, message: "tests use the provisioning library's public entry (packages/provisioning/index.ts)" },
  { target: './test', ...PORTAL_INTERNALS, message: "tests use the portal's public entry (portal/src/index.ts) or its HTTP pages" },
  { target: './scripts', ...PORTAL_INTERNALS, message: "scripts use the portal's public entry (portal/src/index.ts)" },
  { target: './portal', ...PROVISIONING_INTERNALS, message: "the portal uses the provisioning library's public entry (packages/provisioning/index.ts)" },
  { target: './scripts', ...USAGE_INTERNALS, message: "scripts use the usage library's public entry (packages/usage/index.ts)" },
  { target: './portal', ...USAGE_INTERNALS, message: "the portal uses the usage library's public entry (packages/usage/index.ts)" },
  { target: './test', ...USAGE_INTERNALS, message: "tests use the usage library's public entry (packages/usage/index.ts)" },
  { target: './portal', from: './scripts', message: 'the portal shares code with the CLI through packages/, never scripts/' },
  { target: './packages', from: './scripts', message: 'the libraries do not depend on the scripts that use them' },
  { target: './packages', from: './portal', message: 'the libraries do not depend on the portal' },
];

/** Public entries that UNIT_TESTS_OF_INTERNALS may reach past. */
const TEST_ENTRIES = [
  { target: './test', ...BACKEND_INTERNALS, message: "tests use the backend's public entry (backend/src/index.ts) or its HTTP API" },
  { target: './test', ...CLI_INTERNALS, message: "tests use the CLI's public entry (scripts/cli/index.ts) or run it" },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '**/generated/**', 'gateway/local/cmd/*.built.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `const { id: _id, ...rest } = entity` drops a field on purpose; tsc's noUnusedLocals catches the rest.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Koa's app.callback() is an async request listener by design (Koa answers its own errors).
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // Off: it fires on String(value) of config and query values typed unknown, which the
      // gateway echoes back in Kong's messages on purpose (8 sites; checkUnknown: false does not
      // quiet it in typescript-eslint 8.73).
      '@typescript-eslint/no-base-to-string': 'off',
      // `let [first, ...rest]` where only `first` is assigned again stays one declaration.
      'prefer-const': ['error', { destructuring: 'all' }],
      // .editorconfig's rules, for TypeScript.
      'eol-last': 'error',
      'no-trailing-spaces': 'error',
      'max-len': ['error', { code: 140, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    // Tests read JSON bodies typed `any` on purpose (they assert what came over the wire); the
    // no-unsafe-* rules fire ~400 times there, so they stay on for the code under test only.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Fake clocks and transports implement async interfaces without awaiting anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The layers (gateway/local/README.md): no import cycles anywhere; the control plane imports
    // neither the process around it (cmd/) nor the data plane; cmd/ uses the control plane; the
    // backend and the gateway do not import each other; the rest of the repository (scripts,
    // tests) uses the public entries of the gateway, the backend, the provisioning library and
    // the CLI only.
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      // import-x parses each imported file to follow its imports: with TypeScript's parser.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [...LAYERS, ...TEST_ENTRIES],
        },
      ],
    },
  },
  {
    files: UNIT_TESTS_OF_INTERNALS,
    rules: { 'import-x/no-restricted-paths': ['error', { zones: LAYERS }] },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
