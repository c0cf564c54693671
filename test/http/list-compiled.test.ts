import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contextFor } from '../../src/http/context.js';
import { listPage, type ListingSpec } from '../../src/listing/planner.js';
import { newTenant, testApp } from '../helpers/app.js';

// A list whose query depends only on the tenant, its endpoint and its filters is built and compiled once per
// shape, then re-bound with each page's limit, offset and cursor position (listing/planner.ts compiledShape).
const t = await testApp();

test('a list compiled once answers every page, cursor and filter as if built anew, and never across tenants', async () => {
  const a = await newTenant(t);
  const b = await newTenant(t);
  const owner = a.refs.ana;
  for (let i = 0; i < 7; i++) await a.api.post('/contacts', { firstName: `A${i}`, ownerId: i % 2 === 0 ? owner : null });
  for (let i = 0; i < 3; i++) await b.api.post('/contacts', { firstName: `B${i}` });

  let builds = 0;
  const spec = (tenantId: string, ownerId: string | undefined, compiledOnce: boolean): ListingSpec => ({
    query: () => {
      builds++;
      let base = t.database.db.selectFrom('contacts').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
      if (ownerId !== undefined) base = base.where('owner_id', '=', ownerId);
      return { base, select: (q) => q.select(['id', 'first_name']) };
    },
    compiledOnce,
    sort: { key: 'createdAt', order: 'asc', column: { column: 'created_at', nullable: false } },
    keyId: 'key_test',
    // An endpoint of this test only: shapes are per endpoint, so no other test shares them.
    endpoint: `TEST /list-compiled ${compiledOnce}`,
    filters: { ownerId },
  });
  const names = (rows: { first_name: string }[]) => rows.map((r) => r.first_name);
  const ctxA = contextFor(t.database, t.config, a.tenantId, null);
  const ctxB = contextFor(t.database, t.config, b.tenantId, null);
  // The order a list built anew gives (contacts created in the same millisecond tie on created_at, and their
  // ids then order them at random: expectations follow this order, not the order of creation).
  const anew = async (tenantId: string, ownerId?: string) =>
    names(
      (await listPage<{ first_name: string }>(contextFor(t.database, t.config, tenantId, null), spec(tenantId, ownerId, false), { page: 1, pageSize: 10 }))
        .rows,
    );
  const all = await anew(a.tenantId);
  assert.deepEqual([...all].sort(), ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6']);
  const allOwned = await anew(a.tenantId, owner);
  assert.deepEqual([...allOwned].sort(), ['A0', 'A2', 'A4', 'A6']);
  const allB = await anew(b.tenantId);
  builds = 0;

  const p1 = await listPage<{ first_name: string }>(ctxA, spec(a.tenantId, undefined, true), { page: 1, pageSize: 3 });
  assert.deepEqual(names(p1.rows), all.slice(0, 3));
  assert.equal(p1.pagination.total, 7);
  const p3 = await listPage<{ first_name: string }>(ctxA, spec(a.tenantId, undefined, true), { page: 3, pageSize: 3 });
  assert.deepEqual(names(p3.rows), all.slice(6));
  assert.equal(builds, 1, 'the second page re-binds the statement compiled for the first');
  const next = await listPage<{ first_name: string }>(ctxA, spec(a.tenantId, undefined, true), { pageSize: 2, cursor: p1.pagination.nextCursor! });
  assert.deepEqual(names(next.rows), all.slice(3, 5));
  const after = await listPage<{ first_name: string }>(ctxA, spec(a.tenantId, undefined, true), { pageSize: 2, cursor: next.pagination.nextCursor! });
  assert.deepEqual(names(after.rows), all.slice(5, 7));
  assert.equal(after.pagination.hasNext, false);
  assert.equal(builds, 2, 'one build for pages by number, one for pages after a cursor');

  // Other filter values, another tenant: shapes of their own, with their own values.
  const owned = await listPage<{ first_name: string }>(ctxA, spec(a.tenantId, owner, true), { page: 1, pageSize: 10 });
  assert.deepEqual(names(owned.rows), allOwned);
  const other = await listPage<{ first_name: string }>(ctxB, spec(b.tenantId, undefined, true), { page: 1, pageSize: 2 });
  assert.deepEqual(names(other.rows), allB.slice(0, 2));
  assert.equal(other.pagination.total, 3);
  assert.equal(builds, 4);
  // A's cursor is bound to A's list: B's shape refuses it.
  await assert.rejects(listPage(ctxB, spec(b.tenantId, undefined, true), { pageSize: 2, cursor: p1.pagination.nextCursor! }), { code: 'invalid_cursor' });

  // Not compiled once: built on every page.
  builds = 0;
  for (const page of [1, 2, 1]) await listPage(ctxA, spec(a.tenantId, undefined, false), { page, pageSize: 3 });
  assert.equal(builds, 3);
});

test('a search that names a custom property follows a change of its definition (compiled anew every time)', async () => {
  const { api, tenantId } = await newTenant(t);
  const prop = await t.database.db
    .selectFrom('properties')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', 'contact')
    .where('internal_name', '=', 'multi_select_field')
    .executeTakeFirstOrThrow();
  const created = await api.post('/contacts', { firstName: 'Multi', customProperties: { [prop.id]: ['smb'] } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const search = { filters: { operator: 'AND', conditions: [{ field: `customProperties.${prop.id}`, operator: 'in', value: ['smb'] }] } };
  const first = await api.post('/contacts/search', search);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.data.length, 1);
  // The same property as a single select: its stored value (an array) is no longer one of the options'.
  await t.database.db.updateTable('properties').set({ type: 'select' }).where('tenant_id', '=', tenantId).where('id', '=', prop.id).execute();
  const second = await api.post('/contacts/search', search);
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(second.body.data.length, 0);
});
