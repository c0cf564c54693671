// ESLint (flat config) with typescript-eslint's type-aware parser: `npm run lint` (CI runs it).
//
// The rules are few on purpose; each guards something a review of the code found:
// - promises, everywhere (tests included): a promise nobody awaits or handles (`no-floating-promises`) loses
//   its rejection, and a promise handed where a plain callback is expected (`no-misused-promises`: an async
//   listener or timer callback, an async function as a condition) is never awaited by its caller. An
//   intended fire-and-forget says so with `void`, and handles its own failure where it can fail.
// - dialects, in src/ outside src/db/: no import of Kysely's dialect classes (the import rules of
//   .dependency-cruiser.cjs see modules, not names) and no question about which database runs (a dialect's
//   name, isPostgres(), isSqlite()); src/db's helpers hide the dialect (DESIGN §2).
// - short functions (DESIGN): no function of the service (src/) over 80 lines of code, blank lines and comments
//   not counted. The migrations are left out: data written as code, one table's columns in one function.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Kysely's engine-specific exports: its dialects and their adapters, drivers, introspectors, compilers, configs. */
const KYSELY_DIALECT_NAMES = '^(Sqlite|Postgres|Mysql|Mssql)';

export const MAX_FUNCTION_LINES = 80;

/** `x.dialect.name`, `dialect.name`, `dialectOf(tx).name`. */
const DIALECT_NAME = [
  "MemberExpression[property.name='name'][object.type='MemberExpression'][object.property.name='dialect']",
  "MemberExpression[property.name='name'][object.type='Identifier'][object.name='dialect']",
  "MemberExpression[property.name='name'][object.type='CallExpression'][object.callee.name='dialectOf']",
].join(', ');

export const IGNORED = {
  ignores: ['**/dist/**', 'node_modules/**', 'sdk/src/schema.ts', 'scratch/**', 'test-artifacts/**', 'data/**', '.bench/**'],
};

export default defineConfig(
  IGNORED,
  {
    files: ['src/**/*.{ts,mjs}', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.mjs', 'sdk/src/**/*.ts', 'sdk/scripts/**/*.ts'],
    // A directive for a rule this config does not run (src/domain/fold.mjs names no-control-regex) is no finding.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // The programs that type-check these files: `npm run typecheck` runs the same two.
        project: ['./tsconfig.check.json', './sdk/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test() and describe() return a promise that the runner itself awaits and reports.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['src/**/*.{ts,mjs}'],
    ignores: ['src/db/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^kysely$',
              importNamePattern: KYSELY_DIALECT_NAMES,
              message: "Kysely's dialect classes are src/db's (dialect code lives there only).",
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: DIALECT_NAME, message: "Nothing outside src/db asks the dialect's name: use or add a src/db helper." },
        {
          selector: 'CallExpression[callee.name=/^is(Postgres|Sqlite)$/]',
          message: 'Nothing outside src/db asks which database it runs on: use or add a src/db helper.',
        },
      ],
    },
  },
  {
    files: ['src/**/*.{ts,mjs}'],
    ignores: ['src/db/migrations/**'],
    rules: {
      'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
);
