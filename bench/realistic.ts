// The realistic data set of `npm run bench` (issue 49): a tenant of its own (seed.ts seedRealisticTenant: 100 users,
// 8 contact properties, 2 of each of select, multi_select, boolean and text) whose contacts are created THROUGH THE
// API (POST /contacts/batch/create, 100 a call), so that its rows are exactly what the service stores, each with a
// phone, an owner and all 8 properties: a body of ~530 bytes, as the outside probe's. The minimal tenant (seed.ts
// `seed`, rows written straight into the tables with no custom properties) measured 2-3x faster than this one.
// Pure data and fetch only: the load generator (bench/loadgen.ts, through scenarios.ts) builds its bodies here too.
import { CITIES, FIRST_NAMES, LAST_NAMES, JOB_TITLES, asciiSlug, mobileFor } from '../src/admin/demo-data.js';

/** Contacts of the realistic tenant unless `--realistic-contacts` says otherwise (the probe's). */
export const REALISTIC_CONTACTS = 10_000;
/** Users of the realistic tenant: every contact's owner is one of them. */
export const REALISTIC_USERS = 100;

/** The 8 contact properties: their ids (keys of customProperties) and the options of the selects. */
export interface RealisticProperties {
  segment: string;
  source: string;
  interests: string;
  channels: string;
  active: string;
  newsletter: string;
  jobTitle: string;
  notes: string;
}

/** What the scenarios need of the realistic tenant (bench/scenarios.ts ScenarioData.realistic). */
export interface RealisticData {
  users: string[];
  contactIds: string[];
  properties: RealisticProperties;
}

export const SEGMENTS = ['pme', 'enterprise', 'governo', 'startup', 'varejo', 'industria'];
export const SOURCES = ['indicacao', 'site', 'evento', 'linkedin', 'google-ads', 'outbound'];
export const INTERESTS = ['crm', 'erp', 'bi', 'ecommerce', 'marketing', 'financeiro', 'rh', 'logistica', 'suporte', 'integracoes'];
export const CHANNELS = ['email', 'whatsapp', 'telefone', 'presencial', 'video', 'sms'];

const options = (values: string[]) => values.map((value) => ({ value, label: value.charAt(0).toUpperCase() + value.slice(1).replace('-', ' ') }));

/** The setup file's `properties` (crm setup apply / applySetup): refs are the keys of RealisticProperties. */
export const REALISTIC_PROPERTIES = [
  { ref: 'segment', objectType: 'contact', internalName: 'segmento', label: 'Segmento', type: 'select', options: options(SEGMENTS) },
  { ref: 'source', objectType: 'contact', internalName: 'origem', label: 'Origem do lead', type: 'select', options: options(SOURCES) },
  { ref: 'interests', objectType: 'contact', internalName: 'interesses', label: 'Interesses', type: 'multi_select', options: options(INTERESTS) },
  { ref: 'channels', objectType: 'contact', internalName: 'canais', label: 'Canais preferidos', type: 'multi_select', options: options(CHANNELS) },
  { ref: 'active', objectType: 'contact', internalName: 'cliente_ativo', label: 'Cliente ativo', type: 'boolean' },
  { ref: 'newsletter', objectType: 'contact', internalName: 'aceita_newsletter', label: 'Aceita newsletter', type: 'boolean' },
  { ref: 'jobTitle', objectType: 'contact', internalName: 'cargo', label: 'Cargo', type: 'text' },
  { ref: 'notes', objectType: 'contact', internalName: 'observacoes', label: 'Observações', type: 'text' },
] as const;

const NOTES = ['Pediu proposta; retornar.', 'Quer demonstração.', 'Renovação em março.', 'Prefere WhatsApp à tarde.'];
const DOMAINS = ['gmail.com', 'outlook.com', 'exemplo.com.br', 'comercial.com.br', 'industria.ind.br', 'uol.com.br'];

/** The i-th of xs, spread (consecutive i land far apart). */
const at = <T>(xs: readonly T[], i: number) => xs[(i * 7_919 + 13) % xs.length];

/**
 * The body of the n-th realistic contact (unique e-mail and phone for distinct n < 20,000,000 within one `run`):
 * names, e-mail, phone, owner, score and all 8 custom properties, ~530 bytes of JSON.
 */
export function realisticBody(n: number, run: string, d: Pick<RealisticData, 'users' | 'properties'>): Record<string, unknown> {
  const first = at(FIRST_NAMES, n);
  const last = at(LAST_NAMES, Math.floor(n / 3));
  const p = d.properties;
  return {
    firstName: first,
    lastName: last,
    email: `${asciiSlug(first)}.${asciiSlug(last)}.${run}${n}@${at(DOMAINS, n)}`,
    phone: mobileFor(n, CITIES[n % CITIES.length].ddd),
    ownerId: d.users[n % d.users.length],
    score: (n * 37) % 101,
    customProperties: {
      [p.segment]: at(SEGMENTS, n),
      [p.source]: at(SOURCES, n >> 1),
      [p.interests]: [at(INTERESTS, n), at(INTERESTS, n + 3), at(INTERESTS, n + 7)],
      [p.channels]: [at(CHANNELS, n), at(CHANNELS, n + 1)],
      [p.active]: n % 3 !== 0,
      [p.newsletter]: n % 2 === 0,
      [p.jobTitle]: at(JOB_TITLES, n),
      [p.notes]: at(NOTES, n),
    },
  };
}

/**
 * Creates `count` realistic contacts through POST /contacts/batch/create (100 a call, a few calls in flight), and
 * returns their ids in creation order. Any refused input fails the bench: the data set must be the one described.
 */
export async function seedRealisticContacts(
  url: string,
  key: string,
  d: Pick<RealisticData, 'users' | 'properties'>,
  count: number,
  log: (m: string) => void,
): Promise<{ contactIds: string[]; seconds: number }> {
  const started = performance.now();
  const ids: string[] = new Array(count);
  const calls = Math.ceil(count / 100);
  let nextCall = 0;
  const worker = async () => {
    for (let c = nextCall++; c < calls; c = nextCall++) {
      const from = c * 100;
      const inputs = Array.from({ length: Math.min(100, count - from) }, (_, k) => realisticBody(from + k, 's', d));
      const r = await fetch(`${url}/api/v1/contacts/batch/create`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs, atomic: true }),
      });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`realistic seed: batch/create answered ${r.status}: ${text.slice(0, 500)}`);
      const body = JSON.parse(text) as { results: { index: number; id?: string }[] };
      for (const res of body.results) ids[from + res.index] = res.id!;
      if ((c + 1) % 20 === 0) log(`  realistic contacts: ${Math.min(count, (c + 1) * 100)}/${count}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { contactIds: ids, seconds: (performance.now() - started) / 1000 };
}
