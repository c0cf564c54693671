// The SDK's `listen` in-process: the command line, the delivery it builds (identical to the service's own
// signer and headers), reconnecting after errors, and the invalid_url message that points to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { delivery, listen, ListenError, newSecret } from '../../sdk/src/listen.js';
import { ListenArgsError, parseListenArgs } from '../../sdk/src/cli-listen.js';
import { verifyWebhook } from '../../sdk/src/webhooks.js';
import { deliveryHeaders } from '../../src/modules/webhooks/webhooks.sender.js';
import { checkUrl } from '../../src/modules/webhooks/webhooks.service.js';
import { ApiError } from '../../src/errors.js';

const KEY = 'crm_live_' + 'a'.repeat(40);

test('parseListenArgs: options, defaults from the environment, and the mistakes it refuses', () => {
  const o = parseListenArgs(['--forward-to', 'http://localhost:4000/hooks', '--events', 'contact.created, deal.updated', '--replay-from', 'evt_1'], {
    CRM_API_KEY: KEY,
    CRM_BASE_URL: 'http://crm.local:3000',
  });
  assert.equal(o.apiKey, KEY);
  assert.equal(o.baseUrl, 'http://crm.local:3000');
  assert.deepEqual(o.events, ['contact.created', 'deal.updated']);
  assert.equal(o.replayFrom, 'evt_1');
  assert.match(o.secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'a new secret when none is given');
  assert.equal(parseListenArgs(['--forward-to', 'http://x/', '--key', KEY], {}).baseUrl, 'http://127.0.0.1:3000');
  assert.equal(parseListenArgs(['-h'], {}).help, true);

  const refused: [string[], RegExp][] = [
    [['--key', KEY], /--forward-to is required/],
    [['--forward-to', 'http://x/'], /--key is required/],
    [['--forward-to', 'ftp://x/', '--key', KEY], /http:\/\/ or https:\/\//],
    [['--forward-to', 'nope', '--key', KEY], /not a URL/],
    [['--forward-to', 'http://x/', '--key', KEY, '--secret', 'abc'], /whsec_/],
    [['--forward-to', 'http://x/', '--key', KEY, '--events', ' , '], /at least one event/],
    [['--forward-to', 'http://x/', '--key', KEY, '--bogus'], /Unknown option '--bogus'/],
    [['--forward-to', 'http://x/', '--key', KEY, 'extra'], /positional/],
  ];
  for (const [args, message] of refused)
    assert.throws(
      () => parseListenArgs(args, {}),
      (e: Error) => e instanceof ListenArgsError && message.test(e.message),
      args.join(' '),
    );
});

test('delivery(): the body of the stored payload and the very headers and signatures of the service', () => {
  const secret = newSecret();
  const dataJson = '{"contact":{"id":"ct_1","firstName":"Zoë","tags":[],"score":null},"changes":["score"],"previous":{"score":1}}';
  const event = { id: 'evt_1', type: 'contact.updated', occurredAt: '2026-12-01T10:00:00.000Z', dataJson };
  const stored = JSON.stringify({ event: 'contact.updated', tenantId: 'ten_1', timestamp: event.occurredAt, data: JSON.parse(dataJson) });
  const d = delivery(event, secret, 'ten_1', 1_780_000_000);
  assert.equal(d.body, stored);
  const server = deliveryHeaders(
    { secret, customHeaders: {}, eventId: 'evt_1', event: 'contact.updated', body: Buffer.from(stored) },
    d.headers['x-service-delivery'],
    1_780_000_000,
  );
  assert.deepEqual(d.headers, server);
  assert.equal(verifyWebhook(secret, d.headers, d.body, { now: new Date(1_780_000_000_000) }).event, 'contact.updated');
});

/** A fetch stub answering the event log from a script of answers, then holding like a long-poll. */
function scriptedFetch(script: (() => Response)[], received: { url: string; body: string }[], stop: AbortController) {
  const calls: string[] = [];
  const f = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input);
    if (init?.method === 'POST') {
      received.push({ url, body: String(init.body) });
      if (received.length === 2) stop.abort();
      return new Response('ok', { status: 200 });
    }
    calls.push(url);
    const next = script.shift();
    if (next) return next();
    return new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
  };
  return { f: f as typeof fetch, calls };
}

const page = (events: { id: string; type: string }[]) =>
  new Response(
    JSON.stringify({
      data: events.map((e) => ({ ...e, occurredAt: '2026-12-01T10:00:00.000Z', data: { contact: { id: 'ct_1' } } })),
      pagination: { nextCursor: null },
    }),
  );

test('listen(): a server down, a 503 and a 429 with Retry-After are waited out; events are forwarded in order; abort ends it', async () => {
  const stop = new AbortController();
  const received: { url: string; body: string }[] = [];
  const down = () => {
    throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
  };
  const { f, calls } = scriptedFetch(
    [
      down,
      () => page([{ id: 'evt_9', type: 'contact.created' }]),
      () => new Response('{}', { status: 503 }),
      () => new Response('{}', { status: 429, headers: { 'retry-after': '1' } }),
      () =>
        page([
          { id: 'evt_10', type: 'contact.created' },
          { id: 'evt_11', type: 'contact.deleted' },
        ]),
    ],
    received,
    stop,
  );
  const warnings: string[] = [];
  const started = Date.now();
  await listen({
    baseUrl: 'http://crm.local/',
    apiKey: KEY,
    forwardTo: 'http://localhost:4000/hooks',
    secret: newSecret(),
    fetch: f,
    signal: stop.signal,
    warn: (l) => warnings.push(l),
    log: () => {},
  });
  assert.ok(Date.now() - started >= 1000, 'Retry-After: 1 was honoured');
  assert.deepEqual(
    received.map((r) => JSON.parse(r.body).event),
    ['contact.created', 'contact.deleted'],
  );
  assert.match(warnings.join('\n'), /cannot reach http:\/\/crm\.local: ECONNREFUSED.*\n.*answered 503.*\n.*answered 429; retrying in 1\.0 s/);
  // Started from now: after the last event in the log (evt_9), then after each forwarded one.
  assert.match(calls[2], /after=evt_9&limit=100&wait=25/);
  assert.equal(calls.length, 5);
});

test('listen(): an answer no retry mends (401) ends it with ListenError', async () => {
  const stop = new AbortController();
  const { f } = scriptedFetch([() => new Response('{"error":"unauthorized"}', { status: 401 })], [], stop);
  await assert.rejects(
    listen({ baseUrl: 'http://crm.local', apiKey: KEY, forwardTo: 'http://localhost:4000/hooks', secret: newSecret(), fetch: f, replayFrom: 'start' }),
    ListenError,
  );
});

test('invalid_url: an http:// webhook URL is still refused, and the message points to listen', () => {
  for (const url of ['http://localhost:4000/hooks', 'ftp://example.com/x']) {
    assert.throws(
      () => checkUrl(url),
      (e: ApiError) => {
        assert.equal(e.code, 'invalid_url');
        assert.match(
          e.message,
          /^url must use https:\/\/; to receive webhooks on localhost during development, run `npx crm-listen .*--forward-to http:\/\/localhost:4000\/hooks`.*npm run crm -- listen/,
        );
        return true;
      },
    );
  }
  assert.equal(checkUrl('https://hooks.example.com/crm'), 'https://hooks.example.com/crm');
});

test('listen(): an `after` the log does not know (answered at once, empty) is retried with back-off, not in a tight loop', async () => {
  const stop = new AbortController();
  const calls: string[] = [];
  const f = (async (input: string | URL) => {
    calls.push(String(input));
    return page([]);
  }) as typeof fetch;
  const warnings: string[] = [];
  setTimeout(() => stop.abort(), 1500);
  await listen({
    baseUrl: 'http://crm.local',
    apiKey: KEY,
    forwardTo: 'http://localhost:4000/hooks',
    secret: newSecret(),
    replayFrom: 'evt_gone',
    fetch: f,
    signal: stop.signal,
    warn: (l) => warnings.push(l),
  });
  assert.ok(calls.length <= 4, `${calls.length} calls in 1.5 s`);
  assert.match(warnings[0], /no event after evt_gone: not an event of the log .*--replay-from start/);
});
