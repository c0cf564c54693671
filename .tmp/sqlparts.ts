import Database from '../src/db/sqlite-driver.mjs';
const raw = new Database(process.argv[2], { readonly: true });
raw.pragma('cache_size = -32768');
const tenantId = (raw.prepare('select tenant_id from contacts limit 1').get() as any).tenant_id;
const cols = `"id", "first_name", "last_name", "email", "phone", "company_id", "owner_id", "score", "custom_properties", "created_at", "updated_at"`;
const tags = `(select string_agg(rt.tag_id, ',') from record_tags rt where rt.tenant_id = "contacts"."tenant_id" and rt.object_type = 'contact' and rt.object_id = "contacts"."id") as "tag_ids"`;
const variants: Record<string, string> = {
  ids_only: `select id from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50`,
  ids_noDeleted: `select id from contacts where tenant_id = ? order by created_at desc, id desc limit 50`,
  cols: `select ${cols} from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50`,
  cols_tags: `select ${cols}, ${tags} from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50`,
  one_pk: `select ${cols} from contacts where tenant_id = ? and id = (select id from contacts where tenant_id = ?1 limit 1)`,
  count: `select count(*) from contacts where tenant_id = ? and deleted_at is null`,
};
console.log(raw.pragma('page_size'), raw.pragma('mmap_size'), raw.prepare("select count(*) n from contacts").get());
for (const [name, s] of Object.entries(variants)) {
  const st = raw.prepare(s);
  const run = () => st.raw(true).all(tenantId);
  for (let k = 0; k < 200; k++) run();
  const N = name === 'count' ? 20 : 2000;
  const t = process.hrtime.bigint();
  for (let k = 0; k < N; k++) run();
  console.log(name, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1), 'µs');
  const t2 = process.hrtime.bigint();
  raw.exec('begin');
  for (let k = 0; k < N; k++) run();
  raw.exec('commit');
  console.log(name, 'in txn', (Number(process.hrtime.bigint() - t2) / N / 1000).toFixed(1), 'µs');
}
console.log(raw.prepare("select name, stat from sqlite_stat1 where tbl='contacts'").all());
