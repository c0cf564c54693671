/**
 * The listing planner's entry to the pages an in-process database reads by its own means (one BLOB a page, bounded
 * probes on the main connection, a page and its total in one statement): `sqlitePagesOf(dialect)` is undefined
 * where the database has none. Their statements are SQLite's, in pages-sqlite.ts.
 */
export { COUNTED_ROWS, PROBE_ROWS, sqlitePagesOf, type RecordSql, type SqlitePages } from './pages-sqlite.js';
