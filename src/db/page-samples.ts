/**
 * Pages by number at the cost of cursors (issue 49): for a list whose total is cached (count-cache.ts), the
 * position (sort value, id) of every `stride`-th row of its order, sampled by one statement and kept against the
 * tenant's change version. The planner (src/listing/planner.ts) then reads a page at offset o after the sample
 * just before o (keyset, as a cursor does) with an offset under `stride`: the cost of a cursor page plus at most
 * `stride` index entries, where a plain OFFSET reads o entries (1.4 ms of CPU a page at offset 100,000 on SQLite).
 *
 * Exactness under concurrent writes. Every write to a list's rows bumps its type's change version in the write's
 * own transaction (change-marks.ts), which the cached totals rely on already. The samples are tagged with the
 * version read by their own statement (one statement, one snapshot: the samples and their version are of one
 * state). A sampled page's statement holds a guard (versionGuard) that lets it return rows only if it sees, in
 * its own snapshot, the version the samples and the total were tagged with: then no write to the list committed
 * between the state the samples were taken from and the one the page reads, the two states are the same list,
 * and the page is the one a plain OFFSET would read in that state. Otherwise it returns no rows, which the
 * planner tells from a real page (the cached total of that state says how many rows the page holds) and reads
 * the page as before.
 */
import { CompiledQuery, sql, type Expression, type SqlBool } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { CountedType } from './count-cache.js';
import { ordering, SORT_VALUE, VERSION, type ListingQuery, type PageDb, type PageOrder, type Position } from './pages.js';
import type { Reads } from './reads.js';

/**
 * `stride`: rows between two samples. Skipping an index entry costs ~50 ns on SQLite and ~0.3 µs on PostgreSQL
 * (the skipped rows' heap tuples are read), so a page read after a sample costs what page 1 costs plus at most
 * `stride` entries. `rebuildMs`: a list is sampled again at most this often, and no sooner than `gapPerCost`
 * times its last sampling's duration after that one started (a sampling reads the whole list: ~80 ms for 100,000
 * contacts by createdAt on SQLite, ~340 ms by lastName, which has no index), so that a tenant writing all the
 * time pays at most a twentieth of a read process per list read deep, not a sampling per write (its deep pages
 * are read as before meanwhile). Tests lower both.
 */
export const PAGE_SAMPLES = { stride: 250, rebuildMs: 1_000, gapPerCost: 20 };
/** Pages read from samples, and samplings run, since the start: tests check that the fast path is taken. */
export const sampleStats = { pages: 0, builds: 0 };

/** The most sampled positions kept per database (all lists together): ~100 bytes each. */
const MAX_POSITIONS = 200_000;
/** The most samplings running at once in this process (each reads a whole list on the read pool). */
const MAX_BUILDS = 2;

export interface Samples {
  version: number;
  stride: number;
  /** positions[j]: the row at offset (j + 1) × stride - 1, the last row before offset (j + 1) × stride. */
  positions: Position[];
}

interface Kept {
  samples: LRUCache<string, Samples>;
  /** When each list was last sampled (epoch ms), and how long that took (ms; 0 while it runs). */
  started: LRUCache<string, { at: number; took: number }>;
}
/** Per database adapter (SQLite and PostgreSQL in one process, in tests), as the planner keeps its shapes. */
const kept = new WeakMap<object, Kept>();
const running = new Set<Promise<void>>();

function keptOf(adapter: object): Kept {
  let k = kept.get(adapter);
  if (!k) {
    k = {
      samples: new LRUCache({ maxSize: MAX_POSITIONS, sizeCalculation: (s) => s.positions.length + 1 }),
      started: new LRUCache({ max: 10_000 }),
    };
    kept.set(adapter, k);
  }
  return k;
}

/** The version a change_versions row holds (none yet: 0, as count-cache.ts reads it). */
const versionOf = (tenantId: string, type: CountedType) =>
  sql<number>`coalesce((select version from change_versions where tenant_id = ${tenantId} and object_type = ${type}), 0)`;

/** A sampled page's guard: true only while the list's version is the VERSION marker's value (see above). */
export function versionGuard(tenantId: string, type: CountedType): Expression<SqlBool> {
  return sql<SqlBool>`(${versionOf(tenantId, type)} = ${VERSION})`;
}

/**
 * The statement that samples a list: the (sort value, id) of every `stride`-th row in the list's order and the
 * version, read in one snapshot (one statement):
 *
 *     select s.__sort_value, s.__id, <version> from (
 *       select <key>, <id>, row_number() over (order by <key> [nulls last], <id>) as __n from <base>) s
 *     where s.__n % <stride> = 0 order by s.__n
 */
export function samplesQuery(on: PageDb, spec: PageOrder, built: ListingQuery, stride: number, tenantId: string, type: CountedType): CompiledQuery {
  const { key, byId } = ordering(on.dialect, spec, 'first');
  const id = sql.ref(spec.idColumn ?? 'id');
  const dir = sql.raw(spec.sort.order === 'asc' ? 'asc' : 'desc');
  // The same order as the pages' (pages.ts ordering): empty values last in both directions.
  const nulls = sql.raw(spec.sort.column.nullable ? ' nulls last' : '');
  const over = byId ? sql`${id} ${dir}` : sql`${key} ${dir}${nulls}, ${id} ${dir}`;
  const numbered = built.base.select([key.as(SORT_VALUE), id.as('__id'), sql<number>`row_number() over (order by ${over})`.as('__n')]);
  return on.db
    .selectFrom(numbered.as('s'))
    .select([sql.ref(`s.${SORT_VALUE}`).as(SORT_VALUE), sql.ref('s.__id').as('__id'), versionOf(tenantId, type).as('__version')])
    .where(sql<SqlBool>`s.__n % ${sql.lit(stride)} = 0`)
    .orderBy(sql`s.__n`)
    .compile();
}

/** The list's samples when they are of `version`, else undefined. */
export function currentSamples(adapter: object, key: string, version: number): Samples | undefined {
  const s = keptOf(adapter).samples.get(key);
  return s !== undefined && String(s.version) === String(version) && s.stride === PAGE_SAMPLES.stride ? s : undefined;
}

/**
 * Samples a list in the background (the page that missed them is read as before): at most once per `rebuildMs`
 * per list, one sampling of a list at a time, MAX_BUILDS at once. `reads` runs the statement (the read pool on
 * SQLite); `position` makes a sampled row's position as a cursor holds it.
 */
export function sampleLater(
  adapter: object,
  key: string,
  reads: Reads,
  query: () => CompiledQuery,
  position: (row: Record<string, unknown>) => Position,
): void {
  const k = keptOf(adapter);
  const now = Date.now();
  const last = k.started.get(key);
  if (last !== undefined && now - last.at < Math.max(PAGE_SAMPLES.rebuildMs, last.took * PAGE_SAMPLES.gapPerCost)) return;
  if (running.size >= MAX_BUILDS) return;
  const mark = { at: now, took: 0 };
  k.started.set(key, mark);
  const stride = PAGE_SAMPLES.stride;
  const build = (async () => {
    sampleStats.builds++;
    const rows = (await reads.all({ compile: query }).finally(() => (mark.took = Date.now() - now))) as Record<string, unknown>[];
    // No row: a list shorter than a stride, which no page needs samples of.
    if (rows.length === 0) return;
    k.samples.set(key, { version: Number(rows[0].__version), stride, positions: rows.map(position) });
  })()
    // A sampling that failed (a deadline, a closed pool) leaves the pages as they were; the next miss retries.
    .catch(() => undefined)
    .finally(() => running.delete(build));
  running.add(build);
}

/** Tests: waits for the samplings running now. */
export async function samplingsSettled(): Promise<void> {
  await Promise.all([...running]);
}
