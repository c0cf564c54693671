import Database from '../src/db/sqlite-driver.mjs';
const raw = new Database(process.argv[2], { readonly: true });
raw.pragma('cache_size = -32768');
const tenantId = (raw.prepare('select tenant_id from contacts limit 1').get() as any).tenant_id;
const cols = `"id", "first_name", "last_name", "email", "phone", "company_id", "owner_id", "score", "custom_properties", "created_at", "updated_at"`;
const inner = `select ${cols} from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50`;
const variants: Record<string, string> = {
  cols: inner,
  cols_counted: `select count(*), max(length(first_name)+length(email)+length(custom_properties)+length(updated_at)) from (${inner})`,
  one_col_from_table: `select first_name from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50`,
  json_row: `select json_array(${cols}) from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit 50`,
  json_page: `select json_group_array(json_array(${cols})) from (${inner})`,
};
for (const [name, s] of Object.entries(variants)) {
  const st = raw.prepare(s);
  const run = () => st.raw(true).all(tenantId);
  for (let k = 0; k < 300; k++) run();
  const N = 3000;
  const t = process.hrtime.bigint();
  for (let k = 0; k < N; k++) run();
  console.log(name, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(1), 'µs');
}
