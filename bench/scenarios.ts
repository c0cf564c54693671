// The HTTP load scenarios of `npm run bench`, shared by the bench (bench/run.ts: which scenarios, which
// server, how many connections) and the load generator (bench/loadgen.ts: the request of each turn), so
// both processes agree on the very same definitions. Also the job and result types they exchange.
import { randomBytes } from 'node:crypto';
import { FIRST_NAMES, LAST_NAMES } from '../src/admin/demo-data.js';
import { SEGMENTS, realisticBody, type RealisticData } from './realistic.js';

export interface Scenario {
  name: string;
  target: 'ceiling' | 'api';
  method: 'GET' | 'POST' | 'PATCH';
  /** Only where the database is SQLite (the floor reads its file). */
  sqliteOnly?: boolean;
  /**
   * Connections of this scenario when fewer than --connections: for a statement that reads a whole tenant,
   * 50 clients only queue behind one tenant's share of the read pool until QUERY_TIMEOUT_MS answers 503.
   */
  connections?: number;
  /** The realistic tenant's (bench/realistic.ts): driven with its key. Else the minimal tenant's. */
  tenant?: 'realistic';
  /** Builds the path (and body) of the i-th request. */
  next: (i: number) => { path: string; body?: unknown; headers?: Record<string, string> };
}

/** Cursors of GET /contacts?pageSize=…, found by walking the list once the server runs (run.ts walkCursors). */
export interface Cursors {
  /** After the first 100 records. */
  shallow: string;
  /** After `deepDepth` records (the last pages of the tenant). */
  deep: string;
  deepDepth: number;
}

/** What the scenarios need of the seeded tenant; the bench writes it to a JSON file for the load generator. */
export interface ScenarioData {
  users: string[];
  pipelineId: string;
  contactIds: string[];
  companyIds: string[];
  dealIds: string[];
  cursors: Cursors;
  /** The realistic tenant, when a scenario of it runs (its scenarios' names start with "realistic"). */
  realistic?: RealisticData;
}

/** Depth of the deep cursor: the last pages of the tenant's `contacts` contacts (99,900 of 100k). */
export const deepCursorDepth = (contacts: number) => Math.max(100, contacts - 100);

/**
 * The realistic tenant's scenarios (bench/realistic.ts), as the outside probe ran them, and their ceilings: a bare
 * Fastify answering the very JSON of one realistic contact and of a page of 50 of them (bench/ceiling.ts /realistic).
 * Names start with "realistic" (`--only realistic`) or "ceiling: bare Fastify, realistic".
 */
function realisticScenarios(s: ScenarioData, run: string): { reads: Scenario[]; writes: Scenario[] } {
  // Read lazily: the list is built before the realistic tenant is seeded (only when one of these is selected).
  const r = () => {
    if (!s.realistic) throw new Error('the realistic tenant was not seeded');
    return s.realistic;
  };
  const pick = <T>(xs: T[], i: number) => xs[(i * 7_919) % xs.length];
  /** Page N in 1..200 (the whole list of the probe's 10,000 contacts), a different one each turn. */
  const pageN = (i: number) => 1 + ((i * 7_919) % 200);
  /** Phones of this process's creates: distinct from the seed's (n < contacts) and, very likely, another process's. */
  const phoneBase = 1_000_000 + Math.floor(Math.random() * 18_000_000);
  const reads: Scenario[] = [
    {
      name: 'ceiling: bare Fastify, realistic contact by id',
      target: 'ceiling',
      method: 'GET',
      next: (i) => ({ path: `/realistic/v1/contacts/${pick(r().contactIds, i)}` }),
    },
    {
      name: 'ceiling: bare Fastify, realistic page of 50',
      target: 'ceiling',
      method: 'GET',
      next: (i) => ({ path: `/realistic/v1/contacts?page=${pageN(i)}&pageSize=50&sortKey=createdAt` }),
    },
    {
      name: 'realistic: GET /contacts/:id',
      target: 'api',
      tenant: 'realistic',
      method: 'GET',
      next: (i) => ({ path: `/api/v1/contacts/${pick(r().contactIds, i)}` }),
    },
    {
      name: 'realistic: GET /contacts?page=N (1-200, sortKey=createdAt, page of 50)',
      target: 'api',
      tenant: 'realistic',
      method: 'GET',
      next: (i) => ({ path: `/api/v1/contacts?page=${pageN(i)}&pageSize=50&sortKey=createdAt` }),
    },
    {
      name: 'realistic: GET /contacts?ownerId= (100 owners, page of 50)',
      target: 'api',
      tenant: 'realistic',
      method: 'GET',
      next: (i) => ({ path: `/api/v1/contacts?ownerId=${r().users[i % r().users.length]}&pageSize=50` }),
    },
    {
      name: 'realistic: POST /contacts/search (owner + select + boolean)',
      target: 'api',
      tenant: 'realistic',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/contacts/search',
        body: {
          filters: {
            operator: 'AND',
            conditions: [
              { field: 'ownerId', operator: 'eq', value: r().users[i % r().users.length] },
              { field: `customProperties.${r().properties.segment}`, operator: 'eq', value: SEGMENTS[Math.floor(i / 100) % SEGMENTS.length] },
              { field: `customProperties.${r().properties.active}`, operator: 'eq', value: i % 2 === 0 },
            ],
          },
          pageSize: 50,
        },
      }),
    },
  ];
  const writes: Scenario[] = [
    {
      name: 'realistic: POST /contacts (realistic body, unique e-mails and phones)',
      target: 'api',
      tenant: 'realistic',
      method: 'POST',
      next: (i) => ({ path: '/api/v1/contacts', body: realisticBody(phoneBase + i, run, r()) }),
    },
    {
      name: 'realistic: POST /contacts (minimal body)',
      target: 'api',
      tenant: 'realistic',
      method: 'POST',
      next: (i) => ({ path: '/api/v1/contacts', body: { firstName: 'Carga', lastName: `Teste ${i}`, email: `load-${run}-${i}@bench.test`, score: i % 100 } }),
    },
  ];
  return { reads, writes };
}

export function scenarios(s: ScenarioData): Scenario[] {
  // Unique e-mails and keys per process: the bench and each load generator draw their own.
  const run = randomBytes(4).toString('hex');
  const pick = <T>(xs: T[], i: number) => xs[(i * 7_919) % xs.length];
  const page50 = (i: number) => `/api/v1/contacts?page=${1 + (i % 20)}&pageSize=50`;
  const createBody = (i: number) => ({ firstName: 'Carga', lastName: `Teste ${i}`, email: `load-${run}-${i}@bench.test`, score: i % 100 });
  const realistic = realisticScenarios(s, run);
  return [
    // The ceilings answer any id or query with one stored body: the requests only match the real ones'.
    { name: 'ceiling: bare Fastify, contact by id', target: 'ceiling', method: 'GET', next: (i) => ({ path: `/api/v1/contacts/${pick(s.contactIds, i)}` }) },
    { name: 'ceiling: bare Fastify, page of 50', target: 'ceiling', method: 'GET', next: (i) => ({ path: page50(i) }) },
    // A create's request and a contact answered with 201, nothing written: the harness's own cost and tails for a write.
    { name: 'ceiling: bare Fastify, POST a contact', target: 'ceiling', method: 'POST', next: (i) => ({ path: '/api/v1/contacts', body: createBody(i) }) },
    // The floor (SQLite): the same bare Fastify running the service's statements (bench/ceiling.ts).
    {
      name: 'floor: bare Fastify + SQLite, contact by id',
      target: 'ceiling',
      method: 'GET',
      sqliteOnly: true,
      next: (i) => ({ path: `/floor/v1/contacts/${pick(s.contactIds, i)}` }),
    },
    {
      name: 'floor: bare Fastify + SQLite, page of 50',
      target: 'ceiling',
      method: 'GET',
      sqliteOnly: true,
      next: (i) => ({ path: `/floor${page50(i).slice('/api'.length)}` }),
    },
    { name: 'GET /contacts/:id', target: 'api', method: 'GET', next: (i) => ({ path: `/api/v1/contacts/${pick(s.contactIds, i)}` }) },
    { name: 'GET /contacts (page of 50)', target: 'api', method: 'GET', next: (i) => ({ path: page50(i) }) },
    {
      // Each owner's pages 1–20 in turn (a quarter of the tenant each).
      name: 'GET /contacts?ownerId= (filter by owner)',
      target: 'api',
      method: 'GET',
      next: (i) => ({ path: `/api/v1/contacts?ownerId=${s.users[i % s.users.length]}&page=${1 + (Math.floor(i / s.users.length) % 20)}&pageSize=50` }),
    },
    // C.5: a full name as a person types it, a different one each request (so no list total is served from
    // the count cache): ~1 in 1,700 contacts matches, so the page and the total each read the whole tenant.
    {
      name: 'GET /contacts?search= (full name)',
      target: 'api',
      method: 'GET',
      connections: 4,
      next: (i) => ({ path: `/api/v1/contacts?search=${encodeURIComponent(searchTerm(i))}&pageSize=50` }),
    },
    // Keyset pages (C.1): a page deep in the list must cost what one near its start costs (target ≤ 1.5×).
    {
      name: 'GET /contacts cursor page at depth 100',
      target: 'api',
      method: 'GET',
      next: () => ({ path: `/api/v1/contacts?pageSize=50&cursor=${encodeURIComponent(s.cursors.shallow)}` }),
    },
    {
      name: `GET /contacts cursor page at depth ${s.cursors.deepDepth.toLocaleString('en')}`,
      target: 'api',
      method: 'GET',
      next: () => ({ path: `/api/v1/contacts?pageSize=50&cursor=${encodeURIComponent(s.cursors.deep)}` }),
    },
    {
      name: 'POST /contacts/search (ownerId eq + score gte)',
      target: 'api',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/contacts/search',
        body: {
          filters: {
            operator: 'AND',
            conditions: [
              { field: 'ownerId', operator: 'eq', value: s.users[i % s.users.length] },
              { field: 'score', operator: 'gte', value: 50 + (i % 40) },
            ],
          },
          pageSize: 50,
        },
      }),
    },
    // The realistic tenant's reads here: before the writes below grow the minimal tenant, so that the paired rounds
    // (run.ts), which follow the last scenario measured against a ceiling, still come before them.
    ...realistic.reads,
    {
      name: 'POST /contacts (unique e-mails)',
      target: 'api',
      method: 'POST',
      next: (i) => ({ path: '/api/v1/contacts', body: createBody(i) }),
    },
    ...realistic.writes,
    {
      // C.3: the same create with an Idempotency-Key (a new key each time), to price the stored answer (target < 15 %).
      name: 'POST /contacts with Idempotency-Key',
      target: 'api',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/contacts',
        body: { firstName: 'Carga', lastName: `Idem ${i}`, email: `idem-${run}-${i}@bench.test`, score: i % 100 },
        headers: { 'idempotency-key': `bench-${run}-${i}` },
      }),
    },
    {
      // A different contact each request, and a last name never written before: the update is never a no-op.
      name: 'PATCH /contacts/:id',
      target: 'api',
      method: 'PATCH',
      next: (i) => ({ path: `/api/v1/contacts/${pick(s.contactIds, i)}`, body: { lastName: `Ajuste ${run} ${i}`, score: i % 101 } }),
    },
    {
      // C.2: 100 creates in one call (target ≥ 10,000 contacts/s on SQLite, each with its contact.created event).
      name: 'POST /contacts/batch/create (100 inputs)',
      target: 'api',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/contacts/batch/create',
        body: {
          inputs: Array.from({ length: 100 }, (_, k) => ({ firstName: 'Lote', lastName: `Item ${k}`, email: `batch-${run}-${i}-${k}@bench.test`, score: k })),
        },
      }),
    },
    {
      name: 'GET /deals?pipelineId&isWon=false',
      target: 'api',
      method: 'GET',
      next: (i) => ({ path: `/api/v1/deals?pipelineId=${s.pipelineId}&isWon=false&page=${1 + (i % 10)}` }),
    },
    {
      // Pages by number deeper than the main connection reads (listing/planner.ts MAIN_MAX_OFFSET): SQLite's read pool. Their
      // deals' contacts and companies are looked up by id and spliced in JavaScript (deals.service.ts dealsJson).
      name: 'GET /deals?page=21…40 (by number, deep: the read pool)',
      target: 'api',
      method: 'GET',
      next: (i) => ({ path: `/api/v1/deals?page=${21 + (i % 20)}&pageSize=50` }),
    },
    { name: 'GET /deals/:id (contact+company expanded)', target: 'api', method: 'GET', next: (i) => ({ path: `/api/v1/deals/${pick(s.dealIds, i)}` }) },
    {
      name: 'POST /activities (3 links)',
      target: 'api',
      method: 'POST',
      next: (i) => ({
        path: '/api/v1/activities',
        body: { type: 'call', title: `Ligação ${i}`, contactIds: [pick(s.contactIds, i)], companyIds: [pick(s.companyIds, i)], dealIds: [pick(s.dealIds, i)] },
      }),
    },
  ];
}

/**
 * The i-th search term of the search scenario: "first last" from the seed's name lists, in turn as stored
 * ("João Gonçalves"), upper-cased ("JOÃO GONÇALVES") and without accents ("joao goncalves").
 */
function searchTerm(i: number): string {
  // Consecutive requests get different names (a variant is never the same search folded again).
  const k = i % (FIRST_NAMES.length * LAST_NAMES.length);
  const name = `${FIRST_NAMES[k % FIRST_NAMES.length]} ${LAST_NAMES[Math.floor(k / FIRST_NAMES.length)]}`;
  const variant = i % 3;
  if (variant === 1) return name.toUpperCase();
  if (variant === 2)
    return name
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase();
  return name;
}

/** One measured run of a load generator: `duration` seconds at `connections`. */
export interface LoadPhase {
  connections: number;
  duration: number;
}

/** The load generator's argument (JSON): one scenario, a warm-up, then the measured phases in turn. */
export interface LoadJob {
  url: string;
  key: string;
  scenario: string;
  /** JSON file of ScenarioData. */
  dataFile: string;
  /** Seconds of warm-up (at the first phase's connections), not reported. */
  warmup: number;
  phases: LoadPhase[];
  /** Send every 2xx latency with each result (drive.ts merges several load generators' percentiles from them). */
  latencies?: boolean;
}

/**
 * What the load generator prints on stdout, one JSON object a line: `ready` once it is ready to start a phase (after
 * its warm-up), after which it waits for a line `go` on its stdin (so that several generators start a phase together;
 * the bench starts its CPU monitors then), and `result` right after the phase ends.
 */
export type LoadEvent = { event: 'ready'; phase: number } | ({ event: 'result'; phase: number } & LoadResult);

export interface LoadResult {
  requestsPerSec: number;
  total: number;
  /** Latencies of 2xx answers (ms, exact: every one is recorded, not autocannon's 1 ms histogram). */
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  latencyAvg: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Every 2xx latency (ms), when the job asks for them. */
  latencies?: number[];
}
