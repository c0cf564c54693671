import Database from '../src/db/sqlite-driver.mjs';
const raw = new Database(process.argv[2], { readonly: true });
raw.pragma('cache_size = -16384');
const tenantId = (raw.prepare('select tenant_id from contacts limit 1').get() as any).tenant_id;
const cols = `"id", "first_name", "last_name", "email", "phone", "company_id", "owner_id", "score", "custom_properties", "created_at", "updated_at"`;
const tags = `(select string_agg(rt.tag_id, ',') from record_tags rt where rt.tenant_id = "contacts"."tenant_id" and rt.object_type = 'contact' and rt.object_id = "contacts"."id") as "tag_ids"`;
const st = raw.prepare(`select ${cols}, ${tags}, created_at as s from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50 offset ?`);
for (const off of [0, 950, 1000, 5000, 10000, 50000]) {
  for (let k = 0; k < 100; k++) st.raw(true).all(tenantId, off);
  const N = 1000, t = process.hrtime.bigint();
  raw.exec('begin');
  for (let k = 0; k < N; k++) st.raw(true).all(tenantId, off);
  raw.exec('commit');
  console.log(off, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1), 'µs');
}
