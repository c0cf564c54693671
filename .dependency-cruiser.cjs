/**
 * The import rules of src/ (DESIGN §2), checked by dependency-cruiser: `npm run lint:deps`.
 *
 * Type-only imports count as arrows (tsPreCompilationDeps): an `import type` that closes a cycle still ties
 * the two files' designs together.
 *
 * 1. No cycle in src/.
 * 2. Layers, lowest first. A file may import its own layer and the layers below it, never one above:
 *      util/ → config.ts, errors.ts, metrics.ts → domain/ → db/ → auth/, events/, http/ → listing/
 *      → modules/ → plugins/ → app.ts, workers/, admin/ → cli/
 * 3. Dialect code lives under src/db/ only. "Dialect code" is:
 *    - the database drivers: `pg` (and `pg-*` packages), `better-sqlite3` (and the `better-sqlite3-node20`
 *      alias), `ioredis` aside (Redis is no dialect of the database);
 *    - src/db's engine-specific files, which no file outside src/db imports: those named after an engine
 *      (`sqlite-*`, `pg-*`, `*-sqlite.*`, `*-pg.*`), the plain-JavaScript entries of its threads and
 *      processes (`*.mjs`), and the migrations (run by db/migrate.ts only);
 *    - Kysely's dialect classes (SqliteDialect, PostgresDialect, their adapters, drivers, introspectors and
 *      query compilers): they come from the `kysely` module, which every repo imports for the query
 *      builder, so that rule is ESLint's (`no-restricted-imports` in eslint.config.js), which sees names.
 *    Every other file of src/db (index.ts, dialect.ts, errors.ts, reads.ts, tables/, …) is a dialect-neutral
 *    public entry: its helpers hide the dialect from the caller.
 * 4. A module (src/modules/<x>/) does not import another module's repository (`*.repo.ts`): it goes through
 *    that module's service.
 *
 * CI runs this file (`npm run lint:deps`), every rule above included, before the tests.
 */

/** Layers, lowest first: [name, path pattern]. */
const LAYERS = [
  ['util', '^src/util/'],
  ['base', '^src/(config|errors|metrics)\\.ts$'],
  ['domain', '^src/domain/'],
  ['db', '^src/db/'],
  ['platform', '^src/(auth|events|http)/'],
  ['listing', '^src/listing/'],
  ['modules', '^src/modules/'],
  ['plugins', '^src/plugins/'],
  ['entry', '^src/(app\\.ts$|workers/|admin/)'],
  ['cli', '^src/cli/'],
];

const upward = LAYERS.slice(0, -1).map(([name, path], i) => {
  const above = LAYERS.slice(i + 1);
  return {
    name: `no-upward-from-${name}`,
    severity: 'error',
    comment: `${name} (${path}) imports nothing of a layer above it: ${above.map(([n]) => n).join(', ')}.`,
    from: { path },
    to: { path: above.map(([, p]) => `(${p})`).join('|') },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle in src/ (type-only imports included).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'dialect-drivers-only-in-db',
      severity: 'error',
      comment: 'The database drivers are imported under src/db/ only.',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^node_modules/(pg|pg-[^/]+|better-sqlite3|better-sqlite3-node20)/' },
    },
    {
      name: 'dialect-files-only-in-db',
      severity: 'error',
      comment:
        "src/db's engine-specific files (sqlite-*, pg-*, *-sqlite, *-pg, *.mjs, migrations/) are imported under src/db/ only; the rest of the service goes through src/db's public entries (statistics.ts, fast-pages.ts, …).",
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^src/db/(migrations/|(sqlite|pg)-[^/]+$|[^/]+-(sqlite|pg)[.][a-z]+$|[^/]+[.]mjs$)' },
    },
    {
      name: 'no-other-module-repo',
      severity: 'error',
      comment: "A module does not import another module's repository; it calls that module's service.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/[^/]+\\.repo\\.ts$', pathNot: '^src/modules/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.d.ts'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
