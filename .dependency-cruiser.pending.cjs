/**
 * Every rule of .dependency-cruiser.cjs, and the rules that still find imports to remove: `npm run lint:deps:pending`.
 * CI does not run these yet; once one finds nothing, move it to .dependency-cruiser.cjs. See there for what they mean.
 */
const enforced = require('./.dependency-cruiser.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  ...enforced,
  forbidden: [
    ...enforced.forbidden,
    {
      name: 'dialect-files-only-in-db',
      severity: 'error',
      comment: "src/db's engine-specific files (sqlite-*, pg-*, *-sqlite, *-pg, *.mjs, migrations/) are imported under src/db/ only.",
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
};
