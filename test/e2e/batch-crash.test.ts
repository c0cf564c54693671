// CONTRACT C.2 with the real process: `kill -9` while batches are being written leaves, for every input,
// all of it (the contact, its tags and its contact.created event) or none of it; the restarted server
// goes on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, sleep } from './cli.helpers.js';

const start = serverStarter();

test('kill -9 in the middle of batch writes: each input is all there or not at all, and acknowledged ones are there', async () => {
  const s = await scratch();
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Batch crash'))], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const apiKey = setup.json.apiKeys.full as string;
  const tenantId = setup.json.tenantId as string;
  const server = await start(s.env);
  const call = (path: string, body: unknown) =>
    fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const tags: string[] = [];
  for (const name of ['crash-a', 'crash-b']) tags.push(((await (await call('/tags', { name })).json()) as { id: string }).id);

  // Four clients write batches of 100 (upserts with tags, so an input is several rows) until the kill.
  const acknowledged: string[] = [];
  let stop = false;
  let sent = 0;
  const client = async (c: number) => {
    for (let b = 0; !stop; b++) {
      const inputs = Array.from({ length: 100 }, (_, k) => ({ firstName: `C${c}B${b}K${k}`, email: `c${c}-b${b}-k${k}@crash.test`, tags }));
      sent++;
      try {
        const r = await call('/contacts/batch/upsert', { idProperty: 'email', inputs });
        if (r.status !== 200) throw new Error(`batch answered ${r.status}: ${await r.text()}`);
        const body = (await r.json()) as { results: { id: string }[] };
        acknowledged.push(...body.results.map((x) => x.id));
      } catch (err) {
        if (!stop) throw err;
      }
    }
  };
  const clients = [0, 1, 2, 3].map(client);
  const killAt = Date.now() + 15_000;
  while (acknowledged.length < 600 && Date.now() < killAt) await sleep(20);
  await sleep(37); // land somewhere inside a batch, not between two
  // SIGKILL goes out before the clients are told to stop: with `stop` set first, every batch in flight could
  // still be answered (and no new one sent) before the signal landed, leaving none interrupted.
  const killed = server.kill();
  stop = true;
  await killed;
  await Promise.allSettled(clients);
  assert.ok(acknowledged.length >= 600, `only ${acknowledged.length} contacts acknowledged before the kill`);

  const db = s.db().db;
  const contacts = await db.selectFrom('contacts').select(['id', 'email']).where('tenant_id', '=', tenantId).execute();
  const tagRows = await db
    .selectFrom('record_tags')
    .select(['object_id', 'tag_id'])
    .where('tenant_id', '=', tenantId)
    .where('object_type', '=', 'contact')
    .execute();
  const eventRows = await db.selectFrom('events').select('payload').where('tenant_id', '=', tenantId).where('type', '=', 'contact.created').execute();
  const ids = new Set(contacts.map((c) => c.id));
  const tagged = new Map<string, number>();
  for (const t of tagRows) tagged.set(t.object_id, (tagged.get(t.object_id) ?? 0) + 1);
  const evented = new Map<string, number>();
  for (const e of eventRows) {
    const id = (JSON.parse(e.payload) as { data: { contact: { id: string } } }).data.contact.id;
    evented.set(id, (evented.get(id) ?? 0) + 1);
  }
  for (const c of contacts) {
    assert.equal(tagged.get(c.id), 2, `contact ${c.email} has both tags`);
    assert.equal(evented.get(c.id), 1, `contact ${c.email} has exactly one contact.created`);
  }
  for (const id of [...tagged.keys(), ...evented.keys()]) assert.ok(ids.has(id), `no tag or event without its contact (${id})`);
  for (const id of acknowledged) assert.ok(ids.has(id), `an acknowledged contact survives the kill (${id})`);
  // One transaction per batch: whole batches only.
  assert.equal(contacts.length % 100, 0, `${contacts.length} contacts: a batch was cut in the middle`);
  assert.ok(sent * 100 > contacts.length, 'the kill interrupted at least one batch in flight');

  // The restarted server goes on: a repeat of a committed batch updates, nothing is duplicated.
  const again = await start(s.env);
  const r = await fetch(`${again.url}/api/v1/contacts/batch/upsert`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ idProperty: 'email', inputs: [{ firstName: 'Again', email: contacts[0].email }] }),
  });
  assert.equal(r.status, 200);
  const body = (await r.json()) as { results: { id: string; action: string }[] };
  assert.deepEqual([body.results[0].action, body.results[0].id], ['updated', contacts[0].id]);
  assert.equal(await again.stop(), 0);
});
