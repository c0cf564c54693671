import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * PostgreSQL: migration 022's row triggers again, each key computed once and the keys a write adds written by two
 * statements (the holders, then the counts) instead of two per rule. The keys, the rules and the tables are 022's.
 *
 * Why: 022's function evaluated every key twice (in the condition, then in the assignment; a contact's person key
 * four times) and ran two statements per rule, six for a contact: ~0.18 ms of PostgreSQL's CPU per inserted
 * contact, which made a 300,000-contact INSERT … SELECT pass the statement timeout and was a share of every
 * create's cost. A key is held exactly when the row is live and both its parts are non-null (every part is null
 * when its source column is: the key functions are strict, or null on null sources), so the condition is the key.
 *
 * Removals (a deleted row, a key column changed) stay one statement group per rule: they are rare, and a count that
 * reaches 0 is deleted. Additions are one multi-row statement each, in the rules' fixed order, so that two writers
 * lock count rows in the same order. SQLite keeps 022's triggers (statements in a trigger cost it microseconds).
 */
const RULES: Record<'contacts' | 'companies', readonly [kind: string, k1: string, k2: string][]> = {
  contacts: [
    ['contacts.email', 'crm_dup_email(R.email)', "''"],
    ['contacts.name_company', 'crm_dup_person(R.first_name, R.last_name)', 'R.company_id'],
    ['contacts.name_domain', 'crm_dup_person(R.first_name, R.last_name)', 'crm_dup_email_domain(R.email)'],
  ],
  companies: [
    ['companies.name', 'crm_dup_company_name(R.name)', "''"],
    ['companies.domain', 'crm_dup_domain(R.domain)', "''"],
    ['companies.cnpj', 'substr(R.cnpj, 1, 8)', "''"],
    ['companies.phone', 'R.phone', "''"],
  ],
};

function triggerFunction(table: 'contacts' | 'companies'): string {
  const rules = RULES[table];
  // Each distinct key expression once per row version: n<i> for the new row, o<i> for the old one.
  const exprs = [...new Set(rules.flatMap(([, k1, k2]) => [k1, k2]).filter((e) => e !== "''"))];
  const v = (e: string, side: 'n' | 'o') => (e === "''" ? "''" : `${side}${exprs.indexOf(e)}`);
  const assign = (side: 'n' | 'o', row: string) => exprs.map((e, i) => `${side}${i} := ${e.replaceAll('R.', `${row}.`)};`).join(' ');
  const declare = exprs.flatMap((_, i) => [`n${i} text;`, `o${i} text;`]).join(' ');
  const held = (k1: string, k2: string, side: 'n' | 'o') => `(${v(k1, side)} is not null and ${v(k2, side)} is not null)`;
  const same = (k1: string, k2: string) => `(${v(k1, 'o')} = ${v(k1, 'n')} and ${v(k2, 'o')} = ${v(k2, 'n')})`;
  const removes = rules
    .map(
      ([kind, k1, k2]) => `
  if ${held(k1, k2, 'o')} and not (${held(k1, k2, 'n')} and ${same(k1, k2)}) then
    delete from duplicate_keys where tenant_id = old.tenant_id and kind = '${kind}' and k1 = ${v(k1, 'o')} and k2 = ${v(k2, 'o')} and record_id = old.id;
    update duplicate_key_counts set n = n - 1 where tenant_id = old.tenant_id and kind = '${kind}' and k1 = ${v(k1, 'o')} and k2 = ${v(k2, 'o')} returning n into left_;
    if left_ <= 0 then delete from duplicate_key_counts where tenant_id = old.tenant_id and kind = '${kind}' and k1 = ${v(k1, 'o')} and k2 = ${v(k2, 'o')}; end if;
  end if;`,
    )
    .join('');
  // g<i>: whether the new row holds rule i's key and the old one did not hold the same one; the keys to add.
  const gets = rules.map(([, k1, k2], i) => `g${i} := ${held(k1, k2, 'n')} and not (${held(k1, k2, 'o')} and ${same(k1, k2)});`).join(' ');
  const values = rules.map(([kind, k1, k2], i) => `('${kind}', ${v(k1, 'n')}, ${v(k2, 'n')}, g${i})`).join(', ');
  return `create or replace function crm_${table}_dup() returns trigger language plpgsql as $f$
declare ${declare} ${rules.map((_, i) => `g${i} boolean;`).join(' ')} left_ integer;
begin
  if tg_op <> 'DELETE' and new.deleted_at is null then ${assign('n', 'new')} end if;
  if tg_op <> 'INSERT' and old.deleted_at is null then ${assign('o', 'old')} end if;${removes}
  if tg_op <> 'DELETE' then
    ${gets}
    if ${rules.map((_, i) => `g${i}`).join(' or ')} then
      insert into duplicate_keys (tenant_id, kind, k1, k2, record_id)
        select new.tenant_id, a.kind, a.k1, a.k2, new.id from (values ${values}) a(kind, k1, k2, go) where a.go;
      insert into duplicate_key_counts as c (tenant_id, kind, k1, k2, n)
        select new.tenant_id, a.kind, a.k1, a.k2, 1 from (values ${values}) a(kind, k1, k2, go) where a.go
        on conflict (tenant_id, kind, k1, k2) do update set n = c.n + 1;
    end if;
  end if;
  return null;
end
$f$`;
}

/**
 * crm_dup_email as one expression: 022's nested sub-selects made PostgreSQL run a small query per call (18 µs, the
 * largest part of the function's cost per contact); one expression of a non-STRICT SQL function is inlined into the
 * caller's plan (022's was STRICT, which keeps a CASE from being inlined). The same key (test/domain/duplicate-keys.test.ts checks it against domain/duplicate-keys.mjs).
 * L and D: the address's local part and domain around its last `@`, lower case.
 */
const L = `lower(substr(e, 1, length(e) - strpos(reverse(e), '@')) collate "C")`;
const D = `lower(substr(e, length(e) - strpos(reverse(e), '@') + 2) collate "C")`;
const B = `(case when strpos(${L}, '+') > 1 then split_part(${L}, '+', 1) else ${L} end)`;
const EMAIL_KEY = `create or replace function crm_dup_email(e text) returns text
language sql immutable called on null input parallel safe
as $f$
  select case when e is null or strpos(e, '@') = 0 then null
    when ${D} in ('gmail.com', 'googlemail.com') then replace(${B}, '.', '') || '@gmail.com'
    else ${B} || '@' || ${D} end
$f$`;

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql.raw(EMAIL_KEY).execute(db);
  for (const table of ['contacts', 'companies'] as const) await sql.raw(triggerFunction(table)).execute(db);
}
