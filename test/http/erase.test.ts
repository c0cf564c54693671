// CONTRACT D.5 erasure: POST /contacts/:id/erase (scope contacts:erase) erases a live or deleted contact for good
// (204; its id 404 everywhere afterwards, includeDeleted and restore included). Gone with it: its fields, its
// values inside every stored event, its submissions' values and metadata, the submitter's address in the audit log,
// stored idempotent answers that held it (replayed as 404), its search text; records that named it stay without the
// reference. What remains: contact.erased ({ id }) and ids. Its e-mail is found nowhere afterwards: through no
// endpoint, in no table of PostgreSQL, in no byte of the SQLite file or its write-ahead log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { DIALECT, newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
let seq = 0;

async function post(api: Client, url: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<any> {
  const r = await api.post(url, body, headers);
  assert.equal(r.status, 201, `${url} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function tenant(): Promise<Tenant> {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'eraser', name: 'Privacy desk', user: 'ana', scopes: ['contacts:erase'] });
  return newTenant(t, setup);
}

/** Every text and JSON column of every table of the schema that holds `needle` (PostgreSQL). */
async function pgColumnsHolding(needle: string): Promise<string[]> {
  const { rows: columns } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and data_type in ('text', 'json', 'jsonb', 'character varying')`.execute(t.database.db);
  const found: string[] = [];
  for (const c of columns) {
    const { rows } = await sql<{
      n: number;
    }>`select count(*) as n from ${sql.table(c.table_name)} where ${sql.ref(c.column_name)}::text like ${`%${needle}%`}`.execute(t.database.db);
    if (Number(rows[0].n) > 0) found.push(`${c.table_name}.${c.column_name}`);
  }
  return found;
}

test('a contact erased: gone from every endpoint, every stored event, its submissions, the audit log, idempotent answers and the files', async () => {
  const ten = await tenant();
  const { api, refs } = ten;
  const n = ++seq;
  const email = `zuleica.quintanilha.${n}@private.test`;
  const phone = `+5511987${String(100_000 + n).slice(-6)}`;
  const note = `secret-note-${n}-xyzzy`;
  const hook = await post(api, '/webhooks', {
    name: 'Sync',
    url: 'https://hooks.example.com/crm',
    events: ['contact.created', 'contact.updated', 'deal.created'],
  });
  assert.ok(hook.id);
  const tag = await post(api, '/tags', { name: `vip ${n}` });
  const idem = { 'idempotency-key': `erase-test-${process.pid}-${n}` };
  const body = { firstName: 'Zuleica', lastName: 'Quintanilha', email, phone, tags: [tag.id], customProperties: { [refs.contact_text]: note } };
  const c = await post(api, '/contacts', body, idem);
  assert.equal((await api.patch(`/contacts/${c.id}`, { lastName: 'Quintanilha-Souza' })).status, 200);
  const deal = await post(api, '/deals', { title: `Deal ${n}`, pipelineId: refs.sales, stageId: refs.lead, contactId: c.id });
  const activity = await post(api, '/activities', { type: 'call', title: 'Call', contactIds: [c.id] });
  const proposal = await post(api, '/proposals', { subject: 'Offer', contactId: c.id });
  const list = await post(api, '/lists', { name: `L${n}`, objectType: 'contact', kind: 'static' });
  assert.equal((await api.post(`/lists/${list.id}/members`, { objectIds: [c.id] })).status, 200);
  // The person also used the public form: the submission updates the same contact.
  const form = (await api.get('/forms')).body.find((f: any) => f.slug === 'contact-us');
  const submitted = await t.app.inject({
    method: 'POST',
    url: new URL(form.embedUrl).pathname,
    payload: { email, name: 'Zuleica', plan: 'ent' },
    headers: { 'user-agent': 'private-browser/1' },
    remoteAddress: '198.51.100.77',
  });
  assert.equal(submitted.statusCode, 201, submitted.body);
  const submissionId = JSON.parse(submitted.body).submissionId;
  assert.ok(JSON.stringify((await api.get('/events?limit=1000')).body).includes(email), 'the events held it before');

  // contacts:write cannot erase; contacts:erase can.
  const denied = await ten.as('wo').post(`/contacts/${c.id}/erase`);
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'insufficient_scope');
  const erased = await ten.as('eraser').post(`/contacts/${c.id}/erase`);
  assert.equal(erased.status, 204, JSON.stringify(erased.body));

  // Its id is 404 everywhere.
  assert.equal((await api.get(`/contacts/${c.id}`)).status, 404);
  assert.equal((await api.post(`/contacts/${c.id}/restore`)).status, 404);
  assert.equal((await ten.as('eraser').post(`/contacts/${c.id}/erase`)).status, 404);
  assert.ok(!(await api.get('/contacts?includeDeleted=true&pageSize=100')).body.data.some((x: any) => x.id === c.id));
  assert.deepEqual((await api.get(`/contacts?search=${encodeURIComponent('Quintanilha')}`)).body.data, []);
  // An idempotent replay of its creation answers 404.
  const replay = await api.post('/contacts', body, idem);
  assert.equal(replay.status, 404, JSON.stringify(replay.body));
  assert.equal(replay.body.error, 'not_found');

  // Records that named it stay, without it.
  assert.equal((await api.get(`/deals/${deal.id}`)).body.contactId, null);
  assert.deepEqual((await api.get(`/activities/${activity.id}`)).body.contactIds, []);
  assert.equal((await api.get(`/proposals/${proposal.id}`)).body.contactId, null);
  assert.equal((await api.get(`/lists/${list.id}`)).body.memberCount, 0);
  const submission = (await api.get(`/forms/${refs.contact_us}/submissions`)).body.data.find((s: any) => s.id === submissionId);
  assert.deepEqual([submission.values, submission.metadata, submission.contactId], [null, null, null]);

  // What remains: contact.erased with its id, and audit entries of ids and field names.
  const events = (await api.get('/events?limit=1000')).body.data;
  const last = events[events.length - 1];
  assert.deepEqual([last.type, last.data], ['contact.erased', { id: c.id }]);
  const audit = (await api.get('/audit-log?pageSize=100')).body.data;
  assert.equal(audit[0].action, 'contact.erased');
  for (const e of audit.filter((x: any) => x.actor.type === 'public_form')) assert.deepEqual([e.ip, e.userAgent], [null, null]);

  // Found nowhere through the API…
  const everything = JSON.stringify([
    events,
    audit,
    (await api.get(`/webhooks/${hook.id}/deliveries`)).body,
    (await api.get(`/forms/${refs.contact_us}/submissions`)).body,
    (await api.get('/contacts?pageSize=100&includeDeleted=true')).body,
    (await api.get('/deals?pageSize=100')).body,
  ]);
  for (const needle of [email, phone, note, 'Quintanilha']) assert.ok(!everything.includes(needle), `${needle} through the API`);

  // …nor in the database.
  if (DIALECT === 'postgres') {
    for (const needle of [email, note]) assert.deepEqual(await pgColumnsHolding(needle), [], needle);
  } else {
    const { rows } = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(t.database.db);
    const file = rows[0].file;
    for (const path of [file, `${file}-wal`]) {
      if (!existsSync(path)) continue;
      const bytes = readFileSync(path);
      for (const needle of [email, note, 'Quintanilha']) assert.equal(bytes.indexOf(needle), -1, `${needle} in ${path}`);
    }
  }
});

test('a deleted contact can be erased too; another tenant’s cannot; an unknown id is 404', async () => {
  const ten = await tenant();
  const other = await tenant();
  const c = await post(ten.api, '/contacts', { firstName: 'Gone', email: `gone${++seq}@private.test` });
  assert.equal((await ten.api.delete(`/contacts/${c.id}`)).status, 204);
  assert.equal((await other.api.post(`/contacts/${c.id}/erase`)).status, 404);
  assert.equal((await ten.api.post('/contacts/con_missing/erase')).status, 404);
  assert.equal((await ten.api.post(`/contacts/${c.id}/erase`)).status, 204, '`*` covers contacts:erase');
  assert.ok(!(await ten.api.get('/contacts?includeDeleted=true&pageSize=100')).body.data.some((x: any) => x.id === c.id));
  assert.equal((await ten.api.post(`/contacts/${c.id}/restore`)).status, 404);
  // With an Idempotency-Key (the SDK sends one on every POST) the erasure runs in the key's transaction, and the
  // write-ahead log is truncated once it commits; a retry replays the 204.
  const d = await post(ten.api, '/contacts', { firstName: 'Keyed', email: `keyed${++seq}@private.test` });
  const key = { 'idempotency-key': `erase-${process.pid}-${seq}` };
  assert.equal((await ten.api.post(`/contacts/${d.id}/erase`, undefined, key)).status, 204);
  const again = await ten.api.post(`/contacts/${d.id}/erase`, undefined, key);
  assert.equal(again.status, 204);
  assert.equal((await ten.api.get(`/contacts/${d.id}`)).status, 404);
});
