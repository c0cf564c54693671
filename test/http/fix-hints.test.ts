// Errors that say how to fix them: the closest known field or value of an unknown one, JSON types in plain
// words, and `docUrl` to the error's section of the reference page on every error body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { ApiError, ERROR_CODES, errorBody, errorDocUrl, errors } from '../../src/errors.js';
import { clientErrorHandler } from '../../src/plugins/errors.js';
import { closestName, typeMessage } from '../../src/http/suggest.js';
import { client, newTenant, testApp } from '../helpers/app.js';

const t = await testApp();
const hint = (name: string) => `is not a known field; did you mean "${name}"?`;

test('an unknown body field names the closest known one, in message and details', async () => {
  const { api } = await newTenant(t);
  for (const [typed, meant] of [
    ['last_name', 'lastName'],
    ['last-name', 'lastName'],
    ['LastName', 'lastName'],
    ['emial', 'email'],
    ['scor', 'score'],
    ['phnoe', 'phone'],
    ['custom_properties', 'customProperties'],
  ]) {
    const r = await api.post('/contacts', { firstName: 'Ana', [typed]: 'x' });
    assert.equal(r.status, 400, typed);
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.message, `${typed} ${hint(meant)}`);
    assert.deepEqual(r.body.details, [{ field: typed, message: hint(meant), suggestion: meant }]);
  }
  // `first_name` → `firstName` on a create, where `firstName` is missing too.
  const r = await api.post('/contacts', { first_name: 'Ana' });
  assert.deepEqual(
    r.body.details.find((d: any) => d.field === 'first_name'),
    { field: 'first_name', message: hint('firstName'), suggestion: 'firstName' },
  );
});

test('an unknown field that resembles nothing keeps the plain message and no suggestion', async () => {
  const { api } = await newTenant(t);
  for (const typed of ['zzqx', 'banana', 'q', 'xyzzy_plugh']) {
    const r = await api.post('/contacts', { firstName: 'Ana', [typed]: 1 });
    assert.equal(r.status, 400, typed);
    assert.deepEqual(r.body.details, [{ field: typed, message: 'is not a known field' }], typed);
    assert.equal(r.body.message, `${typed} is not a known field`);
  }
  // Read-only fields keep their own message.
  assert.deepEqual((await api.post('/contacts', { firstName: 'Ana', createdAt: 'x' })).body.details, [{ field: 'createdAt', message: 'is read-only' }]);
});

test('an unknown nested field names the closest field of its own object', async () => {
  const { api } = await newTenant(t);
  const r = await api.post('/proposals', { subject: 'Licenses', items: [{ name: 'CRM', discount_pct: 5 }] });
  assert.equal(r.status, 400);
  const d = r.body.details.find((x: any) => x.field === 'items[0].discount_pct');
  assert.deepEqual(d, { field: 'items[0].discount_pct', message: hint('discountPct'), suggestion: 'discountPct' });
});

test('an unknown query parameter and an unknown sortKey name the closest known one', async () => {
  const { api } = await newTenant(t);
  const sort = await api.get('/contacts?sort=firstName');
  assert.equal(sort.status, 400);
  assert.equal(sort.body.message, `query parameter sort ${hint('sortKey')}`);
  assert.deepEqual(sort.body.details, [{ field: 'sort', message: hint('sortKey'), suggestion: 'sortKey' }]);
  const size = await api.get('/contacts?page_size=10');
  assert.deepEqual(size.body.details, [{ field: 'page_size', message: hint('pageSize'), suggestion: 'pageSize' }]);

  const key = await api.get('/contacts?sortKey=first_name');
  assert.equal(key.status, 400);
  const allowed = 'must be one of createdAt, updatedAt, firstName, lastName, email, score';
  assert.deepEqual(key.body.details, [{ field: 'sortKey', message: `${allowed}; did you mean "firstName"?`, suggestion: 'firstName' }]);
  assert.equal(key.body.message, `query parameter sortKey ${allowed}; did you mean "firstName"?`);
  // Deals declare their sort keys as an enum: the same hint.
  const deals = await api.get('/deals?sortKey=valu');
  assert.equal(deals.status, 400);
  assert.equal(deals.body.details[0].suggestion, 'value');
  // Nonsense gets the list alone.
  assert.deepEqual((await api.get('/contacts?sortKey=zzz')).body.details, [{ field: 'sortKey', message: allowed }]);
});

test('closestName: folding, edit distance, prefixes and a threshold for nonsense', () => {
  const fields = ['firstName', 'lastName', 'email', 'phone', 'sortKey', 'sortOrder', 'pageSize'];
  assert.equal(closestName('first_name', fields), 'firstName');
  assert.equal(closestName('FIRST-NAME', fields), 'firstName');
  assert.equal(closestName('frstName', fields), 'firstName');
  assert.equal(closestName('sort', fields), 'sortKey');
  assert.equal(closestName('sort_order', fields), 'sortOrder');
  assert.equal(closestName('phnoe', fields), 'phone');
  for (const nonsense of ['zzzz', 'x', '', 'company', 'tags', 'qwertyuiop']) assert.equal(closestName(nonsense, fields), undefined, nonsense);
});

test('type failures in plain words, for every JSON type', () => {
  assert.equal(typeMessage('string'), 'must be a string');
  assert.equal(typeMessage('number'), 'must be a number');
  assert.equal(typeMessage('integer'), 'must be an integer');
  assert.equal(typeMessage('boolean'), 'must be true or false');
  assert.equal(typeMessage('null'), 'must be null');
  assert.equal(typeMessage('object'), 'must be an object');
  assert.equal(typeMessage('array'), 'must be an array');
  assert.equal(typeMessage(['number', 'null']), 'must be a number or null');
  assert.equal(typeMessage('number,null'), 'must be a number or null');
  assert.equal(typeMessage(['string', 'null']), 'must be a string or null');
  assert.equal(typeMessage(['boolean', 'null']), 'must be true, false or null');
  assert.equal(typeMessage(['string', 'number', 'null']), 'must be a string, a number or null');
  for (const [items, words] of [
    ['string', 'strings'],
    ['number', 'numbers'],
    ['integer', 'integers'],
    ['object', 'objects'],
    ['array', 'arrays'],
    ['boolean', 'true or false values'],
  ]) {
    assert.equal(typeMessage('array', { type: 'array', items: { type: items } }), `must be an array of ${words}`);
  }
  assert.equal(typeMessage(['array', 'null'], { items: { type: 'string' } }), 'must be an array of strings or null');
});

test('type failures through HTTP read in plain words', async () => {
  const { api } = await newTenant(t);
  const details = async (r: Promise<{ body: any }>) => (await r).body.details;
  assert.deepEqual(await details(api.post('/contacts', { firstName: 'Ana', score: '7' })), [{ field: 'score', message: 'must be a number or null' }]);
  assert.equal((await api.post('/contacts', { firstName: 'Ana', score: '7' })).body.message, 'score must be a number or null');
  assert.deepEqual(await details(api.post('/contacts', { firstName: 42 })), [{ field: 'firstName', message: 'must be a string' }]);
  assert.deepEqual(await details(api.post('/contacts', { firstName: 'Ana', tags: 'vip' })), [{ field: 'tags', message: 'must be an array of strings' }]);
  assert.deepEqual(await details(api.post('/contacts', { firstName: 'Ana', tags: [1] })), [{ field: 'tags[0]', message: 'must be a string' }]);
  assert.deepEqual(await details(api.post('/tags', ['x'])), [{ field: '', message: 'must be an object' }]);
  const hook = { name: 'h', url: 'https://example.com/h', events: ['contact.created'], isActive: 'yes' };
  assert.deepEqual(await details(api.post('/webhooks', hook)), [{ field: 'isActive', message: 'must be true or false' }]);
  assert.deepEqual(await details(api.get('/contacts?page=abc')), [{ field: 'page', message: 'must be an integer' }]);
});

test('every error code has a docUrl to its own section of the reference page', () => {
  const codes = Object.keys(ERROR_CODES);
  assert.ok(codes.length >= 35);
  const urls = new Set<string>();
  for (const [code, status] of Object.entries(ERROR_CODES)) {
    const url = errorDocUrl(code);
    assert.equal(url, `/docs#description/${code}`);
    urls.add(url);
    const body = errorBody(new ApiError(status, code, 'm', { field: 'x' }));
    assert.deepEqual(body, { error: code, message: 'm', field: 'x', docUrl: url });
  }
  assert.equal(urls.size, codes.length);
  // The catalogue's own errors are in the list, with their status.
  const made = [
    errors.validation([{ field: 'a', message: 'b' }]),
    errors.invalidFormat('a', 'b'),
    errors.invalidStatus('m'),
    errors.notFound('m'),
    errors.refNotFound('companyId', 'x'),
    errors.duplicateProposalForDeal('p'),
    errors.concurrentUpdate(),
    errors.businessRule('m'),
    errors.idempotencyKeyReused(),
    errors.idempotencyKeyInUse(),
    errors.invalidCursor('m'),
    errors.queryTimeout(1),
    errors.tooManyQueries(1),
    errors.tooManyWaiting('key', 1),
    errors.databaseUnavailable(),
    errors.queryAbandoned(),
    errors.forbidden(),
  ];
  for (const e of made) {
    assert.equal(ERROR_CODES[e.code], e.statusCode, e.code);
    assert.equal(errorBody(e).docUrl, `/docs#description/${e.code}`);
  }
});

test('error answers through HTTP carry docUrl (the response schema keeps it)', async () => {
  const tenant = await newTenant(t);
  const { api } = tenant;
  const expect = async (r: Promise<{ status: number; body: any }>, status: number, code: string) => {
    const res = await r;
    assert.equal(res.status, status, code);
    assert.equal(res.body.error, code);
    assert.equal(res.body.docUrl, `/docs#description/${code}`, code);
    assert.equal(ERROR_CODES[code], status, code);
  };
  await expect(api.post('/contacts', { firstName: 'Ana', first_name: 'x' }), 400, 'validation_failed');
  await expect(api.post('/tags', '{"name":'), 400, 'invalid_json');
  await expect(api.post('/tags', 'name=x', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
  await expect(api.post('/tags', { name: 'x'.repeat(1024 * 1024 + 10) }), 413, 'payload_too_large');
  await expect(api.get('/nothing-here'), 404, 'not_found');
  await expect(api.get('/contacts/ct_missing'), 404, 'not_found');
  await expect(api.get('/contacts?cursor=garbage'), 400, 'invalid_cursor');
  await expect(client(t.app, undefined).get('/contacts'), 401, 'missing_api_key');
  await expect(client(t.app, 'crm_live_nope').get('/contacts'), 401, 'invalid_api_key');
  await expect(tenant.as('ro').post('/contacts', { firstName: 'Ana' }), 403, 'insufficient_scope');
  assert.equal((await api.post('/tags', { name: 'VIP' })).status, 201);
  await expect(api.post('/tags', { name: 'VIP' }), 409, 'duplicate_name');
  await expect(api.post('/webhooks', { name: 'h', url: 'http://example.com/h', events: ['contact.created'] }), 400, 'invalid_url');
  await expect(api.post('/webhooks', { name: 'h', url: 'https://example.com/h', events: ['nope.nothing'] }), 400, 'invalid_event');
  // A batch's failed item carries the body the single call answers, docUrl included.
  const batch = await api.post('/contacts/batch/create', { inputs: [{ firstName: 'Ana' }, { firstName: 'Bia', last_name: 'S' }] });
  assert.equal(batch.status, 207);
  assert.deepEqual(batch.body.results[1].error, {
    error: 'validation_failed',
    message: `last_name ${hint('lastName')}`,
    details: [{ field: 'last_name', message: hint('lastName'), suggestion: 'lastName' }],
    docUrl: '/docs#description/validation_failed',
  });
});

test("Node's client errors (no request parsed) carry docUrl too", () => {
  const written: string[] = [];
  const socket = new PassThrough() as unknown as import('node:net').Socket;
  (socket as any).end = (s: string) => written.push(s);
  const fakeApp = { log: { debug() {} } } as any;
  const err = Object.assign(new Error('overflow'), { code: 'HPE_HEADER_OVERFLOW' });
  clientErrorHandler.call(fakeApp, err, socket);
  const raw = written.join('');
  assert.match(raw, /^HTTP\/1\.1 431 /);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  assert.deepEqual(body, {
    error: 'request_header_fields_too_large',
    message: 'The request line or headers are too large',
    docUrl: '/docs#description/request_header_fields_too_large',
  });
  assert.equal(ERROR_CODES[body.error], 431);
  (socket as any).destroy();
});
