import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markChanged } from '../../src/modules/shared/changes.js';
import { withTx } from '../../src/db/index.js';
import { newTenant, recordStatements, testApp } from '../helpers/app.js';

// List totals are cached against the tenant's change version (src/db/count-cache.ts): every write must
// show in the next total, whichever path or process made it.
const t = await testApp();

test('list totals follow creates, updates, deletes and tag removals at once', async () => {
  const { api } = await newTenant(t);
  const total = async (url: string, body?: unknown) => (body ? await api.post(url, body) : await api.get(url)).body.pagination.total;
  const hot = { filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] }, pageSize: 1 };
  assert.equal(await total('/contacts?pageSize=1'), 0);
  const a = (await api.post('/contacts', { firstName: 'A', score: 90 })).body;
  const b = (await api.post('/contacts', { firstName: 'B', score: 10 })).body;
  assert.equal(await total('/contacts?pageSize=1'), 2);
  assert.equal(await total('/contacts/search', hot), 1);
  await api.patch(`/contacts/${b.id}`, { score: 85 });
  assert.equal(await total('/contacts/search', hot), 2);
  await api.delete(`/contacts/${a.id}`);
  assert.equal(await total('/contacts?pageSize=1'), 1);
  assert.equal(await total('/contacts/search', hot), 1);

  const tag = (await api.post('/tags', { name: 'VIP' })).body;
  await api.patch(`/contacts/${b.id}`, { tags: [tag.id] });
  const tagged = { filters: { operator: 'AND', conditions: [{ field: 'tags', operator: 'exists' }] }, pageSize: 1 };
  assert.equal(await total('/contacts/search', tagged), 1);
  await api.delete(`/tags/${tag.id}`);
  assert.equal(await total('/contacts/search', tagged), 0);

  const co = (await api.post('/companies', { name: 'Acme' })).body;
  assert.equal(await total('/companies?pageSize=1'), 1);
  await api.delete(`/companies/${co.id}`);
  assert.equal(await total('/companies?pageSize=1'), 0);
});

test('a write made outside this process (another server sharing the database) invalidates cached totals', async () => {
  const { api, tenantId } = await newTenant(t);
  await api.post('/contacts', { firstName: 'A' });
  await api.post('/contacts', { firstName: 'B' });
  assert.equal((await api.get('/contacts?pageSize=1')).body.pagination.total, 2);
  // What another process's create does inside its transaction: the row and the version bump (made as the
  // transaction's last statement, by withTx's commit).
  await withTx(t.database.db, async (tx) => {
    const now = new Date().toISOString();
    await tx
      .insertInto('contacts')
      .values({
        tenant_id: tenantId,
        id: 'con_elsewhere',
        first_name: 'C',
        last_name: null,
        email: null,
        phone: null,
        company_id: null,
        owner_id: null,
        score: null,
        custom_properties: '{}',
        created_at: now,
        updated_at: now,
        deleted_at: null,
        search_text: '',
      })
      .execute();
    await markChanged(tx, tenantId, 'contact');
  });
  assert.equal((await api.get('/contacts?pageSize=1')).body.pagination.total, 3);
});

test('refreshing planner statistics keeps every read working (SQLite: stat1 kept, stat4 samples dropped)', async () => {
  const { api } = await newTenant(t);
  await api.post('/contacts', { firstName: 'A', score: 90 });
  await t.database.optimize();
  await t.database.optimize();
  const r = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] } });
  assert.equal(r.status, 200);
  assert.equal(r.body.pagination.total, 1);
  if (t.database.dialect.name === 'sqlite') {
    const { sql } = await import('kysely');
    const stat4 = await sql<{ n: number }>`select count(*) as n from sqlite_stat4`.execute(t.database.db).catch(() => ({ rows: [{ n: 0 }] }));
    assert.equal(Number(stat4.rows[0].n), 0);
    const stat1 = await sql<{ n: number }>`select count(*) as n from sqlite_stat1`.execute(t.database.db);
    assert.ok(Number(stat1.rows[0].n) > 0);
  }
});

test('pages asked at once while their total is not cached share one count; a failed shared count is retried once, shared, and remembered', async () => {
  const { api } = await newTenant(t);
  for (let i = 0; i < 5; i++) await api.post('/contacts', { firstName: `C${i}` });
  const isCount = (s: { sql: string }) => /count\(\*\)/.test(s.sql);
  // Every count statement, on the pool or (no pool) on the connection.
  const first = await recordStatements(t.database, () =>
    Promise.all(Array.from({ length: 10 }, (_, i) => api.get(`/contacts?pageSize=1&page=${(i % 5) + 1}`))),
  );
  assert.deepEqual(
    first.result.map((p) => p.body.pagination.total),
    Array(10).fill(5),
  );
  assert.equal([...first.pooled, ...first.main].filter(isCount).length, 1, 'one count for ten pages');

  // The shared count fails (its first caller's client went away, its deadline passed): one of the others counts
  // anew and the rest share that count.
  const pool = t.database.readPool;
  if (!pool) return;
  await api.post('/contacts', { firstName: 'C5' });
  const run = pool.run;
  let failed = false;
  pool.run = (tenant, text, ...rest) =>
    // Fails once the others have joined it.
    isCount({ sql: text }) && !failed
      ? ((failed = true), new Promise((_, reject) => setTimeout(() => reject(new Error('client gone')), 100)))
      : run.call(pool, tenant, text, ...rest);
  try {
    const again = await recordStatements(t.database, () => Promise.allSettled(Array.from({ length: 4 }, () => api.get('/contacts?pageSize=1'))));
    assert.equal(again.result.filter((r) => r.status === 'fulfilled' && r.value.status === 200 && r.value.body.pagination.total === 6).length, 3);
    assert.equal(again.pooled.filter(isCount).length, 2, 'the first count failed; the three others shared one count');
  } finally {
    pool.run = run;
  }
  // The retried count's total is remembered: the next page counts nothing.
  const after = await recordStatements(t.database, () => api.get('/contacts?pageSize=1&page=2'));
  assert.equal(after.result.body.pagination.total, 6);
  assert.equal([...after.pooled, ...after.main].filter(isCount).length, 0, 'the retried total was cached');
});
