import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Duplicates (CONTRACT D.3): one partial expression index per rule's key, so that the keys held by two or more
 * live records are an index-only GROUP BY of the tenant's entries, and the database keeps them in the
 * transaction of every write (no write path computes them). Live rows only, rows without the key left out.
 *
 * The keys are SQL functions of the row with the same names in both databases (so the queries are one text):
 * SQLite's are the JavaScript of domain/duplicate-keys.mjs, registered on every connection (db/sqlite-open.ts,
 * the read processes, bench/seed.ts); PostgreSQL's are created here, IMMUTABLE, and
 * test/domain/duplicate-keys.test.ts checks that both give the same keys. They are frozen here: a change of a
 * rule needs a later migration that replaces the function and rebuilds its index.
 *
 * The CNPJ root and the phone need no function: `substr(cnpj, 1, 8)` and `phone` read the same in both.
 */

/** [index, table, key expressions, partial condition]; modules/shared/duplicates.repo.ts queries them with the same texts. */
const INDEXES: readonly [string, string, string, string][] = [
  ['contacts__dup_email', 'contacts', 'crm_dup_email(email)', 'deleted_at is null and email is not null'],
  ['contacts__dup_name_company', 'contacts', 'crm_dup_person(first_name, last_name), company_id', 'deleted_at is null and company_id is not null'],
  ['contacts__dup_name_domain', 'contacts', 'crm_dup_person(first_name, last_name), crm_dup_email_domain(email)', 'deleted_at is null and email is not null'],
  ['companies__dup_name', 'companies', 'crm_dup_company_name(name)', 'deleted_at is null'],
  ['companies__dup_domain', 'companies', 'crm_dup_domain(domain)', 'deleted_at is null and domain is not null'],
  ['companies__dup_cnpj', 'companies', 'substr(cnpj, 1, 8)', 'deleted_at is null and cnpj is not null'],
  ['companies__dup_phone', 'companies', 'phone', 'deleted_at is null and phone is not null'],
];

// The twins of domain/duplicate-keys.mjs, rule by rule (the comments there say why each is so). Regular
// expressions are written with ASCII classes only, which PostgreSQL's and JavaScript's engines read alike; the
// fold is crm_fold (migration 009). Whitespace: [ \t\n\r\f\v], never \s (locale-dependent here, Unicode there).
const FUNCTIONS = `
create or replace function crm_dup_email(e text) returns text
language sql immutable strict parallel safe
as $f$
  select case when p is null then null
    when d in ('gmail.com', 'googlemail.com') then replace(l, '.', '') || '@gmail.com'
    else l || '@' || d end
  from (
    select p,
      case when strpos(substr(le, 1, p - 1), '+') > 1 then split_part(substr(le, 1, p - 1), '+', 1) else substr(le, 1, p - 1) end as l,
      substr(le, p + 1) as d
    from (select le, nullif(length(le) - strpos(reverse(le), '@') + 1, length(le) + 1) as p from (select lower(e collate "C") as le) a) b
  ) c
$f$;

create or replace function crm_dup_email_domain(e text) returns text
language sql immutable strict parallel safe
as $f$
  select case when strpos(e, '@') = 0 then null else lower(substr(e, length(e) - strpos(reverse(e), '@') + 2) collate "C") end
$f$;

create or replace function crm_dup_person(f text, l text) returns text
language sql immutable parallel safe
as $f$
  select case when f is null and l is null then null
    else nullif(btrim(regexp_replace(crm_fold(coalesce(f, '') || ' ' || coalesce(l, '')), '[ \\t\\n\\r\\f\\v]+', ' ', 'g'), ' '), '') end
$f$;

create or replace function crm_dup_company_name(n text) returns text
language sql immutable strict parallel safe
as $f$
  select nullif(regexp_replace(
    btrim(regexp_replace(regexp_replace(regexp_replace(crm_fold(n), '[./]', '', 'g'), '[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]+', ' ', 'g'), '[ \\t\\n\\r\\f\\v]+', ' ', 'g'), ' '),
    '( (ltda|sa|me|epp|eireli|inc|llc|ltd|gmbh))+$', ''), '')
$f$;

create or replace function crm_dup_domain(d text) returns text
language sql immutable strict parallel safe
as $f$
  select coalesce(
    substring(lower(d collate "C") from '[^.]+\\.(?:com|net|org|gov|edu|co|ac|or|ne|go|mil|nom|art|ind|adv|eng|med|blog|app|dev)\\.[a-z]{2}$'),
    substring(lower(d collate "C") from '[^.]+\\.[^.]+$'),
    lower(d collate "C"))
$f$;
`;

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') await sql.raw(FUNCTIONS).execute(db);
  for (const [name, table, keys, where] of INDEXES) {
    await sql.raw(`create index ${name} on ${table} (tenant_id, ${keys}) where ${where}`).execute(db);
  }
}
