// Event log cost at scale (CONTRACT C.4: reading after a given event costs the same at 10 million events
// as at 1,000). Seeds one tenant's log with N events (plus another tenant's), then times the page query
// GET /events?after=<id>&limit=100 runs (built by the module's repo, as the service builds it) near the
// start, the middle and the end, and prints its plan.
//
// Usage: node --import tsx bench/event-log.ts [N ...]   (default 1000 1000000)
// Environment: DATABASE_URL (postgres://…: a scratch database `crm_bench_events_<n>` is created beside it
// and dropped), otherwise SQLite in a temporary directory.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, CompiledQuery } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createDatabase, migrate, type Database } from '../src/db/index.js';
import { eventListing, type EventPosition } from '../src/modules/events/events.repo.js';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
if (sizes.length === 0) sizes.push(1_000, 1_000_000);
const base = process.env.DATABASE_URL;

async function open(n: number): Promise<{ database: Database; drop(): Promise<void> }> {
  if (!base) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-evbench-'));
    const database = createDatabase(loadConfig({ DATA_DIR: dir }), { sqliteFile: path.join(dir, 'crm.db'), readers: 1 });
    return { database, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `crm_bench_events_${n}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const database = createDatabase(loadConfig({ DATABASE_URL: url.toString() }));
  return {
    database,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

for (const n of sizes) {
  const { database, drop } = await open(n);
  try {
    await migrate(database);
    const { db } = database;
    const t0 = Date.now();
    // One tenant's N events and as many of another tenant, interleaved as real traffic would be.
    const chunk = 500_000;
    for (let from = 0; from < n; from += chunk) {
      const to = Math.min(n, from + chunk);
      await sql`
        with recursive s(i) as (select ${sql.lit(from + 1)} union all select i + 1 from s where i < ${sql.lit(to)})
        insert into events (tenant_id, id, type, payload, created_at)
        select case when t.k = 0 then 'tn_bench' else 'tn_other' end, 'evt_' || t.k || '_' || i,
          case when i % 3 = 0 then 'contact.updated' else 'contact.created' end,
          '{"event":"contact.created","tenantId":"tn_bench","timestamp":"2026-11-01T00:00:00.000Z","data":{"contact":{"id":"ct_' || i || '"}}}',
          '2026-11-01T00:00:00.000Z'
        from s, (select 0 as k union all select 1) t order by i, t.k`.execute(db);
    }
    await database.optimize();
    if (base) await sql`analyze events`.execute(db);
    const seeded = Date.now() - t0;

    const positionOf = async (i: number): Promise<EventPosition> => {
      const r = await db.selectFrom('events').select('seq').where('tenant_id', '=', 'tn_bench').where('id', '=', `evt_0_${i}`).executeTakeFirstOrThrow();
      return Number(r.seq);
    };
    const results: string[] = [];
    for (const [label, i] of [
      ['start', 1],
      ['middle', Math.floor(n / 2)],
      ['end', Math.max(1, n - 50)],
    ] as const) {
      const after = await positionOf(i);
      const { base: q, select } = eventListing(db, 'tn_bench', { after });
      const compiled = select(q).orderBy('seq').limit(101).compile();
      const runs: number[] = [];
      for (let k = 0; k < 30; k++) {
        const s = process.hrtime.bigint();
        await db.executeQuery(compiled);
        runs.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
      runs.sort((x, y) => x - y);
      results.push(`${label}: p50 ${runs[15].toFixed(2)} ms, max ${runs.at(-1)!.toFixed(2)} ms`);
      if (label === 'middle') {
        const explain = base ? `explain (analyze, buffers) ${compiled.sql}` : `explain query plan ${compiled.sql}`;
        const plan = await db.executeQuery(CompiledQuery.raw(explain, [...compiled.parameters]));
        console.log(`plan (${database.dialect.name}, n=${n}):\n  ` + plan.rows.map((r: any) => r['QUERY PLAN'] ?? r.detail).join('\n  '));
      }
    }
    console.log(`${database.dialect.name} n=${n} (seeded in ${(seeded / 1000).toFixed(1)} s): GET /events?after=<id>&limit=100 → ${results.join('; ')}`);
  } finally {
    await database.close();
    await drop();
  }
}
