import { guardUnique } from '../../db/errors.js';
import { withTx } from '../../db/index.js';
import { normalizeCnpj } from '../../domain/cnpj.js';
import { normalizeIsoDateTime } from '../../domain/dates.js';
import { normalizePhone } from '../../domain/phone.js';
import { normalizeDomain, normalizeWebsite } from '../../domain/web.js';
import { errors, FieldChecks, fieldRule } from '../../errors.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { pageSizeOf } from '../../http/pagination.js';
import type { JsonText } from '../../http/replies.js';
import type { ListPage } from '../../listing/page.js';
import { recordsPage } from '../../listing/planner.js';
import { newId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import { markChanged } from '../shared/changes.js';
import { checkCustomProperties, customPropertiesJson, customPropertiesRules, readCustomProperties } from '../shared/custom-properties.js';
import { assertRef, assertRefArray } from '../shared/refs.js';
import { parseTagIds, replaceRecordTags, sortedTagIds } from '../shared/record-tags.js';
import { recordEvent, recordUpdated } from '../shared/record-change.js';
import { notFoundOrMerged } from '../shared/merge.js';
import { recordsOf, type RecordReaders } from '../shared/records.js';
import { onlyId } from '../../db/batch.js';
import * as repo from './companies.repo.js';
import type { CompanyCreateT, CompanyListQueryT, CompanyT, CompanyUpdateT } from './companies.schema.js';

export function toCompany(r: repo.CompanyRow, tags: string[]): CompanyT {
  return {
    id: r.id,
    name: r.name,
    cnpj: r.cnpj,
    website: r.website,
    domain: r.domain,
    phone: r.phone,
    industry: r.industry,
    ownerId: r.owner_id,
    tags,
    customProperties: readCustomProperties(r.custom_properties),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // Only listings with includeDeleted select it (C.1); other reads leave it out.
    ...(r.deleted_at !== undefined ? { deletedAt: r.deleted_at } : {}),
  };
}

function cleanName(name: string): string {
  const n = name.trim();
  if (!n) throw errors.field('name', 'must not be blank');
  return n;
}

/** The value rules of a company body (C.5), run on a body whose shape is refused too. */
export const COMPANY_VALUE_RULES = {
  name: cleanName,
  cnpj: (v: string) => normalizeCnpj(v),
  website: (v: string) => normalizeWebsite(v),
  domain: (v: string) => normalizeDomain(v),
  phone: (v: string) => normalizePhone(v),
  industry: (v: string) => v.trim(),
} satisfies ValueRules;

/** C.5: the rules of a refused body that read the tenant's property definitions. */
export const COMPANY_DATA_RULES = customPropertiesRules('company');

/**
 * The fields of a write, normalized (`null` clears; absent keys stay absent) with its custom property
 * values; one 400 naming every invalid field (C.5).
 */
async function checkedFields(ctx: Ctx, input: CompanyCreateT | CompanyUpdateT) {
  const checks = new FieldChecks();
  const set: repo.CompanyChanges = {};
  const rules = COMPANY_VALUE_RULES;
  const optional = (field: 'cnpj' | 'website' | 'domain' | 'phone', value: string | null) =>
    value === null ? null : checks.check(field, () => rules[field](value));
  if (input.name !== undefined) set.name = checks.check('name', () => rules.name(input.name!));
  if (input.cnpj !== undefined) set.cnpj = optional('cnpj', input.cnpj);
  if (input.website !== undefined) set.website = optional('website', input.website);
  if (input.domain !== undefined) set.domain = optional('domain', input.domain);
  if (input.phone !== undefined) set.phone = optional('phone', input.phone);
  if (input.industry !== undefined) {
    // A blank industry is no industry.
    const v = input.industry === null ? '' : checks.check('industry', () => rules.industry(input.industry!));
    set.industry = v === '' ? null : v;
  }
  if (input.ownerId !== undefined) set.owner_id = input.ownerId;
  const customValues = await checkCustomProperties(ctx, 'company', input.customProperties, checks);
  checks.assert();
  return { set, customValues };
}

/** Body references exist in the tenant (B.2): 404 naming `ownerId` or `tags[i]`. */
async function assertReferences(ctx: Ctx, input: CompanyCreateT | CompanyUpdateT): Promise<void> {
  if (input.ownerId != null) await assertRef(ctx.db, ctx.tenantId, 'user', 'ownerId', input.ownerId);
  if (input.tags?.length) await assertRefArray(ctx.db, ctx.tenantId, 'tag', 'tags', input.tags);
}

export async function getCompany(ctx: Ctx, id: string): Promise<CompanyT> {
  const row = await repo.findCompany(ctx.db, ctx.tenantId, id);
  if (!row) throw await notFoundOrMerged(ctx.db, 'companies', ctx.tenantId, id, 'Company not found');
  return toCompany(row, parseTagIds(row.tag_ids));
}

/** Live companies among `ids`, by id (missing or deleted ones are left out); for expansions. */
export async function companiesByIds(ctx: Ctx, ids: string[]): Promise<Map<string, CompanyT>> {
  const wanted = ids.filter((id) => typeof id === 'string');
  const out = new Map<string, CompanyT>();
  if (wanted.length === 0) return out;
  const one = onlyId(wanted);
  if (one !== undefined) {
    // One company (a deal's, a contact's): the single read's statement.
    const row = await repo.findCompany(ctx.db, ctx.tenantId, one);
    if (row) out.set(row.id, toCompany(row, parseTagIds(row.tag_ids)));
    return out;
  }
  for (const r of await repo.findCompanies(ctx.db, ctx.tenantId, wanted)) out.set(r.id, toCompany(r, parseTagIds(r.tag_ids)));
  return out;
}

/** The live company holding a stored (normalized) CNPJ or domain; batch upserts match on it. */
export function companyIdByUnique(ctx: Ctx, column: 'cnpj' | 'domain', value: string): Promise<string | undefined> {
  return repo.companyIdBy(ctx.db, ctx.tenantId, column, value);
}

/** GET /companies/:id: the company as JSON text built by the database (http/replies.ts sendJsonText). */
export async function getCompanyJson(ctx: Ctx, id: string): Promise<JsonText<CompanyT>> {
  const json = await repo.findCompanyJson(ctx.db, ctx.tenantId, id);
  if (json === undefined) throw await notFoundOrMerged(ctx.db, 'companies', ctx.tenantId, id, 'Company not found');
  return json as JsonText<CompanyT>;
}

/** GET /companies (spec 4.4, B.4, C.1). `keyId` binds cursors to the caller's key. */
export async function listCompanies(ctx: Ctx, q: CompanyListQueryT, keyId = ''): Promise<ListPage<CompanyT>> {
  const req = { page: q.page, pageSize: pageSizeOf(q, 'pageSize'), cursor: q.cursor };
  const updatedAfter = q.updatedAfter === undefined ? undefined : fieldRule('updatedAfter', () => normalizeIsoDateTime(q.updatedAfter!));
  const search = q.search?.trim() || undefined;
  const cnpjNeedle = search?.replace(/[.\/\-\s]/g, '').toUpperCase();
  const filter: repo.CompanyFilter = {
    search,
    cnpjSearch: cnpjNeedle && cnpjNeedle !== search?.toUpperCase() ? cnpjNeedle : undefined,
    ownerId: q.ownerId,
    updatedAfter,
    includeDeleted: q.includeDeleted === true,
  };
  const sortKey = q.sortKey ?? 'createdAt';
  return recordsPage(ctx, repo.COMPANY_LISTING, { ...req, sortKey, order: q.sortOrder ?? 'desc', filters: filter, keyId, endpoint: 'GET /companies' });
}

export async function createCompany(ctx: Ctx, input: CompanyCreateT): Promise<CompanyT> {
  const { set: fields, customValues } = await checkedFields(ctx, input);
  const now = nowIso();
  const id = newId('com');
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    await assertReferences(c, input);
    const row: repo.NewCompanyRow = {
      tenant_id: ctx.tenantId,
      id,
      name: fields.name!,
      cnpj: fields.cnpj ?? null,
      website: fields.website ?? null,
      domain: fields.domain ?? null,
      phone: fields.phone ?? null,
      industry: fields.industry ?? null,
      owner_id: fields.owner_id ?? null,
      custom_properties: customPropertiesJson(customValues),
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await guardUnique(tx, ctx.tenantId, { cnpj: row.cnpj, domain: row.domain }, () => repo.insertCompany(tx, row));
    if (input.tags?.length) await replaceRecordTags(tx, ctx.tenantId, 'company', id, input.tags);
    await markChanged(tx, ctx.tenantId, 'company');
    const { deleted_at: _live, ...written } = row;
    const record = toCompany(written, sortedTagIds(input.tags ?? []));
    await recordEvent(tx, ctx, 'company.created', record);
    return record;
  });
}

export async function updateCompany(ctx: Ctx, id: string, input: CompanyUpdateT): Promise<CompanyT> {
  const { set: fields, customValues } = await checkedFields(ctx, input);
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const current = await repo.findCompany(tx, ctx.tenantId, id);
    if (!current) throw await notFoundOrMerged(tx, 'companies', ctx.tenantId, id, 'Company not found');
    const before = toCompany(current, parseTagIds(current.tag_ids));
    await assertReferences(c, input);
    const set: repo.CompanyChanges = { ...fields };
    if (customValues !== undefined) set.custom_properties = customPropertiesJson(customValues, current.custom_properties);
    const changed = Object.keys(set).length > 0 || input.tags !== undefined;
    if (!changed) return before;
    set.updated_at = nowIso();
    await guardUnique(tx, ctx.tenantId, { cnpj: set.cnpj, domain: set.domain }, () => repo.updateCompany(tx, ctx.tenantId, id, set, current));
    if (input.tags !== undefined) await replaceRecordTags(tx, ctx.tenantId, 'company', id, input.tags);
    await markChanged(tx, ctx.tenantId, 'company');
    // The row as updated is the row a read would return (as createCompany's): no statement to read it back.
    const record = toCompany({ ...current, ...set }, input.tags !== undefined ? sortedTagIds(input.tags) : before.tags);
    await recordUpdated(tx, ctx, 'company.updated', before, record);
    return record;
  });
}

/**
 * Soft delete. In the same transaction the company's contacts and deals lose the reference and their
 * `updatedAt` moves (spec 4.4, B.3); dynamic lists of every affected type are marked for recalculation.
 * `readers` read the contacts and deals whose `*.updated` it raises.
 */
export async function deleteCompany(ctx: Ctx, id: string, readers: Pick<RecordReaders, 'contact' | 'deal'>): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const last = await getCompany(c, id);
    const now = nowIso();
    const deleted = await repo.softDeleteCompany(tx, ctx.tenantId, id, now);
    if (!deleted) throw await notFoundOrMerged(tx, 'companies', ctx.tenantId, id, 'Company not found');
    const cleared = await repo.clearCompanyReferences(tx, ctx.tenantId, id, now);
    await recordEvent(tx, ctx, 'company.deleted', last);
    await markChanged(tx, ctx.tenantId, 'company');
    // C.4: each contact and deal that lost the reference raises its `*.updated` (changes: companyId).
    for (const [type, ids] of [
      ['contact', cleared.contacts],
      ['deal', cleared.deals],
    ] as const) {
      if (!ids.length) continue;
      await markChanged(tx, ctx.tenantId, type);
      for (const record of (await recordsOf(readers[type], c, ids)).values()) {
        // A deal's expanded `company` follows `companyId`: the id is the change.
        await recordUpdated(tx, ctx, `${type}.updated`, { ...record, companyId: id }, record, ['contact', 'company']);
      }
    }
  });
}
