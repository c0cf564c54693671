import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Duplicates (CONTRACT D.3), kept by the database in the transaction of every write (no write path computes them):
 *
 * 1. The rules' keys are SQL functions of the row with the same names in both databases: SQLite's are the
 *    JavaScript of domain/duplicate-keys.mjs, registered on every connection that writes (db/sqlite-open.ts, the
 *    read processes, bench/seed.ts); PostgreSQL's are created here, IMMUTABLE, and
 *    test/domain/duplicate-keys.test.ts checks that both give the same keys. The CNPJ root and the phone need
 *    none. They are frozen here: a change of a rule needs a later migration that replaces the function and
 *    recomputes the two tables below.
 * 2. `duplicate_keys`: one row per live record and key it holds (`kind` names the rule's key); and
 *    `duplicate_key_counts`: how many live records hold each key. Triggers on contacts and companies keep both
 *    (row triggers on both; an update moves a key only when a column it is made of, or liveness, changed).
 * 3. A duplicates page reads the counts' partial index over the keys held twice or more, and their holders by
 *    key: O(duplicates), never a scan of the tenant's records. Measured first, and left: a GROUP BY over partial
 *    expression indexes (290 ms at 100,000 contacts on SQLite; PostgreSQL cannot read an expression index alone,
 *    and computed every record's key: 3.7 s), then the counts with expression indexes to find the holders
 *    (SQLite's planner reaches an expression index only from listed values, and the server's statistics keep
 *    a sampled line for such indexes, which misled other plans).
 */

/** A rule's key: [kind, table, first key, second key ('' when one), condition]; `R.` stands for the row. */
const KINDS: readonly [string, string, string, string, string][] = [
  ['contacts.email', 'contacts', 'crm_dup_email(R.email)', "''", 'R.email is not null'],
  ['contacts.name_company', 'contacts', 'crm_dup_person(R.first_name, R.last_name)', 'R.company_id', 'R.company_id is not null'],
  ['contacts.name_domain', 'contacts', 'crm_dup_person(R.first_name, R.last_name)', 'crm_dup_email_domain(R.email)', 'R.email is not null'],
  ['companies.name', 'companies', 'crm_dup_company_name(R.name)', "''", 'R.name is not null'],
  ['companies.domain', 'companies', 'crm_dup_domain(R.domain)', "''", 'R.domain is not null'],
  ['companies.cnpj', 'companies', 'substr(R.cnpj, 1, 8)', "''", 'R.cnpj is not null'],
  ['companies.phone', 'companies', 'R.phone', "''", 'R.phone is not null'],
];
type Kind = (typeof KINDS)[number];

const TABLES = ['contacts', 'companies'] as const;
/** The columns the keys are made of (and liveness): an update of other columns moves no key, and fires no trigger here. */
const KEY_COLUMNS: Record<(typeof TABLES)[number], string[]> = {
  contacts: ['first_name', 'last_name', 'email', 'company_id', 'deleted_at'],
  companies: ['name', 'domain', 'cnpj', 'phone', 'deleted_at'],
};
const kindsOf = (table: string) => KINDS.filter((k) => k[1] === table);
const on = (text: string, row: string) => text.replaceAll('R.', `${row}.`);
/** Whether `row` holds the kind's key: live, with the columns, and a key that is not null. */
const holds = ([, , k1, k2, cond]: Kind, row: string) => on(`(R.deleted_at is null and ${cond} and ${k1} is not null and ${k2} is not null)`, row);
/** The kind's key of `row` as the columns of duplicate_keys (tenant_id, kind, k1, k2, record_id). */
const keyOf = (k: Kind, row: string) => `${row}.tenant_id, '${k[0]}', ${on(k[2], row)}, ${on(k[3], row)}, ${row}.id`;

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
  const withoutRowid = dialect === 'postgres' ? '' : ' without rowid';
  await sql
    .raw(
      `create table duplicate_keys (tenant_id text not null, kind text not null, k1 text not null, k2 text not null, record_id text not null,
  primary key (tenant_id, kind, k1, k2, record_id))${withoutRowid}`,
    )
    .execute(db);
  await sql
    .raw(
      `create table duplicate_key_counts (tenant_id text not null, kind text not null, k1 text not null, k2 text not null, n integer not null,
  primary key (tenant_id, kind, k1, k2))${withoutRowid}`,
    )
    .execute(db);
  await sql.raw('create index duplicate_key_counts__shared on duplicate_key_counts (tenant_id, kind, n, k1, k2) where n > 1').execute(db);
  for (const k of KINDS) {
    await sql.raw(`insert into duplicate_keys (tenant_id, kind, k1, k2, record_id) select ${keyOf(k, k[1])} from ${k[1]} where ${holds(k, k[1])}`).execute(db);
  }
  await sql
    .raw('insert into duplicate_key_counts (tenant_id, kind, k1, k2, n) select tenant_id, kind, k1, k2, count(*) from duplicate_keys group by 1, 2, 3, 4')
    .execute(db);
  if (dialect === 'postgres') await postgresTriggers(db);
  else await sqliteTriggers(db);
}

/** SQLite: row triggers (one writer at a time); an update moves a key only where the row's key or liveness changed. */
async function sqliteTriggers(db: Kysely<any>): Promise<void> {
  const add = (k: Kind, row: string, when: string) =>
    `  insert into duplicate_keys (tenant_id, kind, k1, k2, record_id) select ${keyOf(k, row)} where ${when};
  insert into duplicate_key_counts (tenant_id, kind, k1, k2, n) select ${row}.tenant_id, '${k[0]}', ${on(k[2], row)}, ${on(k[3], row)}, 1 where ${when}
    on conflict (tenant_id, kind, k1, k2) do update set n = n + 1;`;
  const remove = (k: Kind, row: string, when: string) => {
    const key = `tenant_id = ${row}.tenant_id and kind = '${k[0]}' and k1 = ${on(k[2], row)} and k2 = ${on(k[3], row)}`;
    return `  delete from duplicate_keys where ${when} and ${key} and record_id = ${row}.id;
  update duplicate_key_counts set n = n - 1 where ${when} and ${key};
  delete from duplicate_key_counts where ${when} and ${key} and n <= 0;`;
  };
  const same = (k: Kind) => `(${on(k[2], 'old')} = ${on(k[2], 'new')} and ${on(k[3], 'old')} = ${on(k[3], 'new')} and old.id = new.id)`;
  for (const table of TABLES) {
    const kinds = kindsOf(table);
    const body = {
      insert: kinds.map((k) => add(k, 'new', holds(k, 'new'))),
      delete: kinds.map((k) => remove(k, 'old', holds(k, 'old'))),
      update: kinds.flatMap((k) => [
        remove(k, 'old', `${holds(k, 'old')} and not (${holds(k, 'new')} and ${same(k)})`),
        add(k, 'new', `${holds(k, 'new')} and not (${holds(k, 'old')} and ${same(k)})`),
      ]),
    };
    for (const [event, lines] of Object.entries(body)) {
      const on_ = event === 'update' ? `update of ${KEY_COLUMNS[table].join(', ')}` : event;
      await sql.raw(`create trigger ${table}__dup_${event} after ${on_} on ${table} begin\n${lines.join('\n')}\nend`).execute(db);
    }
  }
}

/**
 * PostgreSQL: row triggers, the update's only when a key column changed (its WHEN is evaluated without calling
 * the function). Statement triggers over transition tables were measured first: their statements were planned
 * again at every call, and made a single create 3 ms slower (batch creates 1.5–1.9×); row triggers keep their
 * plans. Each key's count row is locked by the write that moves it until the commit; two transactions writing
 * records of the same keys in opposite orders can deadlock, and PostgreSQL then aborts one (as for any two rows).
 */
async function postgresTriggers(db: Kysely<any>): Promise<void> {
  const add = (k: Kind, row: string) =>
    `      insert into duplicate_keys (tenant_id, kind, k1, k2, record_id) values (${row}.tenant_id, '${k[0]}', a1, a2, ${row}.id);
      insert into duplicate_key_counts as c (tenant_id, kind, k1, k2, n) values (${row}.tenant_id, '${k[0]}', a1, a2, 1)
        on conflict (tenant_id, kind, k1, k2) do update set n = c.n + 1;`;
  const remove = (k: Kind, row: string) =>
    `      delete from duplicate_keys where tenant_id = ${row}.tenant_id and kind = '${k[0]}' and k1 = r1 and k2 = r2 and record_id = ${row}.id;
      update duplicate_key_counts set n = n - 1 where tenant_id = ${row}.tenant_id and kind = '${k[0]}' and k1 = r1 and k2 = r2 returning n into left_;
      if left_ <= 0 then delete from duplicate_key_counts where tenant_id = ${row}.tenant_id and kind = '${k[0]}' and k1 = r1 and k2 = r2; end if;`;
  // r1/r2: the key the old row held (null: none); a1/a2: the key the new row holds. A key held before and after moves nothing.
  const kind = (k: Kind) => `
    r1 := null; r2 := null; a1 := null; a2 := null;
    if tg_op <> 'INSERT' then if ${holds(k, 'old')} then r1 := ${on(k[2], 'old')}; r2 := ${on(k[3], 'old')}; end if; end if;
    if tg_op <> 'DELETE' then if ${holds(k, 'new')} then a1 := ${on(k[2], 'new')}; a2 := ${on(k[3], 'new')}; end if; end if;
    if r1 is not null and (a1 is null or r1 <> a1 or r2 <> a2) then
${remove(k, 'old')}
    end if;
    if a1 is not null and (r1 is null or r1 <> a1 or r2 <> a2) then
${add(k, 'new')}
    end if;`;
  for (const table of TABLES) {
    await sql
      .raw(
        `create function crm_${table}_dup() returns trigger language plpgsql as $f$
declare r1 text; r2 text; a1 text; a2 text; left_ integer;
begin${kindsOf(table).map(kind).join('')}
  return null;
end
$f$`,
      )
      .execute(db);
    const changed = KEY_COLUMNS[table].map((c) => `old.${c} is distinct from new.${c}`).join(' or ');
    await sql.raw(`create trigger ${table}__dup after insert or delete on ${table} for each row execute function crm_${table}_dup()`).execute(db);
    await sql
      .raw(
        `create trigger ${table}__dup_update after update of ${KEY_COLUMNS[table].join(', ')} on ${table} for each row when (${changed}) execute function crm_${table}_dup()`,
      )
      .execute(db);
  }
}
