import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKey } from '../../src/admin/keys.js';
import { client, newTenant, testApp } from '../helpers/app.js';

// A small seeded fuzz over every documented endpoint: bad input must give a 4xx, never a 5xx.
const t = await testApp();
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 6);

function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const NASTY_STRINGS = [
  '',
  ' ',
  "'; drop table contacts; --",
  '" OR 1=1 --',
  '%',
  '_',
  '\\',
  '\u0000',
  '😀'.repeat(50),
  'x'.repeat(200_000),
  '<script>alert(1)</script>',
  '2026-13-45T99:99:99Z',
  '-1',
  'NaN',
  '1e309',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  '+55 11 99999-9999',
  'a@b',
  '#zzzzzz',
  'https://',
  'javascript:alert(1)',
];

function value(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * 12);
  switch (k) {
    case 0:
      return NASTY_STRINGS[Math.floor(r() * NASTY_STRINGS.length)];
    case 1:
      return Math.floor(r() * 2 ** 53) * (r() < 0.5 ? -1 : 1);
    case 2:
      return r() * 1e6;
    case 3:
      return null;
    case 4:
      return r() < 0.5;
    case 5:
      return depth < 3 ? Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1)) : [];
    case 6:
      return depth < 3 ? { [NASTY_STRINGS[Math.floor(r() * NASTY_STRINGS.length)].slice(0, 20) || 'k']: value(r, depth + 1) } : {};
    case 7:
      return Array.from({ length: 1200 }, (_, i) => `id_${i}`);
    case 8:
      return { operator: r() < 0.5 ? 'AND' : 'XOR', conditions: [{ field: 'score', operator: 'gte', value: value(r, depth + 1) }] };
    case 9:
      return 1.005;
    case 10:
      return -0.001;
    default:
      return 'ok';
  }
}

test('fuzz: random and hostile bodies, query strings and ids never produce a 5xx', async () => {
  const tenant = await newTenant(t);
  // Several keys, so the per-key rate limit (max 1000/min) never turns the run into 429s.
  const keys = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      createKey(t.database.db, { tenantId: tenant.tenantId, name: `fuzz ${i}`, scopes: ['*'], userId: tenant.refs.ana, rateLimit: 1000 }),
    ),
  );
  let calls = 0;
  const api = () => client(t.app, keys[Math.floor(calls++ / 900) % keys.length].key);
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const r = prng(SEED);
  const failures: string[] = [];
  const realIds = [tenant.refs.sales, tenant.refs.lead, tenant.refs.ana, tenant.refs.contact_us, tenant.refs.hot];

  for (const [rawPath, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      const fields = Object.keys(bodySchema?.properties ?? {});
      const queryParams = (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name);
      for (let round = 0; round < ROUNDS; round++) {
        const id = r() < 0.5 ? realIds[Math.floor(r() * realIds.length)] : String(value(r)).slice(0, 300);
        const url = rawPath.replace(/\{[^}]+\}/g, () => encodeURIComponent(id || 'x'));
        const qs = queryParams
          .filter(() => r() < 0.5)
          .map((q: string) => `${q}=${encodeURIComponent(String(value(r)).slice(0, 500))}`)
          .join('&');
        let body: unknown;
        if (method === 'post' || method === 'patch' || method === 'put') {
          const obj: Record<string, unknown> = {};
          for (const f of fields) if (r() < 0.6) obj[f] = value(r);
          if (r() < 0.2) obj[`unknown_${round}`] = value(r);
          body = r() < 0.1 ? value(r) : obj;
        }
        const res = await api()[method === 'delete' ? 'delete' : (method as 'get')](url + (qs ? `?${qs}` : ''), body as any);
        if (res.status >= 500)
          failures.push(
            `${method.toUpperCase()} ${url}?${qs} ${JSON.stringify(body)?.slice(0, 300)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
          );
      }
    }
  }
  assert.deepEqual(failures, [], `5xx answers (seed ${SEED}):\n${failures.join('\n')}`);
});

test('fuzz: garbage Idempotency-Key headers on every write never produce a 5xx', async () => {
  const tenant = await newTenant(t);
  const keys = await Promise.all(
    Array.from({ length: 4 }, (_, i) =>
      createKey(t.database.db, { tenantId: tenant.tenantId, name: `idem fuzz ${i}`, scopes: ['*'], userId: tenant.refs.ana, rateLimit: 1000 }),
    ),
  );
  let calls = 0;
  const api = () => client(t.app, keys[Math.floor(calls++ / 900) % keys.length].key);
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const r = prng(SEED + 1);
  const printable = (n: number) => Array.from({ length: n }, () => String.fromCharCode(0x21 + Math.floor(r() * 94))).join('');
  // A few keys are reused on purpose, so replays and 422 reuses are fuzzed too.
  const reused = [printable(8), printable(40), '~'.repeat(255)];
  const garbage = () => {
    const k = Math.floor(r() * 9);
    if (k === 0) return NASTY_STRINGS[Math.floor(r() * NASTY_STRINGS.length)].slice(0, 1000);
    if (k === 1) return printable(256 + Math.floor(r() * 2000));
    if (k === 2) return ' ' + printable(5) + ' ';
    if (k === 3) return '\u00ff\u00e9\u0080' + printable(3);
    if (k === 4) return printable(3) + '\t' + printable(3);
    if (k === 5) return `${printable(4)}, ${printable(4)}`;
    if (k === 6) return printable(1 + Math.floor(r() * 255));
    return reused[Math.floor(r() * reused.length)];
  };
  const failures: string[] = [];
  const realIds = [tenant.refs.sales, tenant.refs.lead, tenant.refs.hot];
  for (const [rawPath, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      if (!['post', 'patch', 'delete'].includes(method) || !rawPath.startsWith('/api/v1/')) continue;
      const fields = Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {});
      for (let round = 0; round < ROUNDS; round++) {
        const url = rawPath.replace(/\{[^}]+\}/g, () => encodeURIComponent(realIds[Math.floor(r() * realIds.length)]));
        const obj: Record<string, unknown> = {};
        for (const f of fields) if (r() < 0.6) obj[f] = value(r);
        const key = garbage();
        let res;
        try {
          const headers = { 'idempotency-key': key };
          res = method === 'delete' ? await api().delete(url, headers) : await api()[method as 'post'](url, obj, headers);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR') continue; // no HTTP client can send it
          throw err;
        }
        if (res.status >= 500)
          failures.push(`${method.toUpperCase()} ${url} key=${JSON.stringify(key).slice(0, 80)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    }
  }
  assert.deepEqual(failures, [], `5xx answers (seed ${SEED}):\n${failures.join('\n')}`);
});

test('fuzz: garbage cursors on every paginated endpoint (query and search body) are 400, never a 5xx', async () => {
  const tenant = await newTenant(t);
  const api = tenant.api;
  for (let i = 0; i < 3; i++) await api.post('/contacts', { firstName: `C${i}` });
  const real: string = (await api.get('/contacts?pageSize=1')).body.pagination.nextCursor;
  const list = (await api.post('/lists', { name: 'L', objectType: 'contact', kind: 'static' })).body;
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  const r = prng(SEED + 1);
  const garbage: string[] = [
    ...NASTY_STRINGS.filter((s) => s !== '').map((s) => s.slice(0, 1500)),
    '.',
    '..',
    'a.',
    '.a',
    real + 'x',
    real.replace('.', '..'),
    real.split('.').reverse().join('.'),
    real.toUpperCase(),
    `${b64([null, null])}.${real.split('.')[1]}`,
    `${b64({ a: 1 })}.AAAA`,
    `${b64('not json')}.${b64('mac')}`,
    `${b64([1e309, 'x'])}.x`,
    `${b64(['x'.repeat(1000), 'y'])}.${'A'.repeat(43)}`,
    ...Array.from({ length: 20 }, () => Array.from({ length: 1 + Math.floor(r() * 120) }, () => String.fromCharCode(32 + Math.floor(r() * 95))).join('')),
  ];
  const endpoints = ['/contacts', '/companies', '/deals', '/proposals', `/lists/${list.id}/members`, `/forms/${tenant.refs.contact_us}/submissions`];
  const failures: string[] = [];
  for (const g of garbage) {
    for (const e of endpoints) {
      const res = await api.get(`${e}?cursor=${encodeURIComponent(g)}`);
      if (res.status !== 400) failures.push(`GET ${e} cursor=${JSON.stringify(g).slice(0, 80)} → ${res.status}`);
    }
    const res = await api.post('/contacts/search', { cursor: g });
    if (res.status !== 400) failures.push(`POST /contacts/search cursor=${JSON.stringify(g).slice(0, 80)} → ${res.status}`);
  }
  for (const g of [42, null, true, ['a'], { a: 1 }]) {
    const res = await api.post('/contacts/search', { cursor: g });
    if (res.status !== 400) failures.push(`POST /contacts/search cursor=${JSON.stringify(g)} → ${res.status}`);
  }
  assert.deepEqual(failures, []);
});

test('fuzz: batch endpoints with random inputs never produce a 5xx; partial answers have one result per input', async () => {
  const tenant = await newTenant(t);
  const keys = await Promise.all(
    Array.from({ length: 2 }, (_, i) =>
      createKey(t.database.db, { tenantId: tenant.tenantId, name: `batch fuzz ${i}`, scopes: ['*'], userId: tenant.refs.ana, rateLimit: 1000 }),
    ),
  );
  let calls = 0;
  const api = () => client(t.app, keys[Math.floor(calls++ / 900) % keys.length].key);
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const r = prng(SEED + 2);
  const realIds = [tenant.refs.sales, tenant.refs.lead, tenant.refs.won, tenant.refs.ana, tenant.refs.price];
  const failures: string[] = [];
  const batchPaths = Object.keys(doc.paths).filter((p) => p.includes('/batch/'));
  assert.equal(batchPaths.length, 15);
  for (const path of batchPaths) {
    const schema = doc.paths[path].post.requestBody.content['application/json'].schema;
    const item = schema.properties.inputs?.items;
    const fields = Object.keys(item?.properties ?? {});
    const idProperties: string[] = schema.properties.idProperty?.enum ?? [];
    for (let round = 0; round < ROUNDS * 2; round++) {
      const inputs = Array.from({ length: 1 + Math.floor(r() * 8) }, () => {
        const obj: Record<string, unknown> = {};
        for (const f of fields) {
          if (r() < 0.5) continue;
          obj[f] = r() < 0.3 && /Id$|^id$/.test(f) ? realIds[Math.floor(r() * realIds.length)] : r() < 0.3 ? 'ok' : value(r);
        }
        return r() < 0.05 ? value(r) : obj;
      });
      const body: Record<string, unknown> = schema.properties.ids
        ? { ids: inputs.map(() => (r() < 0.5 ? realIds[Math.floor(r() * realIds.length)] : String(value(r)).slice(0, 100))) }
        : { inputs };
      if (idProperties.length) body.idProperty = r() < 0.9 ? idProperties[Math.floor(r() * idProperties.length)] : value(r);
      if (r() < 0.3) body.atomic = r() < 0.8 ? true : value(r);
      const res = await api().post(path.replace('/api/v1', ''), body);
      if (res.status >= 500) failures.push(`POST ${path} ${JSON.stringify(body).slice(0, 300)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      if ((res.status === 200 || res.status === 207) && !path.endsWith('/read')) {
        const n = ((body.inputs ?? body.ids) as unknown[]).length;
        if (res.body.results.length !== n) failures.push(`POST ${path}: ${res.body.results.length} results for ${n} inputs`);
      }
    }
  }
  assert.deepEqual(failures, [], `5xx answers (seed ${SEED}):\n${failures.join('\n')}`);
});
