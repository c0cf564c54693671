import Database from '../src/db/sqlite-driver.mjs';
import { Kysely, SqliteDialect } from 'kysely';
import * as repo from '/work/main/src/modules/contacts/contacts.repo.ts';
const file = process.argv[2];
const raw = new Database(file, { readonly: true });
raw.pragma('cache_size = -32768');
raw.function('crm_fold', { deterministic: true }, (s: unknown) => s);
const db = new Kysely<any>({ dialect: new SqliteDialect({ database: raw }) });
const tenantId = (raw.prepare('select tenant_id from contacts limit 1').get() as any).tenant_id;
const { base, select } = repo.contactListing(db as any, tenantId, { includeDeleted: false } as any);
for (const offset of [0, 450, 950]) {
  const q = select(base).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(50).offset(offset).compile();
  if (offset === 0) console.log(q.sql);
  const st = raw.prepare(q.sql);
  console.log(raw.prepare('explain query plan ' + q.sql).all(...q.parameters).map((r: any) => r.detail).join(' | '));
  for (let k = 0; k < 200; k++) st.raw(true).all(...q.parameters);
  const t = process.hrtime.bigint();
  const N = 1000;
  let out = '';
  for (let k = 0; k < N; k++) st.raw(true).all(...q.parameters);
  const t2 = process.hrtime.bigint();
  for (let k = 0; k < N; k++) out = JSON.stringify({ id: 1, columns: st.columns().map((c) => c.name), rows: st.raw(true).all(...q.parameters) });
  const t3 = process.hrtime.bigint();
  console.log(`offset ${offset}: stmt ${Number(t2 - t) / N / 1000} µs; stmt+json ${Number(t3 - t2) / N / 1000} µs; json bytes ${out.length}`);
}
