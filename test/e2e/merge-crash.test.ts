// CONTRACT D.1, D.2, D.5 with the real process: `kill -9` while merges, restores and erasures run leaves each
// one whole or not begun — a merge's primary, re-pointed deals and activity links, folded record and event all
// there or none of them; a restored record with its event or still deleted; an erased contact gone with its
// e-mail and its event, or there untouched — and acknowledged ones are there after the restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, sleep } from './cli.helpers.js';

const start = serverStarter();
const PAIRS = 30;

test('kill -9 during merges, restores and erasures: each is all there or not at all, and acknowledged ones are there', async () => {
  const s = await scratch();
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup('Merge crash'))], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const apiKey = setup.json.apiKeys.full as string;
  const tenantId = setup.json.tenantId as string;
  const { sales, lead } = setup.json.refs as Record<string, string>;
  const server = await start(s.env);
  const call = async (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = async (path: string, body: unknown) => {
    const r = await call('POST', path, body);
    assert.ok(r.status === 201 || r.status === 200, `${path}: ${r.status} ${await r.clone().text()}`);
    return r.json() as Promise<any>;
  };
  const inputs = Array.from({ length: PAIRS * 4 }, (_, i) => ({ firstName: `P${i}`, email: `p${i}@crash.test` }));
  const contacts: string[] = [];
  for (let i = 0; i < inputs.length; i += 100)
    contacts.push(...(await created('/contacts/batch/create', { inputs: inputs.slice(i, i + 100) })).results.map((x: any) => x.id));
  const pairs = Array.from({ length: PAIRS }, (_, i) => ({ primary: contacts[2 * i], merged: contacts[2 * i + 1] }));
  const toRestore = contacts.slice(2 * PAIRS, 3 * PAIRS);
  const toErase = contacts.slice(3 * PAIRS);
  for (const { merged } of pairs) {
    for (let k = 0; k < 2; k++) await created('/deals', { title: `D${k}`, pipelineId: sales, stageId: lead, contactId: merged });
    for (let k = 0; k < 3; k++) await created('/activities', { type: 'call', title: `A${k}`, contactIds: [merged] });
  }
  for (const id of toRestore) assert.equal((await call('DELETE', `/contacts/${id}`)).status, 204);

  // Three clients, one per operation, until the kill.
  const done = { merge: new Set<string>(), restore: new Set<string>(), erase: new Set<string>() };
  let stop = false;
  const run = async (ids: string[], op: keyof typeof done, send: (id: string) => Promise<Response>) => {
    for (const id of ids) {
      if (stop) return;
      try {
        const r = await send(id);
        if (r.status === 200 || r.status === 204) done[op].add(id);
        else throw new Error(`${op} ${id}: ${r.status} ${await r.text()}`);
      } catch (err) {
        if (!stop) throw err;
      }
    }
  };
  const merging = run(
    pairs.map((p) => p.merged),
    'merge',
    (merged) => call('POST', '/contacts/merge', { primaryId: pairs.find((p) => p.merged === merged)!.primary, mergedId: merged }),
  );
  const restoring = run(toRestore, 'restore', (id) => call('POST', `/contacts/${id}/restore`));
  const erasing = run(toErase, 'erase', (id) => call('POST', `/contacts/${id}/erase`));
  const killAt = Date.now() + 15_000;
  while (done.merge.size < PAIRS / 3 && Date.now() < killAt) await sleep(2);
  const killed = server.kill();
  stop = true;
  await killed;
  await Promise.allSettled([merging, restoring, erasing]);
  assert.ok(done.merge.size >= PAIRS / 3, `only ${done.merge.size} merges acknowledged before the kill`);

  const db = s.db().db;
  const rows = new Map(
    (await db.selectFrom('contacts').selectAll().where('tenant_id', '=', tenantId).execute()).map((r) => [r.id, r as unknown as Record<string, unknown>]),
  );
  const events = await db.selectFrom('events').select(['type', 'payload']).where('tenant_id', '=', tenantId).execute();
  const eventsOf = (type: string, id: string, key: 'contact' | 'id' = 'contact') =>
    events.filter((e) => {
      if (e.type !== type) return false;
      const data = (JSON.parse(e.payload) as { data: Record<string, any> }).data;
      return key === 'id' ? data.id === id : type === 'contact.merged' ? data.mergedId === id : data.contact.id === id;
    }).length;
  let merges = 0;
  for (const { primary, merged } of pairs) {
    const row = rows.get(merged)!;
    const deals = await db.selectFrom('deals').select('contact_id').where('tenant_id', '=', tenantId).where('contact_id', 'in', [primary, merged]).execute();
    const links = await db
      .selectFrom('activity_links')
      .select('object_id')
      .where('tenant_id', '=', tenantId)
      .where('object_type', '=', 'contact')
      .where('object_id', 'in', [primary, merged])
      .execute();
    const after = row.merged_into_id === primary;
    if (after) merges++;
    const owner = after ? primary : merged;
    assert.equal(row.deleted_at !== null, after, `merge ${merged}: folded exactly when marked merged`);
    assert.deepEqual([...new Set(deals.map((d) => d.contact_id))], [owner], `merge ${merged}: both deals on ${after ? 'the primary' : 'the merged contact'}`);
    assert.equal(links.length, 3, `merge ${merged}: three activity links`);
    assert.deepEqual([...new Set(links.map((l) => l.object_id))], [owner], `merge ${merged}: the links follow`);
    assert.equal(eventsOf('contact.merged', merged), after ? 1 : 0, `merge ${merged}: its event with it`);
    if (done.merge.has(merged)) assert.ok(after, `an acknowledged merge survives the kill (${merged})`);
  }
  for (const id of toRestore) {
    const live = rows.get(id)!.deleted_at === null;
    assert.equal(eventsOf('contact.restored', id), live ? 1 : 0, `restore ${id}: its event with it`);
    if (done.restore.has(id)) assert.ok(live, `an acknowledged restore survives the kill (${id})`);
  }
  for (const [i, id] of toErase.entries()) {
    const gone = !rows.has(id);
    const email = `p${3 * PAIRS + i}@crash.test`;
    assert.equal(eventsOf('contact.erased', id, 'id'), gone ? 1 : 0, `erase ${id}: its event with it`);
    assert.equal(
      events.some((e) => e.payload.includes(email)),
      !gone,
      `erase ${id}: its e-mail left the events exactly when the contact went`,
    );
    if (done.erase.has(id)) assert.ok(gone, `an acknowledged erasure survives the kill (${id})`);
  }
  assert.ok(merges < PAIRS || done.merge.size === PAIRS, 'the kill landed while merges were running');

  // The restarted server goes on: a merge left undone can be made now.
  const again = await start(s.env);
  const left = pairs.find((p) => rows.get(p.merged)!.merged_into_id === null);
  if (left) {
    const r = await fetch(`${again.url}/api/v1/contacts/merge`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ primaryId: left.primary, mergedId: left.merged }),
    });
    assert.equal(r.status, 200);
  }
  assert.equal(await again.stop(), 0);
});
