// CONTRACT B.2, "only honest values": numbers are finite and strings well-formed Unicode, anywhere in a body
// (fields, custom properties, filters, batch inputs, keys) or a query, else 400 `validation_failed` naming the
// path and nothing is written; and what a write answers is exactly what every later read carries: the single
// read, the list, the search, `batch/read`, the event and the webhook body (a property test of random values).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySetup } from '../../src/admin/setup.js';
import { heldIssues, judgeJsonBody, MAX_BODY_DEPTH } from '../../src/http/body-checks.js';
import { AdminError } from '../../src/admin/keys.js';
import { loadAttemptContexts } from '../../src/modules/webhooks/webhooks.queue.js';
import { client, DIALECT, newTenant, testApp, type Client, type Tenant } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';
import { isolatedPostgresUrl } from '../helpers/webhooks-e2e.js';

// NOTE: the delivery queue is global to a database, and this file leaves pending deliveries: on PostgreSQL it
// gets a database of its own, so that no other file's worker ever attempts them.
const t = await testApp(DIALECT === 'postgres' ? { DATABASE_URL: await isolatedPostgresUrl('honest_values') } : {});

const NOT_FINITE = 'must be a finite number';
const LONE = 'must be well-formed Unicode (no lone surrogates)';

/** `field` names the one bad field, or lists every detail expected (C.5: the other invalid fields are named too). */
function assertRefused(
  r: { status: number; body: any; raw: { body: string } },
  field: string | { field: string; message: string }[],
  message: string,
  what: string,
) {
  assert.equal(r.status, 400, `${what}: ${r.raw.body.slice(0, 400)}`);
  assert.equal(r.body.error, 'validation_failed', what);
  assert.deepEqual(r.body.details, typeof field === 'string' ? [{ field, message }] : field, what);
  assert.ok(r.raw.body.isWellFormed() && !/\\ud[89a-f]/i.test(r.raw.body), `${what}: the error itself is well-formed`);
}

/** The tenant's contacts and events, to show that a refused write wrote nothing. */
async function written(api: Client): Promise<{ contacts: number; events: number }> {
  const contacts = (await api.get('/contacts?includeDeleted=true')).body.pagination.total;
  const events = (await api.get('/events?limit=1000')).body.data.length;
  return { contacts, events };
}

test('the edge names every issue in document order (at most 100), and still refuses a hostile depth past them', () => {
  const judge = (text: string) => {
    const parsed = JSON.parse(text);
    return { refused: judgeJsonBody(parsed, text), held: heldIssues(parsed) };
  };
  const text = '{"a":[1,1e309,{"\\ud800":"x"}],"b":"\\udfff","c":{"d":-1e400,"e":"ok"}}';
  assert.deepEqual(judge(text), {
    refused: null,
    held: [
      { field: 'a[1]', message: NOT_FINITE },
      { field: 'a[2].\ufffd', message: LONE },
      { field: 'b', message: LONE },
      { field: 'c.d', message: NOT_FINITE },
    ],
  });
  assert.deepEqual(judge('{"a":1,"b":"\\u00e9\\ud83d\\ude00"}'), { refused: null, held: undefined });
  const many = `{"v":[${Array(300).fill('1e309').join(',')}]}`;
  assert.equal(judge(many).held!.length, 100);
  const deep = '['.repeat(MAX_BODY_DEPTH + 5) + ']'.repeat(MAX_BODY_DEPTH + 5);
  for (const hostile of [`{"v":[${Array(300).fill('1e309').join(',')}],"w":${deep}}`, `{"\\ud800":${deep}}`]) {
    const r = judge(hostile);
    assert.equal(r.refused?.length, 1, hostile.slice(0, 40));
    assert.match(r.refused![0].message, /nested too deeply/);
  }
  // A body that is not an object or array is refused at once (nothing can hold its issues).
  assert.deepEqual(judge('1e309').refused, [{ field: '(body)', message: NOT_FINITE }]);
});

test('a number that is not finite is 400 naming its path, wherever it is in a body, and nothing is written', async () => {
  const ten = await newTenant(t);
  const { api, refs } = ten;
  const c = (await api.post('/contacts', { firstName: 'Kept', score: 5, customProperties: { [refs.contact_number]: 1 } })).body;
  const before = await written(api);
  const num = refs.contact_number;
  const filter = (value: string) =>
    `{"filters":{"operator":"AND","conditions":[{"field":"firstName","operator":"eq","value":"x"},{"field":"score","operator":"gte","value":${value}}]}}`;
  const ok = (i: number) => `{"firstName":"B${i}"}`;
  const both = [
    { field: 'score', message: NOT_FINITE },
    { field: 'email', message: 'must be a valid e-mail address' },
  ];
  const cases: [string, string, string, string | typeof both][] = [
    ['POST', '/contacts', '{"firstName":"A","lastName":"B","email":"x@honest.example","score":1e309}', 'score'],
    ['POST', '/contacts', '{"firstName":"A","lastName":"B","email":"x@y.z","score":1e309}', both],
    [
      'POST',
      '/contacts',
      '{"firstName":"A","score":1e309,"customProperties":{"x":1e309}}',
      [
        { field: 'score', message: NOT_FINITE },
        { field: 'customProperties.x', message: NOT_FINITE },
      ],
    ],
    ['POST', '/contacts', '{"firstName":"A","score":-1e309}', 'score'],
    ['POST', '/contacts', '{"firstName":"A","score":1E+400}', 'score'],
    ['POST', '/contacts', `{"firstName":"A","score":1${'0'.repeat(309)}}`, 'score'],
    ['POST', '/contacts', `{"firstName":"A","score":-${'9'.repeat(400)}.5}`, 'score'],
    ['POST', '/contacts', `{"firstName":"A","customProperties":{"${num}":1e309}}`, `customProperties.${num}`],
    ['PATCH', `/contacts/${c.id}`, '{"score":1e309}', 'score'],
    ['PATCH', `/contacts/${c.id}`, '{"score":-1e309}', 'score'],
    ['PATCH', `/contacts/${c.id}`, `{"customProperties":{"${num}":-1e999}}`, `customProperties.${num}`],
    ['POST', '/contacts/search', filter('1e309'), 'filters.conditions[1].value'],
    [
      'POST',
      '/contacts/search',
      '{"filters":{"operator":"OR","conditions":[{"field":"score","operator":"in","value":[1,2,-1e309]}]}}',
      'filters.conditions[0].value[2]',
    ],
    ['POST', '/contacts/batch/create', `{"inputs":[${ok(0)},${ok(1)},${ok(2)},{"firstName":"C","score":1e309}]}`, 'inputs[3].score'],
    ['POST', '/contacts/batch/update', `{"inputs":[{"id":"${c.id}","score":1e309}]}`, 'inputs[0].score'],
    ['POST', '/contacts/batch/upsert', `{"idProperty":"email","inputs":[{"firstName":"U","email":"u@x.test","score":1e309}]}`, 'inputs[0].score'],
    ['POST', '/deals', `{"title":"D","pipelineId":"${refs.sales}","stageId":"${refs.lead}","value":1e309}`, 'value'],
    ['POST', '/companies', `{"name":"Co","customProperties":{"${refs.company_number}":1e309}}`, `customProperties.${refs.company_number}`],
    [
      'POST',
      '/proposals',
      `{"subject":"S","items":[{"name":"a","qty":1,"rate":1},{"name":"b","qty":1,"rate":1},{"name":"c","qty":1,"rate":1e309}]}`,
      'items[2].rate',
    ],
  ];
  for (const [method, url, body, field] of cases) {
    const r = method === 'POST' ? await api.post(url, body) : await api.patch(url, body);
    assertRefused(r, field, NOT_FINITE, `${method} ${url} ${body.slice(0, 120)}`);
  }
  assert.deepEqual(await written(api), before, 'nothing written');
  const kept = (await api.get(`/contacts/${c.id}`)).body;
  assert.equal(kept.score, 5);
  assert.deepEqual(kept.customProperties, { [num]: 1 });
  assert.equal((await api.get('/companies')).body.pagination.total, 0);
  assert.equal((await api.get('/proposals')).body.pagination.total, 0);
});

test('a route without a body schema refuses such a body too (the value is never judged by a schema there)', async () => {
  const { api } = await newTenant(t);
  const hook = (await api.post('/webhooks', { name: 'h', url: 'https://hooks.example.com/x', events: ['contact.created'] })).body;
  const before = (await api.get(`/webhooks/${hook.id}`)).body;
  assertRefused(await api.post(`/webhooks/${hook.id}/rotate-secret`, '{"reason":1e309}'), 'reason', NOT_FINITE, 'rotate-secret');
  assertRefused(await api.post(`/webhooks/${hook.id}/rotate-secret`, '{"reason":"\\ud800"}'), 'reason', LONE, 'rotate-secret');
  assert.deepEqual((await api.get(`/webhooks/${hook.id}`)).body, before, 'not rotated');
  assert.equal((await api.post(`/webhooks/${hook.id}/rotate-secret`, '{"reason":"fine"}')).status, 200);
});

test('a query value parsed to a number that is not finite is 400 naming the parameter', async () => {
  const { api } = await newTenant(t);
  for (const [url, field] of [
    ['/contacts?page=1e309', 'page'],
    ['/contacts?page=1%65309', 'page'],
    ['/deals?valueMin=1e309', 'valueMin'],
    ['/deals?valueMax=-1e309', 'valueMax'],
    ['/proposals?page=1e999', 'page'],
  ] as const) {
    const r = await api.get(url);
    assert.equal(r.status, 400, `${url}: ${r.raw.body}`);
    assert.equal(r.body.error, 'validation_failed', url);
    assert.deepEqual(r.body.details, [{ field, message: NOT_FINITE }], url);
  }
  // Finite values of the same parameters still work.
  assert.equal((await api.get('/contacts?page=1e0')).status, 200);
  assert.equal((await api.get('/deals?valueMin=1e300')).status, 200);
});

test('a lone surrogate is 400 naming the field or the key, and nothing is written', async () => {
  const { api, refs } = await newTenant(t);
  const c = (await api.post('/contacts', { firstName: 'Kept', lastName: 'Same', customProperties: { [refs.contact_text]: 'same' } })).body;
  const before = await written(api);
  const text = refs.contact_text;
  const unknown = (field: string) => [
    { field, message: LONE },
    { field, message: 'is not a known field' },
  ];
  const cases: [string, string, string, string | ReturnType<typeof unknown>][] = [
    ['POST', '/contacts', '{"firstName":"\\ud800x"}', 'firstName'],
    ['POST', '/contacts', '{"firstName":"A","lastName":"x\\uDFFF"}', 'lastName'],
    ['POST', '/contacts', '{"firstName":"A","lastName":"\\ude00\\ud83d"}', 'lastName'],
    ['POST', '/contacts', '{"firstName":"A","lastName":"\\ud83d\\ud83d\\ude00"}', 'lastName'],
    ['POST', '/contacts', '{"firstName":"A","\\ud800x":1}', unknown('\ufffdx')],
    ['POST', '/contacts', `{"firstName":"A","customProperties":{"\\ud800x":"v"}}`, 'customProperties.\ufffdx'],
    ['POST', '/contacts', `{"firstName":"A","customProperties":{"${text}":"a\\udc00b"}}`, `customProperties.${text}`],
    ['POST', '/contacts', '{"firstName":"A","tags":["\\ud800x"]}', 'tags[0]'],
    ['PATCH', `/contacts/${c.id}`, '{"lastName":"\\ud800x"}', 'lastName'],
    ['PATCH', `/contacts/${c.id}`, `{"customProperties":{"${text}":"\\udbff"}}`, `customProperties.${text}`],
    [
      'POST',
      '/contacts/search',
      '{"filters":{"operator":"AND","conditions":[{"field":"firstName","operator":"contains","value":"\\ud800"}]}}',
      'filters.conditions[0].value',
    ],
    ['POST', '/contacts/batch/create', '{"inputs":[{"firstName":"ok"},{"firstName":"\\ud800x"}]}', 'inputs[1].firstName'],
    ['POST', '/tags', '{"name":"\\ud800x"}', 'name'],
  ];
  for (const [method, url, body, field] of cases) {
    const r = method === 'POST' ? await api.post(url, body) : await api.patch(url, body);
    assertRefused(r, field, LONE, `${method} ${url} ${body}`);
  }
  assert.deepEqual(await written(api), before, 'nothing written');
  const kept = (await api.get(`/contacts/${c.id}`)).body;
  assert.deepEqual([kept.lastName, kept.customProperties], ['Same', { [text]: 'same' }]);
  assert.equal((await api.get('/tags')).body.length, 0);
});

test('well-formed text passes: escaped pairs, astral characters, and raw invalid UTF-8 (read as U+FFFD)', async () => {
  const { api } = await newTenant(t);
  const escaped = await api.post('/contacts', '{"firstName":"\\ud83d\\ude00 \\uD834\\uDD1E \\uFFFD \\uffff","lastName":"\\\\ud800"}');
  assert.equal(escaped.status, 201, escaped.raw.body);
  assert.equal(escaped.body.firstName, '😀 𝄞 \ufffd \uffff');
  assert.equal(escaped.body.lastName, '\\ud800', 'an escaped backslash is text, not a surrogate');
  assert.deepEqual((await api.get(`/contacts/${escaped.body.id}`)).body, escaped.body);
  // The UTF-8 bytes a lone surrogate would have (ED A0 80) are invalid UTF-8: the body's decoding makes them
  // U+FFFD before JSON.parse, so they are stored and read back as such, never as a lone surrogate.
  const raw = Buffer.concat([Buffer.from('{"firstName":"x'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('y"}')]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/contacts',
    payload: raw,
    headers: { 'x-api-key': api.key, 'content-type': 'application/json' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const created = JSON.parse(res.body);
  assert.ok(created.firstName.isWellFormed());
  assert.match(created.firstName, /^x\ufffd+y$/);
  assert.deepEqual((await api.get(`/contacts/${created.id}`)).body, created);
  // A query value: `%ED%A0%80` does not decode (invalid UTF-8), so it is searched as the text it is.
  const q = await api.get('/contacts?search=%ED%A0%80');
  assert.equal(q.status, 200);
  assert.ok(q.raw.body.isWellFormed());
});

test('-0 is 0 in the answer and in every read, on both databases', async () => {
  const { api, refs } = await newTenant(t);
  const num = refs.contact_number;
  for (const spelled of ['-0', '-0.0', '-0e5', '-0.000E-3', '-1e-400', `-0.${'0'.repeat(400)}1`]) {
    const r = await api.post('/contacts', `{"firstName":"Z","score":${spelled},"customProperties":{"${num}":${spelled}}}`);
    assert.equal(r.status, 201, `${spelled}: ${r.raw.body}`);
    assert.ok(Object.is(r.body.score, 0) && Object.is(r.body.customProperties[num], 0), spelled);
    const read = await api.get(`/contacts/${r.body.id}`);
    assert.deepStrictEqual(read.body, r.body, spelled);
    assert.doesNotMatch(read.raw.body, /-0\b/, spelled);
    const p = await api.patch(`/contacts/${r.body.id}`, `{"score":1,"customProperties":{"${num}":2}}`);
    assert.equal(p.status, 200);
    const back = await api.patch(`/contacts/${r.body.id}`, `{"score":${spelled}}`);
    assert.ok(Object.is(back.body.score, 0), spelled);
    assert.deepStrictEqual((await api.get(`/contacts/${r.body.id}`)).body, back.body, spelled);
  }
});

test('a public form: a number that is not finite is refused as JSON and as urlencoded text, nothing written', async () => {
  const setup = STANDARD_SETUP();
  setup.forms.push({
    ref: 'nums',
    name: 'Nums',
    slug: 'nums',
    fields: [
      { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
      { name: 'n', label: 'N', type: 'number', required: false, mapsTo: 'customProperties.contact_number' },
    ],
  });
  const ten = await newTenant(t, setup);
  const form = (await ten.api.get('/forms')).body.find((f: any) => f.slug === 'nums');
  const path = new URL(form.embedUrl).pathname;
  const pub = client(t.app, undefined);
  assertRefused(await pub.post(path, '{"email":"a@honest.example","n":1e309}'), 'n', NOT_FINITE, 'JSON');
  const page = await pub.post(path, 'email=a%40honest.example&n=1e309', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(page.status, 400);
  assert.match(page.raw.body, /must be a finite number/);
  assert.equal((await ten.api.get(`/forms/${ten.refs.nums}`)).body.submissionsCount, 0);
  assert.equal((await ten.api.get('/contacts')).body.pagination.total, 0);
});

test('a setup file with a number that is not finite or a lone surrogate changes nothing and names the path', async () => {
  const cases: [(s: Record<string, any>) => void, string, string][] = [
    [(s) => (s.pipelines[0].stages[1].probability = Infinity), 'pipelines[0].stages[1].probability', NOT_FINITE],
    [(s) => (s.forms[0].fields[1].validations = { min: -Infinity }), 'forms[0].fields[1].validations.min', NOT_FINITE],
    [(s) => (s.tenant.name = 'Acme \ud800'), 'tenant.name', LONE],
    [(s) => (s.users[1].name = '\udfff'), 'users[1].name', LONE],
  ];
  for (const [change, path, message] of cases) {
    const setup = STANDARD_SETUP();
    change(setup);
    await assert.rejects(applySetup(t.database.db, setup), (err: unknown) => {
      assert.ok(err instanceof AdminError, String(err));
      assert.equal(err.message, `${path}: ${message}`);
      return true;
    });
  }
});

// ------------------------------------------------------------------------------------------------
// The property test: random valid values, written and read back every way.

/** mulberry32: a small seeded PRNG, so that a failure can be replayed with its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const u32 = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return (x ^ (x >>> 14)) >>> 0;
  };
  const int = (n: number) => u32() % n;
  return { u32, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)], chance: (p: number) => u32() / 2 ** 32 < p };
}
type Rng = ReturnType<typeof prng>;

const SEED = Number(process.env.HONEST_SEED ?? 4747);
const ROUNDS = 40;

// Characters of every kind a name may hold: accents, combining marks, other scripts, astral characters (emoji,
// musical symbols, flags, ZWJ sequences), noncharacters, quotes and backslashes, separators JSON escapes.
const CHARS = [
  'a',
  'Z',
  '7',
  ' ',
  'é',
  'ã',
  'ç',
  'ß',
  'Ω',
  'Ж',
  'ع',
  '漢',
  '字',
  '😀',
  '𝄞',
  '👩‍💻',
  '🇧🇷',
  'e\u0301',
  '"',
  '\\',
  '/',
  '\u2028',
  '\u2029',
  '\t',
  '<',
  '&',
  "'",
  '\u00a0',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\u{10ffff}',
  '\u0001',
  '\u007f',
  'İ',
  'ﬁ',
];
const SPECIAL_NUMBERS = [
  1.7976931348623157e308,
  -1.7976931348623157e308,
  5e-324,
  -5e-324,
  2.2250738585072014e-308,
  2 ** 53 + 2,
  -(2 ** 63),
  2 ** 60,
  12345678901234567890,
  0.1 + 0.2,
  1e21,
  1e-7,
  0,
  -0,
  1 / 3,
  72,
  99.5,
];

function text(r: Rng, max: number, newlines = false): string {
  let s = r.pick(['A', 'é', '漢', '😀', 'Ж']);
  const n = r.int(max);
  for (let i = 0; i < n; i++) s += newlines && r.chance(0.1) ? '\n' : r.pick(CHARS);
  return s;
}

function double(r: Rng): number {
  if (r.chance(0.3)) return r.pick(SPECIAL_NUMBERS);
  if (r.chance(0.3)) return r.int(201) - 100;
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, r.u32());
  view.setUint32(4, r.u32());
  const n = view.getFloat64(0);
  return Number.isFinite(n) ? n : 0.5;
}

/** A number spelled as a client may spell it; every spelling parses to the same double. */
function spell(r: Rng, n: number): string {
  if (Object.is(n, -0)) return r.pick(['-0', '-0.0', '-0e7', '-0.00E-2']);
  return r.pick([JSON.stringify(n), n.toExponential(), n.toPrecision(17), n.toExponential().toUpperCase()]);
}

/** JSON text of `v` with its numbers spelled at random and, at random, every non-ASCII character escaped. */
function toJson(r: Rng, v: unknown): string {
  if (typeof v === 'number') return spell(r, v);
  if (typeof v === 'string') {
    const s = JSON.stringify(v);
    return r.chance(0.5) ? s : s.replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => toJson(r, x)).join(',')}]`;
  return `{${Object.entries(v)
    .map(([k, x]) => `${JSON.stringify(k)}:${toJson(r, x)}`)
    .join(',')}}`;
}

function customProperties(r: Rng, refs: Record<string, string>, patch: boolean): Record<string, unknown> {
  const day = () => `20${10 + r.int(80)}-${String(1 + r.int(12)).padStart(2, '0')}-${String(1 + r.int(28)).padStart(2, '0')}`;
  const values: Record<string, () => unknown> = {
    text: () => text(r, 40),
    textarea: () => text(r, 60, true),
    email: () => `Pessoa.${r.int(1000)}@Exemplo.COM.br`,
    phone: () => r.pick(['(11) 98765-4321', '+1 202 555 0123', '21 3333-4444']),
    url: () => `https://example.com/${r.int(1000)}?q=${r.int(9)}`,
    number: () => double(r),
    date: day,
    datetime: () => `${day()}T${String(r.int(24)).padStart(2, '0')}:${String(r.int(60)).padStart(2, '0')}:00.${r.int(10)}${r.pick(['Z', '-03:00', '+05:30'])}`,
    select: () => r.pick(['smb', 'ent']),
    multi_select: () => r.pick([[], ['smb'], ['ent'], ['ent', 'smb']]),
    boolean: () => r.chance(0.5),
  };
  const out: Record<string, unknown> = {};
  for (const [type, make] of Object.entries(values)) {
    if (r.chance(0.5)) continue;
    out[refs[`contact_${type}`]] = patch && r.chance(0.25) ? null : make();
  }
  return out;
}

function contactInput(r: Rng, ten: Tenant, tags: string[], i: number): Record<string, unknown> {
  const input: Record<string, unknown> = { firstName: text(r, 20), email: `HV${SEED}n${i}z@Honest.TEST` };
  if (r.chance(0.7)) input.lastName = r.chance(0.2) ? null : text(r, 20);
  if (r.chance(0.8)) input.score = r.chance(0.1) ? null : double(r);
  if (r.chance(0.5)) input.ownerId = r.pick([ten.refs.ana, ten.refs.bruno, null]);
  if (r.chance(0.5)) input.tags = tags.filter(() => r.chance(0.5));
  if (r.chance(0.3)) input.phone = `+55119${String(10_000_000 + i * 7919).slice(0, 8)}`;
  input.customProperties = customProperties(r, ten.refs, false);
  return input;
}

function patchInput(r: Rng, ten: Tenant, tags: string[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  if (r.chance(0.4)) input.firstName = text(r, 20);
  if (r.chance(0.4)) input.lastName = r.chance(0.3) ? null : text(r, 20);
  if (r.chance(0.7)) input.score = r.chance(0.15) ? null : double(r);
  if (r.chance(0.3)) input.ownerId = r.pick([ten.refs.ana, null]);
  if (r.chance(0.3)) input.tags = tags.filter(() => r.chance(0.5));
  if (r.chance(0.7)) input.customProperties = customProperties(r, ten.refs, true);
  return input;
}

/** The score a write answers for the one it was sent: the same double, -0 as 0, none as null. */
const sent = (score: unknown) => (score === undefined || score === null ? null : (score as number) + 0);

interface Reader {
  ten: Tenant;
  /** The last event seen: each write's events are read after it. */
  lastEvent?: string;
}

/** The events (and their webhook bodies) a write raised; its answer must be each one's record. */
async function assertEvents(rd: Reader, answer: any, previous: any, what: string) {
  const { api, tenantId } = rd.ten;
  const page = await api.get(`/events?types=contact.created,contact.updated&limit=10${rd.lastEvent ? `&after=${rd.lastEvent}` : ''}`);
  assert.equal(page.status, 200, what);
  const events = page.body.data as any[];
  if (events.length === 0) {
    assert.deepStrictEqual(answer, previous, `${what}: no event, so nothing changed`);
    return;
  }
  assert.equal(events.length, 1, what);
  const [event] = events;
  rd.lastEvent = event.id;
  assert.deepStrictEqual(event.data.contact, answer, `${what}: GET /events`);
  // The webhook body is the event's stored payload, loaded as the worker loads it for an attempt.
  const db = t.database.db;
  const deliveries = await db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', tenantId).where('event_id', '=', event.id).execute();
  assert.equal(deliveries.length, 1, `${what}: one delivery`);
  const payload = (await loadAttemptContexts(db, deliveries)).get(deliveries[0].id)!.payload!;
  assert.ok(payload.isWellFormed(), `${what}: the webhook body is well-formed`);
  const body = JSON.parse(payload);
  assert.deepStrictEqual(body.data.contact, answer, `${what}: the webhook body`);
  assert.deepStrictEqual(body.data, event.data, `${what}: the webhook body's data is the event's`);
}

/** Every read of the contact answers exactly what its write answered. */
async function assertReads(rd: Reader, answer: any, what: string) {
  const { api } = rd.ten;
  const single = await api.get(`/contacts/${answer.id}`);
  assert.ok(single.raw.body.isWellFormed(), what);
  assert.deepStrictEqual(single.body, answer, `${what}: GET /contacts/:id`);
  const listed = await api.get(`/contacts?search=${encodeURIComponent(answer.email)}`);
  assert.deepStrictEqual(
    listed.body.data.filter((c: any) => c.id === answer.id),
    [answer],
    `${what}: GET /contacts`,
  );
  const sorted = await api.get(`/contacts?sortKey=score&sortOrder=desc&pageSize=100`);
  assert.deepStrictEqual(
    sorted.body.data.filter((c: any) => c.id === answer.id),
    [answer],
    `${what}: GET /contacts by score`,
  );
  const searched = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field: 'id', operator: 'eq', value: answer.id }] } });
  assert.deepStrictEqual(searched.body.data, [answer], `${what}: POST /contacts/search`);
  if (answer.score !== null) {
    const byScore = await api.post('/contacts/search', {
      filters: {
        operator: 'AND',
        conditions: [
          { field: 'score', operator: 'eq', value: answer.score },
          { field: 'id', operator: 'eq', value: answer.id },
        ],
      },
    });
    assert.deepStrictEqual(byScore.body.data, [answer], `${what}: POST /contacts/search by its own score`);
  }
  const batch = await api.post('/contacts/batch/read', { ids: [answer.id] });
  assert.deepStrictEqual(batch.body, { results: [answer], missing: [] }, `${what}: POST /contacts/batch/read`);
}

test(`property: random valid values read back exactly as written, every way (seed ${SEED}, ${DIALECT})`, async () => {
  const r = prng(SEED);
  const ten = await newTenant(t);
  const { api } = ten;
  const hook = await api.post('/webhooks', { name: 'honest', url: 'https://hooks.example.com/crm', events: ['contact.created', 'contact.updated'] });
  assert.equal(hook.status, 201, hook.raw.body);
  const tags: string[] = [];
  for (const name of ['Ação 😀', 'VIP 𝄞', 'tag "q" \\']) tags.push((await api.post('/tags', { name })).body.id);
  const rd: Reader = { ten };
  rd.lastEvent = (await api.get('/events?limit=1000')).body.data.at(-1)?.id;

  for (let i = 0; i < ROUNDS; i++) {
    const input = contactInput(r, ten, tags, i);
    const raw = toJson(r, input);
    const what = `seed ${SEED} round ${i} create ${raw}`;
    let answer: any;
    if (r.chance(0.25)) {
      const res = await api.post('/contacts/batch/create', `{"inputs":[${raw}]}`);
      assert.equal(res.status, 200, `${what}: ${res.raw.body}`);
      answer = res.body.results[0].record;
    } else {
      const res = await api.post('/contacts', raw);
      assert.equal(res.status, 201, `${what}: ${res.raw.body}`);
      answer = res.body;
    }
    assert.ok(Object.is(answer.score, sent(input.score)), `${what}: the score is the value sent (-0 as 0)`);
    await assertEvents(rd, answer, undefined, what);
    await assertReads(rd, answer, what);

    for (let k = 0; k < 2; k++) {
      const patch = patchInput(r, ten, tags);
      const rawPatch = toJson(r, patch);
      const pwhat = `seed ${SEED} round ${i} patch ${k} ${rawPatch}`;
      let updated: any;
      if (r.chance(0.25)) {
        const res = await api.post('/contacts/batch/update', `{"inputs":[{"id":${JSON.stringify(answer.id)},${rawPatch.slice(1)}]}`.replace(',}]}', '}]}'));
        assert.equal(res.status, 200, `${pwhat}: ${res.raw.body}`);
        updated = res.body.results[0].record;
      } else {
        const res = await api.patch(`/contacts/${answer.id}`, rawPatch);
        assert.equal(res.status, 200, `${pwhat}: ${res.raw.body}`);
        updated = res.body;
      }
      if (patch.score !== undefined) assert.ok(Object.is(updated.score, sent(patch.score)), pwhat);
      await assertEvents(rd, updated, answer, pwhat);
      await assertReads(rd, updated, pwhat);
      answer = updated;
    }
  }
});
