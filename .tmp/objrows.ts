import Database from '../src/db/sqlite-driver.mjs';
const raw = new Database(process.argv[2], { readonly: true });
raw.pragma('cache_size = -16384');
const tenantId = (raw.prepare('select tenant_id from contacts limit 1').get() as any).tenant_id;
const cols = `"id", "first_name", "last_name", "email", "phone", "company_id", "owner_id", "score", "custom_properties", "created_at", "updated_at"`;
const tags = `(select string_agg(rt.tag_id, ',') from record_tags rt where rt.tenant_id = "contacts"."tenant_id" and rt.object_type = 'contact' and rt.object_id = "contacts"."id") as "tag_ids"`;
const text = `select ${cols}, ${tags}, created_at as __sort_value from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50 offset ?`;
const a = raw.prepare(text);
const b = raw.prepare(text); b.raw(true);
const names = b.columns().map((c) => c.name);
const build = new Function('r', `return {${names.map((n, i) => `${JSON.stringify(n)}: r[${i}]`).join(', ')}};`) as (r: unknown[]) => object;
const variants: Record<string, (off: number) => unknown> = {
  objects: (off) => a.all(tenantId, off),
  raw_loop: (off) => b.all(tenantId, off).map((r: any) => { const o: any = {}; for (let j = 0; j < names.length; j++) o[names[j]] = r[j]; return o; }),
  raw_literal: (off) => (b.all(tenantId, off) as unknown[][]).map(build),
};
raw.exec('begin');
for (let round = 0; round < 3; round++) for (const [name, f] of Object.entries(variants)) {
  for (let k = 0; k < 200; k++) f(k % 20 * 50);
  const N = 2000, t = process.hrtime.bigint();
  for (let k = 0; k < N; k++) f(k % 20 * 50);
  console.log(round, name, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1), 'µs');
}
