// The ceiling of bench/longpoll.ts: a bare Fastify server (no auth, hooks, database or schema) holding
// WAITERS requests and answering all of them, with the same one-event JSON page, when a POST arrives.
// The same hand-written client (raw-http.ts) measures commit → answer as bench/longpoll.ts does, so the two
// compare directly.
//
// Usage: node --import tsx bench/longpoll-ceiling.ts [--waiters 1000] [--rounds 10]
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { openConnections } from './raw-http.js';

const { values: args } = parseArgs({
  options: { waiters: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '10' }, serve: { type: 'string' } },
});
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
    held.push((body) => void reply.type('application/json; charset=utf-8').send(body));
  });
  app.post('/contacts', async () => {
    const body = JSON.stringify({
      data: [
        {
          id: `evt_${++n}`,
          type: 'contact.created',
          occurredAt: new Date().toISOString(),
          data: { contact: { id: `ct_${n}`, firstName: 'Round', lastName: null, email: `r${n}@lp.test` } },
        },
      ],
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
  const waiters = await openConnections(port, WAITERS);
  const [writer] = await openConnections(port, 1);
  try {
    const all: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const polls = waiters.map((conn) => conn.request('GET', '/events').then((r) => (JSON.parse(r.body.toString('utf8')), r.at)));
      await sleep(1500);
      const committed = (await writer.request('POST', '/contacts')).at;
      const answered = await Promise.all(polls);
      if (round > 0) all.push(...answered.map((t) => t - committed));
    }
    all.sort((a, b) => a - b);
    const ms = (x: number) => x.toFixed(1);
    console.log(
      `ceiling (bare Fastify): commit → long-poll answer, ${WAITERS} waiting, ${ROUNDS - 1} rounds: p50 ${ms(pct(all, 50))} ms, p99 ${ms(pct(all, 99))} ms, max ${ms(all.at(-1)!)} ms`,
    );
  } finally {
    for (const conn of [...waiters, writer]) conn.close();
    server.kill();
  }
}
