// Bench data set: one tenant (setup apply), then 100k contacts, 20k deals and 50k activities with three
// links each (`--large`: a million contacts), written directly in bulk (the API would take minutes; the
// rules do not matter for load): on SQLite prepared statements of a connection of its own in large
// transactions, on PostgreSQL one `insert … select * from unnest($1::type[], …)` per chunk. Rows are made
// and written a chunk at a time, so a million contacts are never all in memory. Progress goes to stderr.
// `seedNoisyTenant` adds tenant B of the noisy-neighbour scenario (bench/noisy.ts).
import { sql, type Insertable } from 'kysely';
import type BetterSqlite from 'better-sqlite3';
import { applySetup } from '../src/admin/setup.js';
import { CITIES, FIRST_NAMES, LAST_NAMES, Rand, asciiSlug, mobileFor, sampleCompanies } from '../src/admin/demo-data.js';
import { generateApiKey } from '../src/auth/keys.js';
import type { Database, Db } from '../src/db/index.js';
import SqliteDatabase from '../src/db/sqlite-driver.mjs';
import { registerDuplicateKeyFunctions } from '../src/domain/duplicate-keys.mjs';
import type { DB } from '../src/db/tables/schema.js';
import { newId } from '../src/util/ids.js';
import { withSearchText } from '../src/db/search-text.js';
import { REALISTIC_PROPERTIES, REALISTIC_USERS, type RealisticProperties } from './realistic.js';

export interface SeedCounts {
  companies: number;
  contacts: number;
  deals: number;
  activities: number;
}

export const DEFAULT_COUNTS: SeedCounts = { companies: 2_000, contacts: 100_000, deals: 20_000, activities: 50_000 };
/** `--small`: a quick check. */
export const SMALL_COUNTS: SeedCounts = { companies: 200, contacts: 10_000, deals: 2_000, activities: 5_000 };
/** `--large`: a million contacts. */
export const LARGE_COUNTS: SeedCounts = { companies: 10_000, contacts: 1_000_000, deals: 100_000, activities: 100_000 };

export interface Seeded {
  tenantId: string;
  /** Full-scope key with an effectively unlimited rate limit (so 429s never pollute the numbers). */
  key: string;
  users: string[];
  pipelineId: string;
  stageIds: string[];
  contactIds: string[];
  companyIds: string[];
  dealIds: string[];
  counts: SeedCounts;
  seconds: number;
}

// NOTE: the bench key bypasses the 1000/min cap of CONTRACT A.1 on purpose (written straight to the
// table): a benchmark measures throughput, not the limiter's 429s.
const BENCH_RATE_LIMIT = 1_000_000_000;

const SETUP = {
  tenant: { name: 'Bench Comércio Ltda' },
  users: [
    { ref: 'u1', name: 'Ana Souza', email: 'ana@bench.test' },
    { ref: 'u2', name: 'Bruno Lima', email: 'bruno@bench.test' },
    { ref: 'u3', name: 'Carla Dias', email: 'carla@bench.test' },
    { ref: 'u4', name: 'Diego Rocha', email: 'diego@bench.test' },
  ],
  pipelines: [
    {
      ref: 'sales',
      name: 'Vendas',
      isDefault: true,
      stages: [
        { ref: 's1', name: 'Lead', probability: 10 },
        { ref: 's2', name: 'Qualificado', probability: 30 },
        { ref: 's3', name: 'Proposta', probability: 60 },
        { ref: 's4', name: 'Negociação', probability: 80 },
        { ref: 'won', name: 'Ganho', probability: 100, isWonStage: true },
        { ref: 'lost', name: 'Perdido', probability: 0, isLostStage: true },
      ],
    },
  ],
  lossReasons: [{ ref: 'price', name: 'Preço' }],
  properties: [
    {
      ref: 'segment',
      objectType: 'contact',
      internalName: 'segment',
      label: 'Segmento',
      type: 'select',
      options: [
        { value: 'smb', label: 'PME' },
        { value: 'ent', label: 'Enterprise' },
      ],
    },
  ],
};

const T0 = new Date('2025-01-01T00:00:00.000Z').getTime();
/** The i-th of n timestamps spread over 300 days from 2025-01-01. */
export const iso = (i: number, n: number) => new Date(T0 + Math.floor((i / n) * 300 * 86_400_000)).toISOString();

/** A full-scope key with BENCH_RATE_LIMIT, written straight to the table; returns the plaintext key. */
export async function insertBenchKey(db: Db, tenantId: string, userId: string, name: string): Promise<string> {
  const { key, hash, prefix } = generateApiKey();
  await db
    .insertInto('api_keys')
    .values({
      tenant_id: tenantId,
      id: newId('key'),
      user_id: userId,
      name,
      prefix,
      key_hash: hash,
      scopes: JSON.stringify(['*']),
      rate_limit: BENCH_RATE_LIMIT,
      created_at: iso(0, 1),
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
    })
    .execute();
  return key;
}

/** Bulk inserts, bypassing Kysely's query building (which cost more than the inserts themselves). */
export interface Bulk {
  /** `rows` (all with the same columns) in one transaction. */
  insert<T extends keyof DB & string>(table: T, rows: Insertable<DB[T]>[]): Promise<void>;
  /**
   * Drops `table`'s secondary indexes until the returned function builds them again (SQLite; nothing on
   * PostgreSQL). Building an index sorts its keys once; inserting a million rows into eight indexes in the
   * order of the rows' random ids and e-mails cost 56 s of a 73 s `--large` seed (2026-11-27).
   */
  withoutIndexes(table: keyof DB & string): () => void;
  close(): void;
}

/** Rows per transaction (SQLite) or statement (PostgreSQL): large enough to be fast, small enough to keep the WAL modest. */
const CHUNK = 20_000;

/**
 * SQLite: a connection of its own to the server's file (WAL: the migrating connection stays open, idle),
 * one prepared statement per table, a transaction per call.
 */
function sqliteBulk(file: string): Bulk {
  const raw = new SqliteDatabase(file);
  raw.pragma('busy_timeout = 5000');
  // Migration 022's expression indexes call the duplicate keys' functions on every insert.
  registerDuplicateKeyFunctions(raw);
  // 1 GiB of page cache: the pages of indexes written in random order (ids, e-mails) stay in memory
  // between transactions instead of being read back from the file.
  raw.pragma('cache_size = -1048576');
  // A crash during the seed voids the bench anyway: no sync at each commit.
  raw.pragma('synchronous = OFF');
  const statements = new Map<string, BetterSqlite.Statement>();
  const run = raw.transaction((stmt: BetterSqlite.Statement, rows: object[]) => {
    for (const r of rows) stmt.run(r);
  });
  return {
    async insert(table, rows) {
      if (rows.length === 0) return;
      const cols = Object.keys(rows[0]);
      const key = `${table}(${cols.join()})`;
      let stmt = statements.get(key);
      if (!stmt) {
        stmt = raw.prepare(`insert into "${table}" (${cols.map((c) => `"${c}"`).join(', ')}) values (${cols.map((c) => `@${c}`).join(', ')})`);
        statements.set(key, stmt);
      }
      run(stmt, rows);
    },
    withoutIndexes(table) {
      const indexes = raw.prepare("select name, sql from sqlite_master where type = 'index' and tbl_name = ? and sql is not null").all(table) as {
        name: string;
        sql: string;
      }[];
      for (const i of indexes) raw.exec(`drop index "${i.name}"`);
      statements.clear();
      return () => {
        for (const i of indexes) raw.exec(i.sql);
      };
    },
    close: () => raw.close(),
  };
}

/** PostgreSQL: one statement per call, a column = one array parameter cast to the column's type. */
function postgresBulk(database: Database): Bulk {
  const pool = database.pool!;
  const types = new Map<string, Map<string, string>>();
  return {
    async insert(table, rows) {
      if (rows.length === 0) return;
      let t = types.get(table);
      if (!t) {
        const r = await pool.query<{ column_name: string; udt_name: string }>(
          'select column_name, udt_name from information_schema.columns where table_schema = current_schema() and table_name = $1',
          [table],
        );
        t = new Map(r.rows.map((c) => [c.column_name, c.udt_name]));
        types.set(table, t);
      }
      const cols = Object.keys(rows[0]);
      const columns = cols.map((c) => `"${c}"`).join(', ');
      const arrays = cols.map((c, i) => `$${i + 1}::${t.get(c)}[]`).join(', ');
      await pool.query(
        `insert into "${table}" (${columns}) select * from unnest(${arrays})`,
        cols.map((c) => rows.map((r) => (r as Record<string, unknown>)[c])),
      );
    },
    withoutIndexes: () => () => {},
    close: () => {},
  };
}

/** The bulk writer of `database`; on SQLite `sqliteFile` is its file (DATA_DIR/crm.db). */
export function openBulk(database: Database, sqliteFile: string | undefined): Bulk {
  if (database.dialect.name === 'postgres') return postgresBulk(database);
  if (!sqliteFile) throw new Error('seed: the SQLite file is needed for bulk inserts');
  return sqliteBulk(sqliteFile);
}

/** Rows of `table` written CHUNK at a time as they are made; `done` writes the rest. */
export function chunked<T extends keyof DB & string>(bulk: Bulk, table: T, onChunk: (written: number) => void = () => {}) {
  let rows: Insertable<DB[T]>[] = [];
  let written = 0;
  const flush = async () => {
    const r = rows;
    rows = [];
    await bulk.insert(table, r);
    written += r.length;
    onChunk(written);
  };
  return {
    async add(row: Insertable<DB[T]>) {
      rows.push(row);
      if (rows.length >= CHUNK) await flush();
    },
    async done() {
      if (rows.length) await flush();
      return written;
    },
  };
}

/**
 * `n` sample companies of `tenantId` as table rows, owned in turn by `owners`; the rows carry the search column the
 * repos would write (db/search-text.ts).
 */
export function companyRows(rand: Rand, n: number, tenantId: string, owners: readonly string[]) {
  return sampleCompanies(rand, n).map((c, i) =>
    withSearchText('companies', {
      tenant_id: tenantId,
      id: newId('com'),
      name: c.name,
      cnpj: c.cnpj.replace(/\D/g, ''),
      website: `https://www.${c.domain}`,
      domain: c.domain,
      phone: `+55${c.city.ddd}3${String(2_000_000 + i).padStart(7, '0')}`,
      industry: c.industry,
      owner_id: owners[i % owners.length],
      custom_properties: '{}',
      created_at: iso(i, n),
      updated_at: iso(i, n),
      deleted_at: null,
    }),
  );
}

/**
 * Seeds the bench tenant. `sqliteFile`: the SQLite database's file (bulk inserts go through a connection of
 * their own); unused on PostgreSQL.
 */
export async function seed(
  database: Database,
  counts: SeedCounts = DEFAULT_COUNTS,
  progress: (m: string) => void = () => {},
  sqliteFile?: string,
): Promise<Seeded> {
  const started = Date.now();
  const db = database.db;
  const rand = new Rand(7);
  const setup = await applySetup(db, SETUP);
  const tenantId = setup.tenantId;
  const users = ['u1', 'u2', 'u3', 'u4'].map((r) => setup.refs[r]);
  const stageIds = ['s1', 's2', 's3', 's4', 'won', 'lost'].map((r) => setup.refs[r]);
  const key = await insertBenchKey(db, tenantId, users[0], 'Bench');
  const bulk = openBulk(database, sqliteFile);

  // Tags (five, a third of the contacts and deals carry one or two).
  const tagIds = ['Cliente', 'Prospect', 'Parceiro', 'VIP', 'Inativo'].map((name) =>
    withSearchText('tags', {
      tenant_id: tenantId,
      id: newId('tag'),
      name,
      name_key: name.toLowerCase(),
      color: '#e53935',
      created_at: iso(0, 1),
      updated_at: iso(0, 1),
    }),
  );
  await bulk.insert('tags', tagIds);

  const companies = companyRows(rand, counts.companies, tenantId, users);
  for (let i = 0; i < companies.length; i += CHUNK) await bulk.insert('companies', companies.slice(i, i + CHUNK));
  progress(`  companies: ${companies.length}`);

  // What the deals need of each contact, by index (first and last name, company; -1 for none), instead of the rows.
  const contactIds: string[] = new Array(counts.contacts);
  const contactFirst = new Uint16Array(counts.contacts);
  const contactLast = new Uint16Array(counts.contacts);
  const contactCompany = new Int32Array(counts.contacts);
  const restoreIndexes = bulk.withoutIndexes('contacts');
  const contactRows = chunked(bulk, 'contacts', (n) => {
    if (n % 100_000 === 0 || n === counts.contacts) progress(`  contacts: ${n}/${counts.contacts}`);
  });
  for (let i = 0; i < counts.contacts; i++) {
    // rand.int over the list's indexes draws what rand.pick would: the same data set as picking the names.
    const f = rand.int(0, FIRST_NAMES.length - 1);
    const l = rand.int(0, LAST_NAMES.length - 1);
    const c = rand.chance(0.7) ? rand.int(0, companies.length - 1) : -1;
    const company = c >= 0 ? companies[c] : undefined;
    const domain = company?.domain ?? 'gmail.com';
    const id = newId('con');
    contactIds[i] = id;
    contactFirst[i] = f;
    contactLast[i] = l;
    contactCompany[i] = c;
    await contactRows.add(
      withSearchText('contacts', {
        tenant_id: tenantId,
        id,
        first_name: FIRST_NAMES[f],
        last_name: LAST_NAMES[l],
        email: `${asciiSlug(FIRST_NAMES[f])}.${asciiSlug(LAST_NAMES[l])}.${i}@${domain}`,
        phone: mobileFor(i, rand.pick(CITIES).ddd),
        company_id: company?.id ?? null,
        owner_id: users[i % users.length],
        score: rand.int(0, 100),
        custom_properties: '{}',
        created_at: iso(i, counts.contacts),
        updated_at: iso(i, counts.contacts),
        deleted_at: null,
      }),
    );
  }
  await contactRows.done();
  restoreIndexes();

  const dealIds: string[] = new Array(counts.deals);
  /** The contact of each deal, by index. */
  const dealContact = new Int32Array(counts.deals);
  const dealRows = chunked(bulk, 'deals');
  for (let i = 0; i < counts.deals; i++) {
    const stage = rand.int(0, stageIds.length - 1);
    const k = rand.int(0, counts.contacts - 1);
    const won = stage === 4;
    const lost = stage === 5;
    dealIds[i] = newId('deal');
    dealContact[i] = k;
    await dealRows.add(
      withSearchText('deals', {
        tenant_id: tenantId,
        id: dealIds[i],
        title: `Contrato ${i + 1} — ${FIRST_NAMES[contactFirst[k]]} ${LAST_NAMES[contactLast[k]]}`,
        pipeline_id: setup.refs.sales,
        stage_id: stageIds[stage],
        value_cents: rand.int(1_000, 5_000_000) * 100,
        currency: 'BRL',
        contact_id: contactIds[k],
        company_id: contactCompany[k] >= 0 ? companies[contactCompany[k]].id : null,
        owner_id: users[i % users.length],
        expected_close_date: iso(i, counts.deals).slice(0, 10),
        custom_properties: '{}',
        is_won: won ? 1 : 0,
        is_lost: lost ? 1 : 0,
        closed_at: won || lost ? iso(i, counts.deals) : null,
        loss_reason_id: lost ? setup.refs.price : null,
        loss_notes: null,
        created_at: iso(i, counts.deals),
        updated_at: iso(i, counts.deals),
        deleted_at: null,
      }),
    );
  }
  await dealRows.done();
  progress(`  deals: ${counts.deals}`);

  const tagRows = chunked(bulk, 'record_tags');
  for (const [objectType, ids] of [
    ['contact', contactIds],
    ['deal', dealIds],
  ] as const) {
    for (const id of ids) {
      if (!rand.chance(1 / 3)) continue;
      for (const t of rand.sample(tagIds, rand.int(1, 2))) await tagRows.add({ tenant_id: tenantId, object_type: objectType, object_id: id, tag_id: t.id });
    }
  }
  progress(`  tag links: ${await tagRows.done()}`);

  const TYPES = ['task', 'call', 'email', 'meeting', 'note', 'whatsapp', 'linkedin', 'custom'];
  const activities = Array.from({ length: counts.activities }, (_, i) => {
    const type = TYPES[i % TYPES.length];
    const done = rand.chance(0.5);
    return {
      tenant_id: tenantId,
      id: newId('act'),
      type,
      title: `${type} ${i + 1}`,
      description: type === 'note' ? '<p>Cliente pediu uma nova proposta.</p>' : null,
      due_date: type === 'task' ? iso(i, counts.activities) : null,
      completed: done ? 1 : 0,
      completed_at: done ? iso(i, counts.activities) : null,
      priority: type === 'task' ? rand.pick(['low', 'medium', 'high']) : null,
      assigned_to_id: users[(i + 1) % users.length],
      owner_id: users[i % users.length],
      created_at: iso(i, counts.activities),
      updated_at: iso(i, counts.activities),
    };
  });
  for (let i = 0; i < activities.length; i += CHUNK) await bulk.insert('activities', activities.slice(i, i + CHUNK));
  const links = chunked(bulk, 'activity_links');
  for (const a of activities) {
    const d = rand.int(0, counts.deals - 1);
    const company = companies[rand.int(0, companies.length - 1)];
    const k = dealContact[d];
    await links.add({ tenant_id: tenantId, activity_id: a.id, object_type: 'contact', object_id: contactIds[k], position: 0 });
    await links.add({
      tenant_id: tenantId,
      activity_id: a.id,
      object_type: 'company',
      object_id: contactCompany[k] >= 0 ? companies[contactCompany[k]].id : company.id,
      position: 0,
    });
    await links.add({ tenant_id: tenantId, activity_id: a.id, object_type: 'deal', object_id: dealIds[d], position: 0 });
  }
  progress(`  activities: ${activities.length} (${await links.done()} links)`);
  bulk.close();

  // NOTE: no ANALYZE here on SQLite: `crm serve` runs its own at start and hourly (Database.optimize: a
  // sampled ANALYZE without sqlite_stat4), so the bench server plans with what a production one would.
  // PostgreSQL's server leaves statistics to autovacuum, which analyzes a table after this many inserts
  // anyway; doing it now just makes the first minutes representative.
  if (database.dialect.name === 'postgres') await sql`analyze`.execute(db);

  return {
    tenantId,
    key,
    users,
    pipelineId: setup.refs.sales,
    stageIds,
    contactIds,
    companyIds: companies.map((c) => c.id),
    dealIds,
    counts,
    seconds: (Date.now() - started) / 1000,
  };
}

/**
 * The realistic tenant's setup (bench/realistic.ts): its 100 users and 8 contact properties through the service's own
 * setup (applySetup, as `crm setup apply`), and a bench key. Its contacts are created through the API once the server
 * runs (realistic.ts seedRealisticContacts).
 */
export async function seedRealisticTenant(database: Database): Promise<{ tenantId: string; key: string; users: string[]; properties: RealisticProperties }> {
  const refs = Array.from({ length: REALISTIC_USERS }, (_, i) => `u${i}`);
  const setup = await applySetup(database.db, {
    tenant: { name: 'Bench Realista Distribuidora Ltda' },
    users: refs.map((ref, i) => ({
      ref,
      name: `${FIRST_NAMES[i % FIRST_NAMES.length]} ${LAST_NAMES[(i * 7) % LAST_NAMES.length]}`,
      email: `vendedor${i}@realista.bench.test`,
    })),
    properties: REALISTIC_PROPERTIES,
  });
  const users = refs.map((r) => setup.refs[r]);
  const properties = Object.fromEntries(REALISTIC_PROPERTIES.map((p) => [p.ref, setup.refs[p.ref]])) as unknown as RealisticProperties;
  const key = await insertBenchKey(database.db, setup.tenantId, users[0], 'Bench realistic');
  return { tenantId: setup.tenantId, key, users, properties };
}

// ------------------------------------------------------------------------------------------------
// Tenant B of the noisy-neighbour scenario: as many contacts as tenant A, each with 0–5 of 200 tags
// (record_tags) and 0–5 of the 100 options of a multi_select custom property, plus a free-text property,
// so that the most expensive filter the API accepts (tags / multi_select `notIn` with 1 000 values,
// `contains` on text) has real data to chew on.

export interface NoisySeeded {
  tenantId: string;
  key: string;
  tagIds: string[];
  /** Property id of the multi_select contact property and its option values. */
  multiSelectId: string;
  multiSelectOptions: string[];
  /** Property id of the text contact property. */
  textPropertyId: string;
  contacts: number;
  tagLinks: number;
  seconds: number;
}

export const NOISY_TAGS = 200;
export const NOISY_OPTIONS = 100;

/** Seeds tenant B; `sqliteFile` as for `seed`. */
export async function seedNoisyTenant(
  database: Database,
  contactsCount: number,
  progress: (m: string) => void = () => {},
  sqliteFile?: string,
): Promise<NoisySeeded> {
  const started = Date.now();
  const db = database.db;
  const rand = new Rand(11);
  const options = Array.from({ length: NOISY_OPTIONS }, (_, i) => ({ value: `opt${String(i).padStart(3, '0')}`, label: `Interesse ${i + 1}` }));
  const setup = await applySetup(db, {
    tenant: { name: 'Bench Vizinho Barulhento Ltda' },
    users: [
      { ref: 'u1', name: 'Eva Mendes', email: 'eva@noisy.bench.test' },
      { ref: 'u2', name: 'Fábio Nunes', email: 'fabio@noisy.bench.test' },
    ],
    properties: [
      { ref: 'interests', objectType: 'contact', internalName: 'interests', label: 'Interesses', type: 'multi_select', options },
      { ref: 'notes', objectType: 'contact', internalName: 'notes', label: 'Observações', type: 'text' },
    ],
  });
  const tenantId = setup.tenantId;
  const users = [setup.refs.u1, setup.refs.u2];
  const multiSelectId = setup.refs.interests;
  const textPropertyId = setup.refs.notes;
  const key = await insertBenchKey(db, tenantId, users[0], 'Bench noisy');

  const tags = Array.from({ length: NOISY_TAGS }, (_, i) => {
    const name = `Etiqueta ${String(i + 1).padStart(3, '0')}`;
    return withSearchText('tags', {
      tenant_id: tenantId,
      id: newId('tag'),
      name,
      name_key: name.toLowerCase(),
      color: '#1e88e5',
      created_at: iso(0, 1),
      updated_at: iso(0, 1),
    });
  });
  const bulk = openBulk(database, sqliteFile);
  await bulk.insert('tags', tags);

  const NOTES = ['Ligar na segunda', 'Pediu proposta', 'Sem interesse no momento', 'Cliente antigo', 'Indicação de parceiro', 'Retornar em março'];
  const tagRows = chunked(bulk, 'record_tags');
  const contacts = chunked(bulk, 'contacts', (n) => progress(`  tenant B contacts: ${n}/${contactsCount}`));
  for (let i = 0; i < contactsCount; i++) {
    const first = rand.pick(FIRST_NAMES);
    const last = rand.pick(LAST_NAMES);
    const id = newId('con');
    const picked = rand.sample(options, rand.int(0, 5)).map((o) => o.value);
    const custom: Record<string, unknown> = { [textPropertyId]: `${rand.pick(NOTES)} (${i})` };
    if (picked.length > 0) custom[multiSelectId] = picked;
    for (const t of rand.sample(tags, rand.int(0, 5))) await tagRows.add({ tenant_id: tenantId, object_type: 'contact', object_id: id, tag_id: t.id });
    await contacts.add(
      withSearchText('contacts', {
        tenant_id: tenantId,
        id,
        first_name: first,
        last_name: last,
        email: `${asciiSlug(first)}.${asciiSlug(last)}.${i}@vizinho.bench.test`,
        phone: mobileFor(i, rand.pick(CITIES).ddd),
        company_id: null,
        owner_id: users[i % users.length],
        score: rand.int(0, 100),
        custom_properties: JSON.stringify(custom),
        created_at: iso(i, contactsCount),
        updated_at: iso(i, contactsCount),
        deleted_at: null,
      }),
    );
  }
  await contacts.done();
  const tagLinks = await tagRows.done();
  progress(`  tenant B tag links: ${tagLinks}`);
  bulk.close();
  if (database.dialect.name === 'postgres') await sql`analyze`.execute(db);

  return {
    tenantId,
    key,
    tagIds: tags.map((t) => t.id),
    multiSelectId,
    multiSelectOptions: options.map((o) => o.value),
    textPropertyId,
    contacts: contactsCount,
    tagLinks,
    seconds: (Date.now() - started) / 1000,
  };
}
