// Bench data set: one tenant (setup apply), then 100k contacts, 20k deals and 50k activities with three
// links each, written directly with batched Kysely inserts in a few large transactions (the API would take
// minutes; the rules do not matter for load). Progress goes to stderr. `seedNoisyTenant` adds tenant B of
// the noisy-neighbour scenario (bench/noisy.ts).
import { sql } from 'kysely';
import { applySetup } from '../src/admin/setup.js';
import { CITIES, FIRST_NAMES, LAST_NAMES, Rand, asciiSlug, mobileFor, sampleCompanies } from '../src/admin/demo-data.js';
import { generateApiKey } from '../src/auth/keys.js';
import type { Database, Db } from '../src/db/index.js';
import { newId } from '../src/util/ids.js';
import { withSearchText } from '../src/db/search-text.js';

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
    { ref: 'segment', objectType: 'contact', internalName: 'segment', label: 'Segmento', type: 'select', options: [{ value: 'smb', label: 'PME' }, { value: 'ent', label: 'Enterprise' }] },
  ],
};

const T0 = new Date('2025-01-01T00:00:00.000Z').getTime();
/** The i-th of n timestamps spread over 300 days from 2025-01-01. */
const iso = (i: number, n: number) => new Date(T0 + Math.floor((i / n) * 300 * 86_400_000)).toISOString();

/** A full-scope key with BENCH_RATE_LIMIT, written straight to the table; returns the plaintext key. */
async function insertBenchKey(db: Db, tenantId: string, userId: string, name: string): Promise<string> {
  const { key, hash, prefix } = generateApiKey();
  await db
    .insertInto('api_keys')
    .values({ tenant_id: tenantId, id: newId('key'), user_id: userId, name, prefix, key_hash: hash, scopes: JSON.stringify(['*']), rate_limit: BENCH_RATE_LIMIT, created_at: iso(0, 1), last_used_at: null, revoked_at: null, expires_at: null })
    .execute();
  return key;
}

async function batched<T>(db: Db, rows: T[], size: number, insert: (tx: Db, chunk: T[]) => Promise<unknown>) {
  // One transaction per 20k rows: large enough to be fast, small enough to keep the WAL modest.
  for (let i = 0; i < rows.length; i += 20_000) {
    const slice = rows.slice(i, i + 20_000);
    await db.transaction().execute(async (tx) => {
      for (let j = 0; j < slice.length; j += size) await insert(tx, slice.slice(j, j + size));
    });
  }
}

export async function seed(database: Database, counts: SeedCounts = DEFAULT_COUNTS, progress: (m: string) => void = () => {}): Promise<Seeded> {
  const started = Date.now();
  const db = database.db;
  const rand = new Rand(7);
  const setup = await applySetup(db, SETUP);
  const tenantId = setup.tenantId;
  const users = ['u1', 'u2', 'u3', 'u4'].map((r) => setup.refs[r]);
  const stageIds = ['s1', 's2', 's3', 's4', 'won', 'lost'].map((r) => setup.refs[r]);
  const key = await insertBenchKey(db, tenantId, users[0], 'Bench');

  // Tags (five, a third of the contacts and deals carry one or two).
  const tagIds = ['Cliente', 'Prospect', 'Parceiro', 'VIP', 'Inativo'].map((name) => withSearchText('tags', { tenant_id: tenantId, id: newId('tag'), name, name_key: name.toLowerCase(), color: '#e53935', created_at: iso(0, 1), updated_at: iso(0, 1) }));
  await db.insertInto('tags').values(tagIds).execute();

  // Rows carry the search column the repos would write (db/search-text.ts).
  const companies = sampleCompanies(rand, counts.companies).map((c, i) => withSearchText('companies', {
    tenant_id: tenantId,
    id: newId('com'),
    name: c.name,
    cnpj: c.cnpj.replace(/\D/g, ''),
    website: `https://www.${c.domain}`,
    domain: c.domain,
    phone: `+55${c.city.ddd}3${String(2_000_000 + i).padStart(7, '0')}`,
    industry: c.industry,
    owner_id: users[i % users.length],
    custom_properties: '{}',
    created_at: iso(i, counts.companies),
    updated_at: iso(i, counts.companies),
    deleted_at: null,
  }));
  await batched(db, companies, 500, (tx, chunk) => tx.insertInto('companies').values(chunk).execute());
  progress(`  companies: ${companies.length}`);

  const contacts = Array.from({ length: counts.contacts }, (_, i) => {
    const first = rand.pick(FIRST_NAMES);
    const last = rand.pick(LAST_NAMES);
    const company = rand.chance(0.7) ? companies[rand.int(0, companies.length - 1)] : undefined;
    const domain = company?.domain ?? 'gmail.com';
    return withSearchText('contacts', {
      tenant_id: tenantId,
      id: newId('con'),
      first_name: first,
      last_name: last,
      email: `${asciiSlug(first)}.${asciiSlug(last)}.${i}@${domain}`,
      phone: mobileFor(i, rand.pick(CITIES).ddd),
      company_id: company?.id ?? null,
      owner_id: users[i % users.length],
      score: rand.int(0, 100),
      custom_properties: '{}',
      created_at: iso(i, counts.contacts),
      updated_at: iso(i, counts.contacts),
      deleted_at: null,
    });
  });
  for (let i = 0; i < contacts.length; i += 20_000) {
    await batched(db, contacts.slice(i, i + 20_000), 1_000, (tx, chunk) => tx.insertInto('contacts').values(chunk).execute());
    progress(`  contacts: ${Math.min(i + 20_000, contacts.length)}/${contacts.length}`);
  }

  const deals = Array.from({ length: counts.deals }, (_, i) => {
    const stage = rand.int(0, stageIds.length - 1);
    const contact = contacts[rand.int(0, contacts.length - 1)];
    const won = stage === 4;
    const lost = stage === 5;
    return withSearchText('deals', {
      tenant_id: tenantId,
      id: newId('deal'),
      title: `Contrato ${i + 1} — ${contact.first_name} ${contact.last_name}`,
      pipeline_id: setup.refs.sales,
      stage_id: stageIds[stage],
      value_cents: rand.int(1_000, 5_000_000) * 100,
      currency: 'BRL',
      contact_id: contact.id,
      company_id: contact.company_id,
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
    });
  });
  await batched(db, deals, 1_000, (tx, chunk) => tx.insertInto('deals').values(chunk).execute());
  progress(`  deals: ${deals.length}`);

  const tagRows: { tenant_id: string; object_type: string; object_id: string; tag_id: string }[] = [];
  for (const [objectType, rows] of [['contact', contacts], ['deal', deals]] as const) {
    for (const r of rows) {
      if (!rand.chance(1 / 3)) continue;
      for (const t of rand.sample(tagIds, rand.int(1, 2))) tagRows.push({ tenant_id: tenantId, object_type: objectType, object_id: r.id, tag_id: t.id });
    }
  }
  await batched(db, tagRows, 2_000, (tx, chunk) => tx.insertInto('record_tags').values(chunk).execute());
  progress(`  tag links: ${tagRows.length}`);

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
  await batched(db, activities, 1_000, (tx, chunk) => tx.insertInto('activities').values(chunk).execute());
  const links = activities.flatMap((a) => {
    const deal = deals[rand.int(0, deals.length - 1)];
    const company = companies[rand.int(0, companies.length - 1)];
    return [
      { tenant_id: tenantId, activity_id: a.id, object_type: 'contact', object_id: deal.contact_id, position: 0 },
      { tenant_id: tenantId, activity_id: a.id, object_type: 'company', object_id: deal.company_id ?? company.id, position: 0 },
      { tenant_id: tenantId, activity_id: a.id, object_type: 'deal', object_id: deal.id, position: 0 },
    ];
  });
  await batched(db, links, 2_000, (tx, chunk) => tx.insertInto('activity_links').values(chunk).execute());
  progress(`  activities: ${activities.length} (${links.length} links)`);

  // NOTE: no ANALYZE on SQLite. The service never runs it, and better-sqlite3 builds SQLite with STAT4:
  // once sqlite_stat4 has rows, every statement whose plan may depend on its bound values is re-planned
  // on each execution (that tripled the cost of the tag lookup of a point read). PostgreSQL analyzes
  // on its own (autovacuum); doing it now just makes the first minutes representative.
  if (database.dialect.name === 'postgres') await sql`analyze`.execute(db);

  return {
    tenantId,
    key,
    users,
    pipelineId: setup.refs.sales,
    stageIds,
    contactIds: contacts.map((c) => c.id),
    companyIds: companies.map((c) => c.id),
    dealIds: deals.map((d) => d.id),
    counts,
    seconds: (Date.now() - started) / 1000,
  };
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

export async function seedNoisyTenant(database: Database, contactsCount: number, progress: (m: string) => void = () => {}): Promise<NoisySeeded> {
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
    return withSearchText('tags', { tenant_id: tenantId, id: newId('tag'), name, name_key: name.toLowerCase(), color: '#1e88e5', created_at: iso(0, 1), updated_at: iso(0, 1) });
  });
  await db.insertInto('tags').values(tags).execute();

  const NOTES = ['Ligar na segunda', 'Pediu proposta', 'Sem interesse no momento', 'Cliente antigo', 'Indicação de parceiro', 'Retornar em março'];
  const tagRows: { tenant_id: string; object_type: string; object_id: string; tag_id: string }[] = [];
  let contacts = [];
  for (let i = 0; i < contactsCount; i++) {
    const first = rand.pick(FIRST_NAMES);
    const last = rand.pick(LAST_NAMES);
    const id = newId('con');
    const picked = rand.sample(options, rand.int(0, 5)).map((o) => o.value);
    const custom: Record<string, unknown> = { [textPropertyId]: `${rand.pick(NOTES)} (${i})` };
    if (picked.length > 0) custom[multiSelectId] = picked;
    for (const t of rand.sample(tags, rand.int(0, 5))) tagRows.push({ tenant_id: tenantId, object_type: 'contact', object_id: id, tag_id: t.id });
    contacts.push(withSearchText('contacts', {
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
    }));
    if (contacts.length === 20_000 || i === contactsCount - 1) {
      await batched(db, contacts, 1_000, (tx, chunk) => tx.insertInto('contacts').values(chunk).execute());
      progress(`  tenant B contacts: ${i + 1}/${contactsCount}`);
      contacts = [];
    }
  }
  await batched(db, tagRows, 2_000, (tx, chunk) => tx.insertInto('record_tags').values(chunk).execute());
  progress(`  tenant B tag links: ${tagRows.length}`);
  if (database.dialect.name === 'postgres') await sql`analyze`.execute(db);

  return {
    tenantId,
    key,
    tagIds: tags.map((t) => t.id),
    multiSelectId,
    multiSelectOptions: options.map((o) => o.value),
    textPropertyId,
    contacts: contactsCount,
    tagLinks: tagRows.length,
    seconds: (Date.now() - started) / 1000,
  };
}
