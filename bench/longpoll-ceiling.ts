// The ceiling of bench/longpoll.ts: a bare Fastify server (no auth, hooks, database or schema) holding
// WAITERS requests and answering all of them, with the same one-event JSON page, when a POST arrives.
// The same client measures commit → answer as bench/longpoll.ts does, so the two compare directly.
//
// Usage: node --import tsx bench/longpoll-ceiling.ts [--waiters 1000] [--rounds 10]
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values: args } = parseArgs({ options: { waiters: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '10' }, serve: { type: 'string' } } });
const WAITERS = Number(args.waiters);
const ROUNDS = Number(args.rounds);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

if (args.serve) {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const held: ((body: string) => void)[] = [];
  let n = 0;
  app.get('/events', (_req, reply) => {
    held.push((body) => reply.type('application/json; charset=utf-8').send(body));
  });
  app.post('/contacts', async () => {
    const body = JSON.stringify({
      data: [{ id: `evt_${++n}`, type: 'contact.created', occurredAt: new Date().toISOString(), data: { contact: { id: `ct_${n}`, firstName: 'Round', lastName: null, email: `r${n}@lp.test` } } }],
      pagination: { page: null, pageSize: 100, total: null, totalPages: null, hasNext: false, hasPrev: null, nextCursor: null },
    });
    setImmediate(() => {
      for (const answer of held.splice(0)) answer(body);
    });
    return { id: `ct_${n}` };
  });
  await app.listen({ port: Number(args.serve), host: '127.0.0.1' });
} else {
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  const server = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--serve', String(port)], { stdio: 'inherit' });
  await sleep(1500);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: WAITERS + 20, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  try {
    const all: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const answered: number[] = [];
      const polls = Array.from({ length: WAITERS }, () =>
        pool.request({ method: 'GET', path: '/events' }).then(async (r) => {
          const b = await r.body.json();
          answered.push(Date.now());
          return b;
        }),
      );
      await sleep(1500);
      const r = await pool.request({ method: 'POST', path: '/contacts' });
      await r.body.text();
      const committed = Date.now();
      await Promise.all(polls);
      if (round > 0) all.push(...answered.map((t) => t - committed));
    }
    all.sort((a, b) => a - b);
    console.log(`ceiling (bare Fastify): commit → long-poll answer, ${WAITERS} waiting, ${ROUNDS - 1} rounds: p50 ${pct(all, 50)} ms, p99 ${pct(all, 99)} ms, max ${all.at(-1)} ms`);
  } finally {
    await pool.close();
    server.kill();
  }
}
