// Logs never carry an API key, whatever the parameter or wherever it is pasted, nor the personal data of
// search-like query values (B.1, DESIGN §3): one `req` serializer redacts the URL of every log line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { redactUrl } from '../../src/plugins/logging.js';
import { newTenant, testApp } from '../helpers/app.js';

const t = await testApp();

function capturingApp(level = 'trace') {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { app: buildApp({ config: t.config, database: t.database, logger: { level, stream } }), logs: () => text };
}

test('no API key and no searched personal data reach the logs, whatever the query parameter', async () => {
  const { apiKeys } = await newTenant(t);
  const key = apiKeys.full;
  const { app: building, logs } = capturingApp();
  const app = await building;
  await app.ready();
  const urls = [
    `/api/v1/contacts?api_key=${key}`,
    `/api/v1/contacts?token=${key}`,
    `/api/v1/contacts?x=${key}&page=1`,
    `/api/v1/contacts?page=${key}`,
    `/api/v1/contacts?${key}`,
    `/api/v1/contacts?${key}=1`,
    `/api/v1/contacts/${key}`,
    `/api/v1/${key}/contacts`,
    `/api/v1/contacts/${encodeURIComponent(key).replace('_', '%5F')}`,
    '/api/v1/contacts?search=maria.secret%40example.com&page=2&pageSize=10',
    '/api/v1/contacts?email=maria.secret@example.com',
    '/api/v1/contacts?phone=%2B5511999998888',
    '/api/v1/contacts?q=maria.secret@example.com',
    '/api/v1/contacts?whatever=maria.secret@example.com',
  ];
  for (const url of urls) {
    await app.inject({ method: 'GET', url, headers: { 'x-api-key': key, authorization: `Bearer ${key}` } });
    await app.inject({ method: 'GET', url }); // without a key too: a 401 logs the same request line
  }
  await app.close();
  const text = logs();
  assert.match(text, /"url":"\/api\/v1\/contacts\?/, 'request lines are logged at this level');
  assert.ok(text.includes('page=2&pageSize=10'), 'plain parameters stay readable');
  assert.ok(!/crm_live_/i.test(text), 'a key reached the logs');
  assert.ok(!text.includes(key.slice(9, 25)), 'part of a key reached the logs');
  assert.ok(!/maria\.secret/.test(text), 'searched personal data reached the logs');
  assert.ok(!text.includes('5511999998888'), 'a searched phone reached the logs');
});

test('a request makes its child logger only to write a line, and its lines carry the request id', async () => {
  const { apiKeys } = await newTenant(t);
  const { app: building, logs } = capturingApp('warn');
  const app = await building;
  app.get('/log-probe', async (req) => {
    req.log.info('below the level');
    req.log.warn({ probe: 1 }, 'probe line');
    req.log.warn('second line');
    return { level: req.log.level };
  });
  app.get('/log-probe-inner', async (req) => {
    req.log.child({ part: 'inner' }).error('inner line');
    return {};
  });
  await app.ready();
  let made = 0;
  // Counts every child made from the app's logger (pino's children inherit this property: `this` is kept).
  const child = app.log.child;
  app.log.child = function (this: typeof app.log, ...args: Parameters<typeof child>) {
    made++;
    return child.apply(this, args);
  } as typeof child;

  const quiet = await app.inject({ method: 'GET', url: '/api/v1/contacts', headers: { 'x-api-key': apiKeys.full, 'x-request-id': 'req-quiet' } });
  assert.equal(quiet.statusCode, 200);
  assert.equal(made, 0, 'a request that wrote no line made a child logger');

  const probe = await app.inject({ method: 'GET', url: '/log-probe', headers: { 'x-request-id': 'req-probe' } });
  assert.equal(probe.statusCode, 200);
  assert.deepEqual(probe.json(), { level: 'warn' });
  assert.equal(made, 1, 'the child is made once, on the first line written');
  await app.inject({ method: 'GET', url: '/log-probe-inner', headers: { 'x-request-id': 'req-inner' } });
  await app.close();
  const lines = logs()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(!lines.some((l) => l.msg === 'below the level'), 'a line below the level was written');
  assert.ok(!lines.some((l) => l.reqId === 'req-quiet'), 'the quiet request wrote a line');
  const probeLine = lines.find((l) => l.msg === 'probe line');
  assert.equal(probeLine?.reqId, 'req-probe');
  assert.equal(probeLine?.probe, 1);
  const inner = lines.find((l) => l.msg === 'inner line');
  assert.equal(lines.filter((l) => l.reqId === 'req-probe').length, 2);
  assert.equal(inner?.reqId, 'req-inner', 'a grandchild keeps the request id');
  assert.equal(inner?.part, 'inner');
});

test('redactUrl keeps the path and plain parameters, and redacts the rest', () => {
  assert.equal(redactUrl('/api/v1/contacts'), '/api/v1/contacts');
  assert.equal(redactUrl('/api/v1/contacts?page=2&search=ana&pageSize=5'), '/api/v1/contacts?page=2&search=[redacted]&pageSize=5');
  assert.equal(redactUrl('/api/v1/contacts/crm_live_abc?sortKey=crm_live_x'), '/api/v1/contacts/[redacted]?sortKey=[redacted]');
  assert.equal(redactUrl('/api/v1/contacts?crm%5Flive_abc'), '/api/v1/contacts?[redacted]');
});
