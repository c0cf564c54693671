// The better-sqlite3 build for the running Node. Plain JavaScript so that the reader process
// (sqlite-reader.process.mjs) loads it without a TypeScript loader.
//
// NOTE: better-sqlite3 13 ships N-API prebuilds inside its npm package (nothing compiled or downloaded at
// install) but needs Node ≥ 22: on Node 20 it crashes on load. better-sqlite3 12 compiles against the
// running Node's headers and works on Node 20, but aborts at exit on Node ≥ 24.19 (a V8 cleanup-hook
// assertion). So `better-sqlite3` is 13 and Node 20 loads the optional `better-sqlite3-node20` alias of 12,
// built by `npm ci` where a compiler is present (a failed optional build leaves `npm ci` green on Node ≥ 22).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const major = Number(process.versions.node.split('.')[0]);

function load() {
  if (major >= 22) return require('better-sqlite3');
  try {
    return require('better-sqlite3-node20');
  } catch (err) {
    throw new Error(
      `Node ${process.versions.node} needs the optional package better-sqlite3-node20 (better-sqlite3 12, compiled by npm ci with python3, make and a C++ compiler); ` +
        `install them and run npm ci again, or use Node 22 or 24. (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

/** @type {typeof import('better-sqlite3')} */
const Database = load();
export default Database;
