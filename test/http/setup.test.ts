// applySetup (CONTRACT A.3) at unit level: refs, displayOrder from array position, one default pipeline,
// user e-mails unique per tenant only, errors naming the path, and nothing written on error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { AdminError } from '../../src/admin/keys.js';
import { applySetup } from '../../src/admin/setup.js';
import { hashApiKey } from '../../src/auth/keys.js';
import { parseJson } from '../../src/util/json.js';
import { client, testApp } from '../helpers/app.js';

const t = await testApp();
const db = t.database.db;
const uniq = () => randomBytes(6).toString('hex');

/** A file exercising every section; names are unique per call so the shared PostgreSQL pass can look rows up. */
function file(): Record<string, any> {
  const u = uniq();
  return {
    tenant: { name: `Setup ${u}` },
    users: [
      { ref: 'ana', name: ' Ana Souza ', email: ` Ana.${u}@Acme.test ` },
      { ref: 'bruno', name: 'Bruno Lima', email: `bruno.${u}@acme.test` },
    ],
    apiKeys: [
      { ref: 'full', name: 'Integration', user: 'ana', scopes: ['*'], rateLimit: 1000 },
      { ref: 'ro', name: 'Read only', user: 'bruno', scopes: ['contacts:read', 'deals:read'], expiresAt: '2030-01-01T03:00:00-03:00' },
      { name: 'No ref, no user', scopes: ['tags:read'] },
    ],
    pipelines: [
      {
        ref: 'sales',
        name: `Sales ${u}`,
        stages: [
          { ref: 'lead', name: 'Lead', probability: 10 },
          { ref: 'proposal', name: 'Proposal', probability: 60.5 },
          { ref: 'won', name: 'Won', probability: 100, isWonStage: true },
          { ref: 'lost', name: 'Lost', probability: 0, isLostStage: true },
        ],
      },
      {
        ref: 'partners',
        name: 'Partners',
        stages: [
          { ref: 'p_intro', name: 'Intro', probability: 20 },
          { ref: 'p_signed', name: 'Signed', probability: 100, isWonStage: true },
        ],
      },
    ],
    lossReasons: [
      { ref: 'price', name: 'Price' },
      { ref: 'timing', name: 'Timing' },
    ],
    properties: [
      {
        ref: 'segment',
        objectType: 'contact',
        internalName: 'segment',
        label: 'Segment',
        type: 'select',
        options: [
          { value: 'smb', label: 'SMB' },
          { value: 'ent', label: 'Enterprise' },
        ],
      },
      { ref: 'employees', objectType: 'company', internalName: 'employees', label: 'Employees', type: 'number' },
      { ref: 'birthday', objectType: 'contact', internalName: 'birthday', label: 'Birthday', type: 'date', group: 'Personal', isDefaultInForm: true },
      { ref: 'source', objectType: 'deal', internalName: 'source', label: 'Source', type: 'text' },
      { ref: 'company_segment', objectType: 'company', internalName: 'segment', label: 'Segment', type: 'text' },
    ],
    forms: [
      {
        ref: 'contact_us',
        name: 'Contact us',
        slug: 'contact-us',
        fields: [
          { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
          { name: 'plan', label: 'Plan', type: 'select', required: false, options: [{ value: 'smb', label: 'SMB' }], mapsTo: 'customProperties.segment' },
          { name: 'notes', label: 'Notes', type: 'textarea', required: false },
        ],
      },
    ],
    lists: [
      {
        ref: 'smb',
        name: 'SMB',
        objectType: 'contact',
        kind: 'dynamic',
        filters: {
          operator: 'AND',
          conditions: [
            { field: 'customProperties.segment', operator: 'eq', value: 'smb' },
            { field: 'score', operator: 'gte', value: 50 },
          ],
        },
      },
      { ref: 'vip', name: 'VIP', objectType: 'company', kind: 'static', description: 'Hand-picked' },
    ],
  };
}

async function tenantByName(name: string) {
  return db.selectFrom('tenants').selectAll().where('name', '=', name).execute();
}

/** Applies a bad file; asserts the error names `path` and that nothing of the file was written. */
async function rejects(f: Record<string, any>, path: string) {
  const err = await applySetup(db, f).then(
    () => assert.fail(`expected an error at ${path}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AdminError, String(err));
  assert.equal(err.code, 'validation_failed');
  assert.equal(err.path, path, err.message);
  assert.ok(err.message.startsWith(`${path}:`), err.message);
  if (typeof f.tenant?.name === 'string') assert.deepEqual(await tenantByName(f.tenant.name.trim()), [], 'no tenant written');
  const emails = (f.users ?? []).map((u: any) => String(u.email).trim().toLowerCase());
  if (emails.length) assert.deepEqual(await db.selectFrom('users').select('id').where('email', 'in', emails).execute(), [], 'no user written');
  const pipelineNames = (f.pipelines ?? []).map((p: any) => p.name).filter((n: unknown) => typeof n === 'string' && n.startsWith('Sales '));
  if (pipelineNames.length)
    assert.deepEqual(await db.selectFrom('pipelines').select('id').where('name', 'in', pipelineNames).execute(), [], 'no pipeline written');
}

test('setup: every ref maps to the created row of the tenant; keys are stored hashed and work', async () => {
  const f = file();
  const r = await applySetup(db, f);
  assert.deepEqual(Object.keys(r).sort(), ['apiKeys', 'refs', 'tenantId']);
  const prefixes: Record<string, string> = {
    ana: 'usr_',
    bruno: 'usr_',
    full: 'key_',
    ro: 'key_',
    sales: 'pip_',
    partners: 'pip_',
    lead: 'stg_',
    won: 'stg_',
    price: 'lsr_',
    segment: 'prop_',
    employees: 'prop_',
    contact_us: 'frm_',
    smb: 'lst_',
    vip: 'lst_',
  };
  for (const [ref, prefix] of Object.entries(prefixes)) assert.ok(r.refs[ref]?.startsWith(prefix), `${ref} → ${r.refs[ref]}`);
  assert.equal(Object.keys(r.refs).length, 2 + 2 + 2 + 6 + 2 + 5 + 1 + 2, 'one entry per ref (the key without a ref has none)');

  const [tenant] = await tenantByName(f.tenant.name);
  assert.equal(tenant.id, r.tenantId);
  assert.match(tenant.slug, /^setup-[0-9a-f]{12}-[a-z0-9]{6}$/);
  const ana = await db.selectFrom('users').selectAll().where('tenant_id', '=', r.tenantId).where('id', '=', r.refs.ana).executeTakeFirstOrThrow();
  assert.equal(ana.name, 'Ana Souza');
  assert.equal(ana.email, f.users[0].email.trim().toLowerCase(), 'e-mails trimmed and lower-cased');

  // Keys: one secret per key (by ref, or by id when the key has no ref), only the hash stored.
  assert.equal(Object.keys(r.apiKeys).length, 3);
  const keys = await db.selectFrom('api_keys').selectAll().where('tenant_id', '=', r.tenantId).execute();
  assert.equal(keys.length, 3);
  const full = keys.find((k) => k.id === r.refs.full)!;
  assert.equal(full.key_hash, hashApiKey(r.apiKeys.full));
  assert.ok(r.apiKeys.full.startsWith(full.prefix));
  assert.equal(full.user_id, r.refs.ana);
  assert.equal(full.rate_limit, 1000);
  const ro = keys.find((k) => k.id === r.refs.ro)!;
  assert.deepEqual(parseJson(ro.scopes, []), ['contacts:read', 'deals:read']);
  assert.equal(ro.rate_limit, 100, 'default rate limit (spec 5.5)');
  assert.equal(ro.expires_at, '2030-01-01T06:00:00.000Z', 'expiry normalized to UTC');
  const anonymous = keys.find((k) => k.id !== r.refs.full && k.id !== r.refs.ro)!;
  assert.equal(anonymous.user_id, null);
  assert.ok(r.apiKeys[anonymous.id]);
  for (const k of keys) assert.ok(!JSON.stringify(k).includes(r.apiKeys.full.slice(13)), 'no secret stored');

  const api = client(t.app, r.apiKeys.full);
  assert.equal((await api.get('/tags')).status, 200);
  assert.equal((await client(t.app, r.apiKeys.ro).get('/tags')).status, 403);

  // Refs inside the file are resolved to ids: mapsTo and list filters name the property id.
  const form = await db.selectFrom('forms').selectAll().where('tenant_id', '=', r.tenantId).where('id', '=', r.refs.contact_us).executeTakeFirstOrThrow();
  const fields = parseJson<any[]>(form.fields, []);
  assert.equal(fields[0].mapsTo, 'email');
  assert.equal(fields[1].mapsTo, `customProperties.${r.refs.segment}`);
  assert.equal(fields[2].mapsTo, undefined);
  assert.equal(form.submissions_count, 0);
  const smb = await db.selectFrom('lists').selectAll().where('tenant_id', '=', r.tenantId).where('id', '=', r.refs.smb).executeTakeFirstOrThrow();
  assert.equal(parseJson<any>(smb.filters, null).conditions[0].field, `customProperties.${r.refs.segment}`);
  assert.equal(smb.kind, 'dynamic');
  const vip = await db.selectFrom('lists').selectAll().where('tenant_id', '=', r.tenantId).where('id', '=', r.refs.vip).executeTakeFirstOrThrow();
  assert.equal(vip.filters, null);
  assert.equal(vip.object_type, 'company');
  assert.equal(vip.description, 'Hand-picked');
  const reasons = await db.selectFrom('loss_reasons').selectAll().where('tenant_id', '=', r.tenantId).orderBy('name').execute();
  assert.deepEqual(
    reasons.map((x) => [x.id, x.name]),
    [
      [r.refs.price, 'Price'],
      [r.refs.timing, 'Timing'],
    ],
  );
});

test('setup: displayOrder is the array position (pipelines, stages, properties per object type)', async () => {
  const r = await applySetup(db, file());
  const pipelines = await db.selectFrom('pipelines').selectAll().where('tenant_id', '=', r.tenantId).execute();
  assert.equal(pipelines.find((p) => p.id === r.refs.sales)!.display_order, 0);
  assert.equal(pipelines.find((p) => p.id === r.refs.partners)!.display_order, 1);
  const stages = await db.selectFrom('stages').selectAll().where('tenant_id', '=', r.tenantId).execute();
  const order = (ref: string) => stages.find((s) => s.id === r.refs[ref])!;
  assert.deepEqual(
    ['lead', 'proposal', 'won', 'lost'].map((x) => order(x).display_order),
    [0, 1, 2, 3],
  );
  assert.deepEqual(
    ['p_intro', 'p_signed'].map((x) => order(x).display_order),
    [0, 1],
  );
  assert.equal(order('lead').pipeline_id, r.refs.sales);
  assert.equal(order('p_signed').pipeline_id, r.refs.partners);
  assert.equal(order('proposal').probability, 60.5);
  assert.deepEqual([order('won').is_won_stage, order('won').is_lost_stage, order('lost').is_lost_stage, order('lead').is_won_stage], [1, 0, 1, 0]);

  // contact: segment 0, birthday 1; company: employees 0, segment 1; deal: source 0.
  const props = await db.selectFrom('properties').selectAll().where('tenant_id', '=', r.tenantId).execute();
  const p = (ref: string) => props.find((x) => x.id === r.refs[ref])!;
  assert.deepEqual(
    ['segment', 'birthday', 'employees', 'company_segment', 'source'].map((x) => p(x).display_order),
    [0, 1, 0, 1, 0],
  );
  assert.equal(p('birthday').group_name, 'Personal');
  assert.equal(p('birthday').is_default_in_form, 1);
  assert.equal(p('segment').is_default_in_form, 0);
  assert.deepEqual(parseJson(p('segment').options, null), [
    { value: 'smb', label: 'SMB' },
    { value: 'ent', label: 'Enterprise' },
  ]);
  assert.equal(p('employees').options, null);

  // Through the API as well.
  const api = client(t.app, r.apiKeys.full);
  const res = await api.get('/pipelines');
  assert.equal(res.status, 200);
  {
    const list = Array.isArray(res.body) ? res.body : res.body.data;
    assert.deepEqual(
      list.map((x: any) => x.id),
      [r.refs.sales, r.refs.partners],
    );
    assert.deepEqual(
      list[0].stages.map((s: any) => s.displayOrder),
      [0, 1, 2, 3],
    );
  }
});

test('setup: exactly one default pipeline', async () => {
  const byDefault = async (f: Record<string, any>) => {
    const r = await applySetup(db, f);
    const rows = await db.selectFrom('pipelines').select(['id', 'is_default']).where('tenant_id', '=', r.tenantId).execute();
    return { r, defaults: rows.filter((x) => x.is_default === 1).map((x) => x.id) };
  };
  // None marked: the first one.
  let { r, defaults } = await byDefault(file());
  assert.deepEqual(defaults, [r.refs.sales]);
  // The second marked: only the second.
  const f = file();
  f.pipelines[1].isDefault = true;
  ({ r, defaults } = await byDefault(f));
  assert.deepEqual(defaults, [r.refs.partners]);
  // Two marked: an error naming the second.
  const two = file();
  two.pipelines[0].isDefault = true;
  two.pipelines[1].isDefault = true;
  await rejects(two, 'pipelines[1].isDefault');
  // `isDefault: false` everywhere still gives one default.
  const none = file();
  none.pipelines[0].isDefault = false;
  none.pipelines[1].isDefault = false;
  ({ r, defaults } = await byDefault(none));
  assert.deepEqual(defaults, [r.refs.sales]);
});

test('setup: user e-mails are unique within a tenant (case-insensitively) but may repeat across tenants', async () => {
  const f = file();
  const a = await applySetup(db, f);
  const b = await applySetup(db, { ...f, tenant: { name: `${f.tenant.name} B` } });
  assert.notEqual(a.tenantId, b.tenantId);
  const email = f.users[0].email.trim().toLowerCase();
  const rows = await db.selectFrom('users').select(['tenant_id']).where('email', '=', email).execute();
  assert.deepEqual(rows.map((x) => x.tenant_id).sort(), [a.tenantId, b.tenantId].sort());

  const dup = file();
  dup.users.push({ ref: 'carla', name: 'Carla', email: dup.users[1].email.toUpperCase() });
  await rejects(dup, 'users[2].email');
});

test('setup: errors name the path of the bad value, and nothing is written', async () => {
  const cases: [string, (f: any) => void, string][] = [
    ['probability over 100', (f) => (f.pipelines[0].stages[2].probability = 101), 'pipelines[0].stages[2].probability'],
    ['probability as a string', (f) => (f.pipelines[0].stages[0].probability = '10'), 'pipelines[0].stages[0].probability'],
    ['unknown field', (f) => (f.pipelines[0].stages[1].color = 'red'), 'pipelines[0].stages[1].color'],
    ['unknown top-level field', (f) => (f.webhooks = []), 'webhooks'],
    ['missing tenant', (f) => delete f.tenant, 'tenant'],
    ['blank tenant name', (f) => (f.tenant.name = ''), 'tenant.name'],
    ['bad tenant slug', (f) => (f.tenant.slug = 'Not A Slug'), 'tenant.slug'],
    ['a pipeline without stages', (f) => (f.pipelines[1].stages = []), 'pipelines[1].stages'],
    ['a stage both won and lost', (f) => (f.pipelines[0].stages[3].isWonStage = true), 'pipelines[0].stages[3].isLostStage'],
    ['bad user e-mail', (f) => (f.users[1].email = 'nope'), 'users[1].email'],
    ['duplicate ref across sections', (f) => (f.lossReasons[1].ref = 'lead'), 'lossReasons[1].ref'],
    ['duplicate ref on a key', (f) => (f.apiKeys[1].ref = 'sales'), 'apiKeys[1].ref'],
    // Keys are created inside the transaction, after the tenant, users, pipelines… were inserted: these
    // two prove the rollback (rejects() looks for the tenant, users and pipelines of the file).
    ['unknown scope', (f) => (f.apiKeys[1].scopes = ['contacts:read', 'contacts:destroy']), 'apiKeys[1].scopes[1]'],
    ['no scopes', (f) => (f.apiKeys[0].scopes = []), 'apiKeys[0].scopes'],
    ['rate limit over 1000', (f) => (f.apiKeys[0].rateLimit = 5000), 'apiKeys[0].rateLimit'],
    ['rate limit not an integer', (f) => (f.apiKeys[0].rateLimit = 1.5), 'apiKeys[0].rateLimit'],
    ['bad expiresAt', (f) => (f.apiKeys[1].expiresAt = 'tomorrow'), 'apiKeys[1].expiresAt'],
    ['key of an unknown user', (f) => (f.apiKeys[0].user = 'ghost'), 'apiKeys[0].user'],
    ['unknown object type', (f) => (f.properties[1].objectType = 'ticket'), 'properties[1].objectType'],
    ['unknown property type', (f) => (f.properties[1].type = 'money'), 'properties[1].type'],
    ['bad internal name', (f) => (f.properties[3].internalName = 'Has Spaces'), 'properties[3].internalName'],
    ['duplicate internal name in a type', (f) => (f.properties[2].internalName = 'segment'), 'properties[2].internalName'],
    ['select without options', (f) => delete f.properties[0].options, 'properties[0].options'],
    ['options on a number', (f) => (f.properties[1].options = [{ value: 'a', label: 'A' }]), 'properties[1].options'],
    ['duplicate option value', (f) => f.properties[0].options.push({ value: 'smb', label: 'Again' }), 'properties[0].options[2].value'],
    ['duplicate form field name', (f) => (f.forms[0].fields[2].name = 'email'), 'forms[0].fields[2].name'],
    ['mapsTo an unknown property', (f) => (f.forms[0].fields[1].mapsTo = 'customProperties.ghost'), 'forms[0].fields[1].mapsTo'],
    ['mapsTo a company property', (f) => (f.forms[0].fields[1].mapsTo = 'customProperties.employees'), 'forms[0].fields[1].mapsTo'],
    ['mapsTo an unknown contact field', (f) => (f.forms[0].fields[2].mapsTo = 'nickname'), 'forms[0].fields[2].mapsTo'],
    ['bad validation pattern', (f) => (f.forms[0].fields[2].validations = { pattern: '([' }), 'forms[0].fields[2].validations.pattern'],
    [
      'duplicate form slug',
      (f) => f.forms.push({ name: 'Again', slug: 'contact-us', fields: [{ name: 'x', label: 'X', type: 'text', required: false }] }),
      'forms[1].slug',
    ],
    ['unknown list kind', (f) => (f.lists[1].kind = 'smart'), 'lists[1].kind'],
    ['dynamic list without filters', (f) => delete f.lists[0].filters, 'lists[0].filters'],
    ['filters on a static list', (f) => (f.lists[1].filters = { operator: 'AND', conditions: [] }), 'lists[1].filters'],
    ['filter on an unknown field', (f) => (f.lists[0].filters.conditions[1].field = 'nope'), 'lists[0].filters.conditions[1].field'],
    ['filter on an unknown property ref', (f) => (f.lists[0].filters.conditions[0].field = 'customProperties.ghost'), 'lists[0].filters.conditions[0].field'],
    ['filter with an unknown operator', (f) => (f.lists[0].filters.conditions[1].operator = 'like'), 'lists[0].filters.conditions[1].operator'],
    ['filter value of the wrong type', (f) => (f.lists[0].filters.conditions[1].value = 'high'), 'lists[0].filters.conditions[1].value'],
  ];
  for (const [what, mutate, path] of cases) {
    const f = file();
    mutate(f);
    await rejects(f, path).catch((e) => assert.fail(`${what}: ${e.message}`));
  }
});

test('setup: a failure inside the transaction (slug taken) rolls back what was already written', async () => {
  const slug = `taken-${uniq()}`;
  const first = file();
  first.tenant.slug = slug;
  const ok = await applySetup(db, first);
  assert.equal((await tenantByName(first.tenant.name))[0].slug, slug);
  const second = file();
  second.tenant.slug = slug;
  await rejects(second, 'tenant.slug');
  // The first tenant is untouched.
  assert.equal((await db.selectFrom('users').select('id').where('tenant_id', '=', ok.tenantId).execute()).length, 2);
});

test('setup: a minimal file (tenant only) provisions an empty tenant', async () => {
  const name = `Bare ${uniq()}`;
  const r = await applySetup(db, { tenant: { name } });
  assert.deepEqual(r.refs, {});
  assert.deepEqual(r.apiKeys, {});
  assert.equal((await tenantByName(name)).length, 1);
  for (const bad of [null, [], 'x', 42]) {
    const err = await applySetup(db, bad).catch((e) => e);
    assert.ok(err instanceof AdminError);
  }
});
