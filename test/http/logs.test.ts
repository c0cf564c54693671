// Logs never carry an API key, whatever the parameter or wherever it is pasted, nor the personal data of
// search-like query values (B.1, DESIGN §3): one `req` serializer redacts the URL of every log line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { redactUrl } from '../../src/plugins/logging.js';
import { newTenant, testApp } from '../helpers/app.js';

const t = await testApp();

function capturingApp() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return { app: buildApp({ config: t.config, database: t.database, logger: { level: 'trace', stream } }), logs: () => text };
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

test('redactUrl keeps the path and plain parameters, and redacts the rest', () => {
  assert.equal(redactUrl('/api/v1/contacts'), '/api/v1/contacts');
  assert.equal(redactUrl('/api/v1/contacts?page=2&search=ana&pageSize=5'), '/api/v1/contacts?page=2&search=[redacted]&pageSize=5');
  assert.equal(redactUrl('/api/v1/contacts/crm_live_abc?sortKey=crm_live_x'), '/api/v1/contacts/[redacted]?sortKey=[redacted]');
  assert.equal(redactUrl('/api/v1/contacts?crm%5Flive_abc'), '/api/v1/contacts?[redacted]');
});
