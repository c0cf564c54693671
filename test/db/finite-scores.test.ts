// Migration 018: a score stored before B.2 was enforced at the edge (`1e309` parsed to Infinity) is made what its
// write answered (null), so that no read carries `9.0e+999` or `"Infinity"`; every other score stays as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECT } from '../helpers/app.js';
import { scratchDatabase } from '../helpers/scratch-db.js';

const { database, migrator } = await scratchDatabase('mig018');
const db = database.db as any;
const now = '2026-01-01T00:00:00.000Z';

/** Scores as they may have been stored, and what each must read as after the migration. */
const SCORES: [stored: number | null, after: number | null][] = [
  [Infinity, null],
  [-Infinity, null],
  [-0, 0],
  [1.7976931348623157e308, 1.7976931348623157e308],
  [-1.7976931348623157e308, -1.7976931348623157e308],
  [5e-324, 5e-324],
  [0.1 + 0.2, 0.1 + 0.2],
  [72, 72],
  [null, null],
  ...(DIALECT === 'postgres' ? ([[NaN, null]] as [number, null][]) : []),
];

test(`migration 018 clears the scores no read may carry and keeps every other (${DIALECT})`, async () => {
  assert.ifError((await migrator.migrateTo('017_deal_doc')).error);
  await db
    .insertInto('tenants')
    .values({ id: 'ten_a', name: 'A', slug: `a-${process.pid}`, locale: 'en', created_at: now })
    .execute();
  for (const [i, [score]] of SCORES.entries()) {
    await db
      .insertInto('contacts')
      .values({
        tenant_id: 'ten_a',
        id: `c${i}`,
        first_name: `P${i}`,
        last_name: null,
        email: null,
        phone: null,
        company_id: null,
        owner_id: null,
        score,
        custom_properties: '{}',
        created_at: now,
        updated_at: now,
        deleted_at: null,
        search_text: '',
      })
      .execute();
  }
  const docs = async () =>
    (await db.selectFrom('contacts').select(['id', 'doc', 'updated_at']).orderBy('id').execute()) as { id: string; doc: string; updated_at: string }[];
  // Before: the stored record is what the write did not answer (SQLite 9.0e+999, PostgreSQL "Infinity").
  const before = await docs();
  assert.ok(
    before.some((r) => /"score" ?: ?(9\.0e\+999|"Infinity")/.test(r.doc)),
    before.map((r) => r.doc).join('\n'),
  );

  assert.ifError((await migrator.migrateTo('018_finite_scores')).error);
  const after = await docs();
  for (const [i, [, want]] of SCORES.entries()) {
    const row = after.find((r) => r.id === `c${i}`)!;
    const doc = JSON.parse(row.doc);
    assert.ok(Object.is(doc.score, want), `c${i}: ${row.doc}`);
    assert.doesNotMatch(row.doc, /"score" ?: ?(-0\b|"|9\.0e\+999)/, row.doc);
    assert.equal(row.updated_at, now);
  }
  const n = await sql<{ n: number }>`select count(*) as n from contacts where score is null`.execute(db);
  assert.equal(Number(n.rows[0].n), SCORES.filter(([, a]) => a === null).length);
});
