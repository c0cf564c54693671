// The SDK's CrmApiError exposes the body's `docUrl` (a path of the server) as an absolute URL, and the
// `suggestion` of each detail as sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CrmApiError } from '../../sdk/src/index.js';

const answer = (status: number, body: string) => new Response(body, { status, headers: { 'content-type': 'application/json' } });

test('CrmApiError.docUrl is the body docUrl resolved against the request URL', async () => {
  const body = {
    error: 'validation_failed',
    message: 'first_name is not a known field; did you mean "firstName"?',
    details: [{ field: 'first_name', message: 'is not a known field; did you mean "firstName"?', suggestion: 'firstName' }],
    docUrl: '/docs#description/validation_failed',
  };
  const err = await CrmApiError.fromResponse(new Request('https://crm.example.com/api/v1/contacts', { method: 'POST' }), answer(400, JSON.stringify(body)));
  assert.equal(err.docUrl, 'https://crm.example.com/docs#description/validation_failed');
  assert.equal(err.details[0].suggestion, 'firstName');
  assert.deepEqual(err.body, body);
});

test('CrmApiError.docUrl is undefined when the answer has none', async () => {
  const req = new Request('http://crm.test/api/v1/contacts');
  assert.equal((await CrmApiError.fromResponse(req, answer(502, '<html>bad gateway</html>'))).docUrl, undefined);
  assert.equal((await CrmApiError.fromResponse(req, answer(400, '{"error":"x","message":"y"}'))).docUrl, undefined);
});
