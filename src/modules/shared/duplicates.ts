/**
 * CONTRACT D.3: `GET /contacts/duplicates` and `GET /companies/duplicates`, one piece for both: each resource's
 * routes file registers it with its descriptor (DUPLICATES_OF).
 *
 * Computed from keys, never by comparing every pair: per rule, the keys held by two or more live records and
 * their records, from the tables that migration 022's triggers keep in every write's transaction
 * (db/duplicate-keys.ts); the pairs are made from these groups only, so the cost follows the number of
 * duplicates, not of records. Every page reads them all (cheap: 1 % duplicates of 100,000 contacts is about
 * a thousand records) and sorts the pairs: score descending, then ids; the cursor holds the last (score, a, b).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ctxOf, type Ctx } from '../../http/context.js';
import { pageSizeOf } from '../../http/pagination.js';
import { CursorParam, Envelope, errorResponses, PageSizeParams, type PaginationT } from '../../http/schemas.js';
import { cursorBinding, decodeCursor, encodeCursor, filtersDigest, stableJson } from '../../listing/cursor.js';
import { keyHolders, MAX_GROUP } from '../../db/duplicate-keys.js';

/** A rule: its weight (how sure a match alone makes us) and the indexes whose keys it compares. */
interface DuplicateRule {
  weight: number;
  /** Its keys' kinds in migration 022's tables (the name of contacts has two: with the company, with the e-mail domain). */
  keys: readonly string[];
  doc: string;
}

export interface DuplicatesResource {
  path: 'contacts' | 'companies';
  tag: string;
  scope: string;
  /** The id prefix of the examples. */
  prefix: string;
  rules: Readonly<Record<string, DuplicateRule>>;
}

// Weights: an e-mail address is a person's (0.9); a CNPJ root is one company's, though branches may be kept apart
// on purpose (0.8); a registrable domain or a phone is usually one company's, sometimes a group's or a shared
// switchboard's (0.7); a name is the weakest (0.6). Several rules: 1 − Π(1 − weight), so every added rule raises
// the score and none reaches 1 alone: e-mail and name give 0.96.
export const DUPLICATES_OF: Record<'contacts' | 'companies', DuplicatesResource> = {
  contacts: {
    path: 'contacts',
    tag: 'Contacts',
    scope: 'contacts:read',
    prefix: 'con_',
    rules: {
      email: {
        weight: 0.9,
        keys: ['contacts.email'],
        doc: 'the same address once the local part’s `+tag` is dropped (and, for gmail.com and googlemail.com, its dots)',
      },
      name: {
        weight: 0.6,
        keys: ['contacts.name_company', 'contacts.name_domain'],
        doc: 'the same first and last name ignoring case, accents and spacing, with the same `companyId` or the same e-mail domain',
      },
    },
  },
  companies: {
    path: 'companies',
    tag: 'Companies',
    scope: 'companies:read',
    prefix: 'com_',
    rules: {
      cnpj: {
        weight: 0.8,
        keys: ['companies.cnpj'],
        doc: 'the same CNPJ root (its first 8 characters: the branches of one company)',
      },
      domain: {
        weight: 0.7,
        keys: ['companies.domain'],
        doc: 'the same registrable domain (`sales.acme.com` and `acme.com`; `acme.com.br` is one, not `com.br`)',
      },
      phone: { weight: 0.7, keys: ['companies.phone'], doc: 'the same phone' },
      name: {
        weight: 0.6,
        keys: ['companies.name'],
        doc: 'the same name ignoring case, accents, punctuation and legal suffixes (Ltda, S.A., SA, ME, EPP, EIRELI, Inc, LLC, Ltd, GmbH)',
      },
    },
  },
};

/** A pair as the API answers it. */
export interface DuplicatePair {
  ids: [string, string];
  score: number;
  reasons: string[];
}

/** 1 − Π(1 − weight) of the matched rules, to 4 decimals (a stable value for the order and the cursor). */
function scoreOf(r: DuplicatesResource, reasons: string[]): number {
  const miss = reasons.reduce((p, reason) => p * (1 - r.rules[reason].weight), 1);
  return Math.round((1 - miss) * 10_000) / 10_000;
}

/**
 * Every pair of the tenant's live records that share a key of the rules asked, most likely first. A group of n
 * records sharing one key gives its n(n-1)/2 pairs; keys held by more than MAX_GROUP records are left out
 * (duplicates.repo.ts says why).
 */
export async function duplicatePairs(ctx: Ctx, r: DuplicatesResource, reasons: readonly string[]): Promise<DuplicatePair[]> {
  const found = new Map<string, Set<string>>();
  const kinds = reasons.flatMap((reason) => r.rules[reason].keys);
  // Each kind's groups of holders (one statement reads them all).
  const byKind = new Map<string, Map<string, string[]>>(kinds.map((k) => [k, new Map()]));
  for (const h of await keyHolders(ctx.reads, ctx.tenantId, kinds)) {
    const groups = byKind.get(h.kind)!;
    const ids = groups.get(h.key);
    if (ids) ids.push(h.id);
    else groups.set(h.key, [h.id]);
  }
  for (const reason of reasons) {
    for (const key of r.rules[reason].keys) {
      const groups = byKind.get(key)!;
      for (const ids of groups.values()) {
        ids.sort();
        for (let i = 0; i < ids.length; i++) {
          for (let j = i + 1; j < ids.length; j++) {
            const pair = `${ids[i]} ${ids[j]}`;
            const set = found.get(pair);
            if (set) set.add(reason);
            else found.set(pair, new Set([reason]));
          }
        }
      }
    }
  }
  const order = Object.keys(r.rules);
  const pairs = [...found].map(([pair, set]): DuplicatePair => {
    const matched = order.filter((o) => set.has(o));
    return { ids: pair.split(' ') as [string, string], score: scoreOf(r, matched), reasons: matched };
  });
  return pairs.sort(comparePairs);
}

/** Score descending, then the ids ascending (as strings). */
function comparePairs(x: { score: number; ids: [string, string] }, y: { score: number; ids: [string, string] }): number {
  if (x.score !== y.score) return y.score - x.score;
  if (x.ids[0] !== y.ids[0]) return x.ids[0] < y.ids[0] ? -1 : 1;
  return x.ids[1] < y.ids[1] ? -1 : x.ids[1] > y.ids[1] ? 1 : 0;
}

interface DuplicatesQueryT {
  reason?: string;
  pageSize?: number;
  limit?: number;
  cursor?: string;
}

/** One page of pairs, after the cursor's (score, a, b) when one is given. */
export async function listDuplicates(
  ctx: Ctx,
  r: DuplicatesResource,
  q: DuplicatesQueryT,
  keyId: string,
): Promise<{ data: DuplicatePair[]; pagination: PaginationT }> {
  const pageSize = pageSizeOf(q, 'pageSize');
  const binding = cursorBinding(ctx.tenantId, keyId, `GET /${r.path}/duplicates`, 'score', 'desc', filtersDigest(stableJson({ reason: q.reason })));
  let pairs = await duplicatePairs(ctx, r, q.reason === undefined ? Object.keys(r.rules) : [q.reason]);
  const total = pairs.length;
  if (q.cursor !== undefined) {
    const [score, ids] = decodeCursor(ctx.config, binding, q.cursor);
    const after = { score: Number(score), ids: ids.split(' ') as [string, string] };
    pairs = pairs.filter((p) => comparePairs(p, after) > 0);
  }
  const data = pairs.slice(0, pageSize);
  const hasNext = pairs.length > pageSize;
  const last = data[data.length - 1];
  const nextCursor = hasNext ? encodeCursor(ctx.config, binding, [last.score, last.ids.join(' ')]) : null;
  return { data, pagination: { page: null, pageSize, total, totalPages: null, hasNext, hasPrev: null, nextCursor } };
}

function pageSchema(r: DuplicatesResource): TSchema {
  const reasons = Object.keys(r.rules);
  const Pair = Type.Object(
    {
      ids: Type.Array(Type.String(), { minItems: 2, maxItems: 2, description: 'The two records’ ids, the smaller first (compared as strings)' }),
      score: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: '1 − Π(1 − weight) of the rules that matched' }),
      reasons: Type.Array(Type.Union(reasons.map((x) => Type.Literal(x))), { description: 'Exactly the rules that matched' }),
    },
    { additionalProperties: false },
  );
  const example = {
    data: [
      { ids: [`${r.prefix}0VccnSB3O9eKOg10dC8W`, `${r.prefix}0VcdT1uXk2mQp7RrYb4Z`], score: scoreOf(r, reasons.slice(0, 2)), reasons: reasons.slice(0, 2) },
      { ids: [`${r.prefix}0Vcb9aLm3NpQr5StUv6W`, `${r.prefix}0VccA7bC8dE9fG0hI1jK`], score: scoreOf(r, reasons.slice(-1)), reasons: reasons.slice(-1) },
    ],
    pagination: { page: null, pageSize: 50, total: 2, totalPages: null, hasNext: false, hasPrev: null, nextCursor: null },
  };
  return Type.Object({ ...Envelope(Pair).properties }, { title: r.path === 'contacts' ? 'ContactDuplicatePage' : 'CompanyDuplicatePage', examples: [example] });
}

function querySchema(r: DuplicatesResource) {
  const reasons = Object.keys(r.rules);
  return Type.Object(
    {
      reason: Type.Optional(
        Type.Union(
          reasons.map((x) => Type.Literal(x)),
          { description: `Only the pairs that this rule matches (\`${reasons.join('`, `')}\`)` },
        ),
      ),
      ...PageSizeParams('pageSize', 'Pairs per page'),
      cursor: CursorParam,
    },
    { additionalProperties: false },
  );
}

function describe(r: DuplicatesResource): string {
  const rules = Object.entries(r.rules).map(([name, rule]) => `- \`${name}\` (weight ${rule.weight}): ${rule.doc}.`);
  return [
    `Requires scope \`${r.scope}\`. Pairs of live ${r.path} that are probably the same record, most likely first (score descending, then ids), each pair once, with the rules that matched:`,
    rules.join('\n'),
    `\`score\` is 1 − Π(1 − weight) over the matched rules. A deleted or merged record leaves every pair at once. A value shared by more than ${MAX_GROUP} records (a chain’s CNPJ root, a common name at a webmail domain) is a pattern, not a duplicate: its pairs are left out. Paged by cursor only: pass \`pagination.nextCursor\` as \`cursor\` with the same \`reason\`.`,
  ].join('\n\n');
}

/** Registers `GET /<path>/duplicates` (static, so Fastify prefers it to `/<path>/:id`). */
export function registerDuplicatesRoute(app: FastifyInstance, r: DuplicatesResource): void {
  const querystring = querySchema(r);
  app.get<{ Querystring: Static<typeof querystring> }>(
    `/${r.path}/duplicates`,
    {
      config: { scopes: [r.scope] },
      schema: {
        operationId: r.path === 'contacts' ? 'listContactDuplicates' : 'listCompanyDuplicates',
        tags: [r.tag],
        summary: `List probable duplicate ${r.path}`,
        description: describe(r),
        querystring,
        response: { 200: pageSchema(r), ...errorResponses(400) },
      },
    },
    async (req) => listDuplicates(ctxOf(req), r, req.query, req.principal.keyId),
  );
}
