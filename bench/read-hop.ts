// What one hop to a read process costs, with no SQL: the parent sends `{ id, sql, params }` as the read pool
// does (sqlite-reader.ts: JSON IPC, ~900 bytes of SQL) and the child answers one row. Prints the round trip
// and the parent's CPU per round trip (user + system), the share of the event loop every page, filter and
// search pays for running its statement in a process of its own.
//   node --import tsx bench/read-hop.ts [round trips=20000]
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === 'child') {
  process.on('message', (m: { id: number }) => process.send!({ id: m.id, columns: ['a'], rows: [[1]] }));
} else {
  const total = Number(process.argv[2] ?? 20_000);
  const warmup = Math.min(1_000, Math.floor(total / 10));
  const child = fork(fileURLToPath(import.meta.url), ['child'], { serialization: 'json', execArgv: ['--import', 'tsx'] });
  const sql = 'select '.padEnd(Number(process.env.SQLLEN ?? 900), 'x');
  let started = 0n;
  let cpu = process.cpuUsage();
  child.on('message', (m: { id: number }) => {
    if (m.id === warmup) {
      started = process.hrtime.bigint();
      cpu = process.cpuUsage();
    }
    if (m.id < total) return void child.send({ id: m.id + 1, sql, params: ['ten_x', 'con_y'] });
    const n = total - warmup;
    const used = process.cpuUsage(cpu);
    const us = (v: number) => (v / n).toFixed(1);
    console.log(
      `read hop: ${(Number(process.hrtime.bigint() - started) / n / 1000).toFixed(1)} µs a round trip; ` +
        `parent CPU ${us(used.user + used.system)} µs (system ${us(used.system)}) per round trip, over ${n} round trips`,
    );
    child.kill();
  });
  child.send({ id: 1, sql, params: [] });
}
