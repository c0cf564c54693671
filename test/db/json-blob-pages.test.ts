// Pages of contacts and companies read on SQLite's main connection come as one BLOB of their records joined by
// commas, with each row's id, sort value and byte length (db/pages-sqlite.ts pageAsBlob). Every such page
// must hold exactly the records, in exactly the order, that the list's rows give: checked here against the single
// reads (the same stored JSON) and the order the API promises (B.4: by the key, then id), through page numbers and
// cursor walks, for the index walks (no filter, an owner) and the probes (an owner and a score), with records whose
// byte length differs from their length in characters (the extra row of a cursor page is cut by bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECT, newTenant, recordStatements, testApp } from '../helpers/app.js';

const t = await testApp();
const WIDE = ['Zoë', 'Łukasz', 'José 😀', 'Ana', '名前', 'Bruno ✓', 'Çağrı', 'Ed'];

const isBlob = (s: { sql: string }) => s.sql.includes('group_concat(');

test(`pages read as one BLOB hold the list's records in its order (${DIALECT})`, async () => {
  const { api, refs } = await newTenant(t);
  const owners = [refs.ana, refs.bruno];
  const single = new Map<string, unknown>();
  for (let i = 0; i < 23; i++) {
    const r = await api.post('/contacts', {
      firstName: WIDE[i % WIDE.length],
      lastName: `${'é'.repeat(i % 5)}${i}`,
      ownerId: owners[i % 2],
      score: (i * 37) % 100,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  for (let i = 0; i < 9; i++) assert.equal((await api.post('/companies', { name: `${WIDE[i % WIDE.length]} ${i}`, ownerId: owners[i % 2] })).status, 201);
  // One record whose stored JSON is edited by a PATCH after the others: updatedAt order differs from createdAt's.
  const all = (await api.get('/contacts?pageSize=100')).body.data as { id: string; ownerId: string; score: number; createdAt: string; updatedAt: string }[];
  assert.equal((await api.patch(`/contacts/${all[10].id}`, { firstName: 'Renée ✓' })).status, 200);

  const read = async (kind: 'contacts' | 'companies', id: string) => {
    if (!single.has(`${kind}/${id}`)) single.set(`${kind}/${id}`, (await api.get(`/${kind}/${id}`)).body);
    return single.get(`${kind}/${id}`);
  };
  /** Every record of `pages` is its single read, and the ids follow `want`. */
  const check = async (kind: 'contacts' | 'companies', label: string, pages: { data: { id: string }[] }[], want: string[]) => {
    const got = pages.flatMap((p) => p.data);
    assert.deepEqual(
      got.map((r) => r.id),
      want,
      `${label}: order`,
    );
    for (const r of got) assert.deepStrictEqual(r, await read(kind, r.id), `${label}: ${r.id}`);
  };
  const byKey = <R extends { id: string }>(rows: R[], key: (r: R) => string | number, order: 'asc' | 'desc') =>
    [...rows]
      .sort((a, b) => {
        const ka = key(a);
        const kb = key(b);
        const c = ka < kb ? -1 : ka > kb ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
        return order === 'asc' ? c : -c;
      })
      .map((r) => r.id);

  const contacts = (await api.get('/contacts?pageSize=100')).body.data as typeof all;
  const companies = (await api.get('/companies?pageSize=100')).body.data as { id: string; ownerId: string; createdAt: string; updatedAt: string }[];
  const lists: { kind: 'contacts' | 'companies'; path: string; body?: (extra: object) => object; want: string[] }[] = [];
  for (const order of ['asc', 'desc'] as const) {
    for (const sortKey of ['createdAt', 'updatedAt'] as const) {
      lists.push({ kind: 'contacts', path: `/contacts?sortKey=${sortKey}&sortOrder=${order}`, want: byKey(contacts, (r) => r[sortKey], order) });
      lists.push({ kind: 'companies', path: `/companies?sortKey=${sortKey}&sortOrder=${order}`, want: byKey(companies, (r) => r[sortKey], order) });
    }
    const mine = contacts.filter((c) => c.ownerId === refs.ana);
    lists.push({ kind: 'contacts', path: `/contacts?ownerId=${refs.ana}&sortOrder=${order}`, want: byKey(mine, (r) => r.createdAt, order) });
    // The probe: the owner's walk, each row tested on its score.
    const hot = mine.filter((c) => c.score >= 40);
    lists.push({
      kind: 'contacts',
      path: '/contacts/search',
      body: (extra) => ({
        filters: {
          operator: 'AND',
          conditions: [
            { field: 'ownerId', operator: 'eq', value: refs.ana },
            { field: 'score', operator: 'gte', value: 40 },
          ],
        },
        sortOrder: order,
        ...extra,
      }),
      want: byKey(hot, (r) => r.createdAt, order),
    });
  }

  for (const list of lists) {
    for (const pageSize of [1, 4, 7, 100]) {
      const get = (extra: Record<string, string | number>) =>
        list.body
          ? api.post(list.path, list.body(extra))
          : api.get(`${list.path}${list.path.includes('?') ? '&' : '?'}${new URLSearchParams(Object.entries(extra).map(([k, v]) => [k, String(v)]))}`);
      // By page number, to one page past the end.
      const byNumber = [];
      const { result: first, main } = await recordStatements(t.database, () => get({ pageSize, page: 1 }));
      if (DIALECT === 'sqlite') assert.ok(main.some(isBlob), `${list.path}: the page was read as one BLOB`);
      assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(Number(first.headers['content-length']), Buffer.byteLength(first.raw.body), `${list.path}: content-length`);
      byNumber.push(first.body);
      for (let page = 2; byNumber.at(-1).pagination.hasNext; page++) byNumber.push((await get({ pageSize, page })).body);
      const label = `${list.path} ${list.body ? JSON.stringify(list.body({})) : ''} pageSize ${pageSize}`;
      await check(list.kind, `${label} by number`, byNumber, list.want);
      assert.equal(byNumber[0].pagination.total, list.want.length);
      const past = (await get({ pageSize, page: byNumber.length + 1 })).body;
      assert.deepEqual(past.data, []);
      // By cursor: each page read with one extra row, cut from the BLOB by its bytes.
      const byCursor = [first.body];
      while (byCursor.at(-1).pagination.nextCursor) byCursor.push((await get({ pageSize, cursor: byCursor.at(-1).pagination.nextCursor })).body);
      await check(list.kind, `${label} by cursor`, byCursor, list.want);
      for (const p of byCursor.slice(1)) assert.equal(p.pagination.hasNext, p.pagination.nextCursor !== null);
    }
  }
});

test('an empty list read as one BLOB is an empty page', async () => {
  const { api, refs } = await newTenant(t);
  for (const path of ['/contacts', '/companies', `/contacts?ownerId=${refs.ana}`]) {
    const r = await api.get(path);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, []);
    assert.equal(r.body.pagination.total, 0);
    assert.equal(r.body.pagination.nextCursor, null);
  }
});
