// `npm run lint` (part of `npm test`): typescript-eslint's type-aware rules on every TypeScript file.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '**/*.d.ts'] },
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
      // kong.response.exit/error unwind a plugin phase with ExitSignal, control flow on the request
      // path: an Error subclass would capture a stack trace per exit.
      '@typescript-eslint/only-throw-error': [
        'error',
        { allow: [{ from: 'file', name: 'ExitSignal', path: 'gateway/local/proxy/request-context.ts' }] },
      ],
      // Off: it fires on String(value) of config and query values typed unknown, which the
      // gateway echoes back in Kong's messages on purpose (8 sites; checkUnknown: false does not
      // quiet it in typescript-eslint 8.73).
      '@typescript-eslint/no-base-to-string': 'off',
      // The Lua host's closures capture a binding that is assigned once, after they are made;
      // `let [first, ...rest]` where only `first` is assigned again stays one declaration.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true, destructuring: 'all' }],
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
  { files: ['**/*.js', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  {
    // The LuaJIT addon's loader and build script: CommonJS, as node-gyp's tooling expects.
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
