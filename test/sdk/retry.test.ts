// The SDK's transport with a stub `fetch`: which answers are retried and after how long (Retry-After,
// else a jittered backoff), the Idempotency-Key of a POST kept across its attempts, what a network
// failure does per method, and the errors it throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, CrmApiError, nextLinkCursor, type FetchLike } from '../../sdk/src/index.js';

interface Seen {
  method: string;
  url: string;
  key: string | null;
  apiKey: string | null;
  body: string;
  at: number;
}

/** A stub server: answers in turn (the last one repeats); an Error is thrown as a network failure. */
function stub(...answers: (Response | Error | (() => Response))[]) {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (request) => {
    seen.push({
      method: request.method,
      url: request.url,
      key: request.headers.get('idempotency-key'),
      apiKey: request.headers.get('x-api-key'),
      body: await request.text(),
      at: Date.now(),
    });
    const a = answers[Math.min(seen.length - 1, answers.length - 1)];
    if (a instanceof Error) throw a;
    return typeof a === 'function' ? a() : a.clone();
  };
  return { seen, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const contact = { id: 'con_1', firstName: 'Ana' };
const limited = (retryAfter?: string) =>
  json(
    429,
    { error: 'rate_limit_exceeded', message: 'Rate limit exceeded', limit: 100, retryAfterSeconds: Number(retryAfter ?? 0) },
    retryAfter ? { 'retry-after': retryAfter } : {},
  );
const client = (fetch: FetchLike, retries: Parameters<typeof createClient>[0]['retries'] = { retries: 2, baseDelayMs: 5, maxDelayMs: 20 }) =>
  createClient({ baseUrl: 'http://crm.test', apiKey: 'crm_live_test', fetch, retries });

test('a 429 is retried after its Retry-After seconds', async () => {
  const s = stub(limited('1'), json(200, contact));
  const started = Date.now();
  const { data } = await client(s.fetch).GET('/api/v1/contacts/{id}', { params: { path: { id: 'con_1' } } });
  assert.equal(data.id, 'con_1');
  assert.equal(s.seen.length, 2);
  assert.ok(s.seen[1].at - s.seen[0].at >= 950, `waited ${s.seen[1].at - s.seen[0].at} ms for Retry-After: 1`);
  assert.ok(Date.now() - started < 3000);
  assert.equal(s.seen[1].apiKey, 'crm_live_test', 'X-API-Key on every attempt');
});

test('a 503 without Retry-After is retried after a short backoff; retries run out into CrmApiError', async () => {
  const s = stub(json(503, { error: 'query_timeout', message: 'Query timed out' }), json(200, contact));
  await client(s.fetch).GET('/api/v1/contacts/{id}', { params: { path: { id: 'con_1' } } });
  assert.equal(s.seen.length, 2);

  const always = stub(limited());
  const err = await client(always.fetch)
    .GET('/api/v1/contacts')
    .catch((e: unknown) => e);
  assert.ok(err instanceof CrmApiError);
  assert.equal(err.status, 429);
  assert.equal(err.code, 'rate_limit_exceeded');
  assert.equal(err.body.limit, 100);
  assert.equal(always.seen.length, 3, 'the first attempt and two retries');
});

test('a Retry-After longer than the cap is not waited for: thrown at once with retryAfterSeconds', async () => {
  const s = stub(limited('120'), json(200, contact));
  const started = Date.now();
  const err = await client(s.fetch, { maxRetryAfterSeconds: 60 })
    .GET('/api/v1/contacts')
    .catch((e: unknown) => e);
  assert.ok(err instanceof CrmApiError);
  assert.equal(err.retryAfterSeconds, 120);
  assert.equal(s.seen.length, 1);
  assert.ok(Date.now() - started < 500);
});

test('retries: 0 turns retrying off; other 4xx and 5xx are never retried', async () => {
  const s = stub(limited('1'), json(200, contact));
  await assert.rejects(client(s.fetch, 0).GET('/api/v1/contacts'), CrmApiError);
  assert.equal(s.seen.length, 1);
  for (const status of [400, 404, 409, 422, 500]) {
    const t = stub(json(status, { error: 'x', message: 'y' }), json(200, contact));
    await assert.rejects(
      client(t.fetch).POST('/api/v1/contacts', { body: { firstName: 'A' } }),
      (e: unknown) => e instanceof CrmApiError && e.status === status,
    );
    assert.equal(t.seen.length, 1, `${status} is final`);
  }
});

test('every POST carries an Idempotency-Key, the same on each attempt; a GET carries none', async () => {
  const s = stub(json(409, { error: 'idempotency_key_in_use', message: 'in use' }, { 'retry-after': '0' }), limited('0'), json(201, contact));
  const { data } = await client(s.fetch).POST('/api/v1/contacts', { body: { firstName: 'Ana' } });
  assert.equal(data.id, 'con_1');
  assert.equal(s.seen.length, 3, '409 idempotency_key_in_use and 429 are retried');
  assert.match(s.seen[0].key ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(s.seen.every((x) => x.key === s.seen[0].key));
  assert.ok(
    s.seen.every((x) => x.body === JSON.stringify({ firstName: 'Ana' })),
    'the body is sent whole on every attempt',
  );

  const again = stub(json(201, contact));
  await client(again.fetch).POST('/api/v1/contacts', { body: { firstName: 'Ana' } });
  assert.notEqual(again.seen[0].key, s.seen[0].key, 'a new call, a new key');
  await client(again.fetch).POST('/api/v1/contacts', { body: { firstName: 'Ana' }, headers: { 'Idempotency-Key': 'import-42' } });
  assert.equal(again.seen[1].key, 'import-42', 'a key given by the caller is kept');
  await client(again.fetch).GET('/api/v1/contacts');
  assert.equal(again.seen[2].key, null);
});

test('a network failure is retried for GET, POST (with its key) and DELETE, never for PATCH nor a POST without a key', async () => {
  const down = () => new TypeError('fetch failed');
  for (const method of ['GET', 'POST', 'DELETE'] as const) {
    const s = stub(down(), method === 'DELETE' ? new Response(null, { status: 204 }) : json(method === 'POST' ? 201 : 200, contact));
    const crm = client(s.fetch);
    if (method === 'GET') await crm.GET('/api/v1/contacts/{id}', { params: { path: { id: 'con_1' } } });
    if (method === 'POST') await crm.POST('/api/v1/contacts', { body: { firstName: 'Ana' } });
    if (method === 'DELETE') await crm.DELETE('/api/v1/contacts/{id}', { params: { path: { id: 'con_1' } } });
    assert.equal(s.seen.length, 2, method);
  }
  const s = stub(down(), json(200, contact));
  await assert.rejects(client(s.fetch).PATCH('/api/v1/contacts/{id}', { params: { path: { id: 'con_1' } }, body: { firstName: 'B' } }), TypeError);
  assert.equal(s.seen.length, 1);
  // The public form intake keeps no idempotency record: its POST gets no key and is not sent twice.
  const form = stub(down(), json(201, { submissionId: 'sub_1', contactId: 'con_1' }));
  await assert.rejects(
    client(form.fetch).POST('/f/{tenantSlug}/{slug}', { params: { path: { tenantSlug: 'acme', slug: 'contact-us' } }, body: { email: 'a@b.test' } }),
    TypeError,
  );
  assert.equal(form.seen.length, 1);
  assert.equal(form.seen[0].key, null);
});

test('an aborted call is not retried and its wait ends at once', async () => {
  const s = stub(limited('30'), json(200, contact));
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('stop')), 50);
  const started = Date.now();
  await assert.rejects(client(s.fetch).GET('/api/v1/contacts', { signal: ac.signal }), /stop/);
  assert.equal(s.seen.length, 1);
  assert.ok(Date.now() - started < 1000);
});

test('an answer that is not the contract JSON still throws a CrmApiError', async () => {
  const s = stub(() => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html', 'x-request-id': 'edge-1' } }));
  const err = await client(s.fetch)
    .GET('/api/v1/contacts')
    .catch((e: unknown) => e);
  assert.ok(err instanceof CrmApiError);
  assert.equal(err.status, 502);
  assert.equal(err.code, 'http_502');
  assert.match(err.message, /Bad gateway/);
  assert.equal(err.requestId, 'edge-1');
});

test('nextLinkCursor reads the cursor of rel="next" (RFC 8288), wherever it is in the header', () => {
  const r = (link?: string) => new Response(null, { headers: link ? { link } : {} });
  assert.equal(nextLinkCursor(r('<https://crm.test/api/v1/webhooks/w/deliveries?limit=2&cursor=abc%3D>; rel="next"')), 'abc=');
  assert.equal(nextLinkCursor(r('</x?cursor=p>; rel="prev", </x?event=a,b&cursor=n>; rel=next')), 'n');
  assert.equal(nextLinkCursor(r('</x?cursor=p>; rel="prev"')), null);
  assert.equal(nextLinkCursor(r()), null);
});
