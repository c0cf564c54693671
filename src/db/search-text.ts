/**
 * The stored search column `search_text` of contacts, companies, deals, tags and proposals (CONTRACT C.5,
 * migration 009): the fields a list's `search` covers, each folded (domain/fold.mjs) and joined by
 * SEARCH_SEPARATOR. A search is then one `search_text LIKE '%<folded needle>%'` on one narrow column,
 * which PostgreSQL serves from a trigram index (see 009).
 *
 * Written by the repos only: each table's insert and update derive it from the row (`withSearchText`), so
 * no write path can forget it. Sorting never uses it (names keep sorting by `sortableText`).
 */
import { foldText } from '../domain/fold.mjs';
import { extended } from '../util/objects.js';

/**
 * Joins the folded fields. A needle never spans two fields: a needle holding the separator matches
 * nothing (searchMatches), and folding never produces it.
 */
export const SEARCH_SEPARATOR = '\u001f';

export interface SearchSources {
  contacts: { first_name: string; last_name: string | null; email: string | null };
  companies: { name: string; cnpj: string | null; website: string | null; domain: string | null };
  deals: { title: string };
  tags: { name: string };
  proposals: { number: string; subject: string };
}
export type SearchTable = keyof SearchSources;

const join = (...fields: (string | null)[]) => fields.map((f) => foldText(f ?? '')).join(SEARCH_SEPARATOR);

/** What `search_text` holds, per table (the fields of CONTRACT B.4's `search`). */
export const SEARCH_TEXT: { [T in SearchTable]: (row: SearchSources[T]) => string } = {
  // The full name "first last" contains every substring of the first and of the last name.
  contacts: (r) => join(`${r.first_name} ${r.last_name ?? ''}`, r.email),
  companies: (r) => join(r.name, r.cnpj, r.website, r.domain),
  // One field: `search_text` is exactly the folded title, so filters on `title` use it too (filter-sql.ts).
  deals: (r) => foldText(r.title),
  tags: (r) => foldText(r.name),
  proposals: (r) => join(r.number, r.subject),
};

/** The columns each table's `search_text` is made of. */
export const SEARCH_SOURCES: { [T in SearchTable]: readonly (keyof SearchSources[T] & string)[] } = {
  contacts: ['first_name', 'last_name', 'email'],
  companies: ['name', 'cnpj', 'website', 'domain'],
  deals: ['title'],
  tags: ['name'],
  proposals: ['number', 'subject'],
};

/** A new row with its `search_text`. */
export function withSearchText<T extends SearchTable, R extends SearchSources[T]>(table: T, row: R): R & { search_text: string } {
  return extended(row, { search_text: SEARCH_TEXT[table](row) });
}

/**
 * The SET of an update with `search_text` recomputed when a searched field changes: from the changed
 * values over `current` (the row before; the searched fields it holds are enough).
 */
export function setWithSearchText<T extends SearchTable, S extends Partial<SearchSources[T]>>(
  table: T,
  set: S,
  current: SearchSources[T],
): S & { search_text?: string } {
  if (!SEARCH_SOURCES[table].some((k) => (set as Record<PropertyKey, unknown>)[k as PropertyKey] !== undefined)) return set;
  const merged = { ...current } as SearchSources[T];
  for (const [k, v] of Object.entries(set)) if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  return extended(set, { search_text: SEARCH_TEXT[table](merged) });
}
