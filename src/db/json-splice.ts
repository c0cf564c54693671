/**
 * What splicing one stored JSON text into another needs to know of the database that wrote them (a deal's contact
 * and company put into its stored JSON: modules/deals/deals.repo.ts).
 */
import type { SqlDialect } from './dialect.js';

/**
 * The text of a member `key` whose value is null, as the database's JSON object builder writes it into a stored
 * record (`doc`): SQLite's json_object writes `"key":null`, PostgreSQL's json_build_object `"key" : null`.
 */
export function nullMemberText(dialect: SqlDialect, key: string): string {
  return dialect.name === 'sqlite' ? `"${key}":null` : `"${key}" : null`;
}

/** SQL for the position (from 1, in characters; 0 when absent) of the text `needle` in the SQL text expression `haystack`. */
export function positionSql(dialect: SqlDialect, haystack: string, needle: string): string {
  return dialect.name === 'sqlite' ? `instr(${haystack}, '${needle}')` : `strpos(${haystack}, '${needle}')`;
}
