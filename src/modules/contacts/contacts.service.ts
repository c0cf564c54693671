import { guardUnique } from '../../db/errors.js';
import { withTx, type Db } from '../../db/index.js';
import { normalizeIsoDateTime } from '../../domain/dates.js';
import { emailDomain, normalizeEmail } from '../../domain/email.js';
import { DomainError } from '../../domain/errors.js';
import { compileFilterParts } from '../../db/filter-sql.js';
import { normalizePhone } from '../../domain/phone.js';
import { errors, FieldChecks, fieldRule } from '../../errors.js';
import { inTx, type Ctx } from '../../http/context.js';
import type { ValueRules } from '../../http/validation.js';
import { pageSizeOf } from '../../http/pagination.js';
import type { JsonText } from '../../http/replies.js';
import type { ListPage } from '../../listing/page.js';
import { recordsPage } from '../../listing/planner.js';
import { recordEvent, recordUpdated } from '../shared/record-change.js';
import { newId } from '../../util/ids.js';
import { nowIso } from '../../util/time.js';
import { markChanged } from '../shared/changes.js';
import { notFoundOrMerged } from '../shared/merge.js';
import { checkCustomPropertiesIn, customPropertiesJson, customPropertiesRules, propertyDefs, readCustomProperties } from '../shared/custom-properties.js';
import { assertRef, assertRefArray } from '../shared/refs.js';
import { parseTagIds, replaceRecordTags, sortedTagIds } from '../shared/record-tags.js';
import { onlyId } from '../../db/batch.js';
import * as repo from './contacts.repo.js';
import type { ContactCreateT, ContactListQueryT, ContactSearchBodyT, ContactSortKey, ContactT, ContactUpdateT } from './contacts.schema.js';

export type { ContactT, ContactCreateT, ContactUpdateT } from './contacts.schema.js';

const notFound = () => errors.notFound('Contact not found');

export function toContact(r: repo.ContactRow, tags: string[]): ContactT {
  return {
    id: r.id,
    firstName: r.first_name,
    lastName: r.last_name,
    email: r.email,
    phone: r.phone,
    companyId: r.company_id,
    ownerId: r.owner_id,
    tags,
    customProperties: readCustomProperties(r.custom_properties),
    score: r.score === null ? null : Number(r.score),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // Only listings with includeDeleted select it (C.1); other reads leave it out.
    ...(r.deleted_at !== undefined ? { deletedAt: r.deleted_at } : {}),
  };
}

// ------------------------------------------------------------------------------------------------
// Reads

/** A live contact as the single read answers it; 404 when missing or soft-deleted (writes and events read it so). */
export async function getContact(ctx: Ctx, id: string): Promise<ContactT> {
  const row = await repo.findContact(ctx.db, ctx.tenantId, id);
  if (!row) throw await notFoundOrMerged(ctx.db, 'contacts', ctx.tenantId, id, 'Contact not found');
  return toContact(row, parseTagIds(row.tag_ids));
}

/** GET /contacts/:id: the contact as JSON text built by the database (http/replies.ts sendJsonText). */
export async function getContactJson(ctx: Ctx, id: string): Promise<JsonText<ContactT>> {
  const json = await repo.findContactJson(ctx.db, ctx.tenantId, id);
  if (json === undefined) throw await notFoundOrMerged(ctx.db, 'contacts', ctx.tenantId, id, 'Contact not found');
  return json as JsonText<ContactT>;
}

/** Live contacts by id (missing and deleted ones are simply absent from the map). */
export async function contactsByIds(ctx: Ctx, ids: string[]): Promise<Map<string, ContactT>> {
  if (ids.length === 0) return new Map();
  const one = onlyId(ids);
  if (one !== undefined) {
    // One contact (a deal's): the single read's statement.
    const row = await repo.findContact(ctx.db, ctx.tenantId, one);
    return new Map(row ? [[row.id, toContact(row, parseTagIds(row.tag_ids))]] : []);
  }
  const rows = await repo.findContacts(ctx.db, ctx.tenantId, ids);
  return new Map(rows.map((r) => [r.id, toContact(r, parseTagIds(r.tag_ids))]));
}

/** The live contact holding this e-mail, else the one holding this phone (inputs are normalized first). */
export async function findContactIdByEmailOrPhone(ctx: Ctx, input: { email?: string | null; phone?: string | null }): Promise<string | undefined> {
  const email = soft(() => (input.email ? normalizeEmail(input.email) : undefined));
  if (email) {
    const id = await repo.contactIdBy(ctx.db, ctx.tenantId, 'email', email);
    if (id) return id;
  }
  const phone = soft(() => (input.phone ? normalizePhone(input.phone) : undefined));
  if (phone) return repo.contactIdBy(ctx.db, ctx.tenantId, 'phone', phone);
  return undefined;
}

/** The live contact holding a stored (normalized) e-mail or phone; batch upserts match on it. */
export function contactIdByUnique(ctx: Ctx, column: 'email' | 'phone', value: string): Promise<string | undefined> {
  return repo.contactIdBy(ctx.db, ctx.tenantId, column, value);
}

function soft<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (err instanceof DomainError) return undefined;
    throw err;
  }
}

interface PageArgs {
  page?: number;
  pageSize?: number;
  limit?: number;
  cursor?: string;
  sortKey?: ContactSortKey;
  sortOrder?: 'asc' | 'desc';
}

async function pageOf(
  ctx: Ctx,
  args: PageArgs,
  filter: repo.ContactFilter,
  bound: { keyId: string; endpoint: string; boundFilters?: unknown; readsDefinitions?: boolean },
): Promise<ListPage<ContactT>> {
  const { keyId, endpoint, boundFilters, readsDefinitions } = bound;
  const sortKey = args.sortKey ?? 'createdAt';
  const order = args.sortOrder ?? 'desc';
  const req = {
    page: args.page,
    pageSize: pageSizeOf(args, 'pageSize'),
    cursor: args.cursor,
    sortKey,
    order,
    filters: filter,
    keyId,
    endpoint,
    boundFilters,
    readsDefinitions,
  };
  return recordsPage(ctx, repo.CONTACT_LISTING, req);
}

/** GET /contacts (spec 4.1, B.4, C.1). `keyId` binds cursors to the caller's key. */
export async function listContacts(ctx: Ctx, q: ContactListQueryT, keyId = ''): Promise<ListPage<ContactT>> {
  const updatedAfter = q.updatedAfter === undefined ? undefined : fieldRule('updatedAfter', () => normalizeIsoDateTime(q.updatedAfter!));
  // A blank search is no filter (contactListing trims it): unset, so that the page may walk its index.
  const filter = { search: q.search?.trim() ? q.search : undefined, ownerId: q.ownerId, updatedAfter, includeDeleted: q.includeDeleted === true };
  return pageOf(ctx, q, filter, { keyId, endpoint: 'GET /contacts' });
}

/** POST /contacts/search: the filter language (B.4), compiled to SQL. */
export async function searchContacts(ctx: Ctx, body: ContactSearchBodyT, keyId = ''): Promise<ListPage<ContactT>> {
  let filter: repo.ContactFilter = {};
  // Property definitions are read only when the filter names a custom property. Their types then shape the
  // SQL, and they can change under the same body: such a search is compiled anew every time.
  const namesProperties = body.filters !== undefined && JSON.stringify(body.filters).includes('customProperties.');
  if (body.filters !== undefined) {
    const properties = namesProperties ? await propertyDefs(ctx, 'contact') : new Map();
    // An `ownerId eq` the whole filter requires is the owner of GET /contacts?ownerId=: the page walks the owner's index.
    const parts = compileFilterParts(body.filters, 'contact', { dialect: ctx.dialect, tenantId: ctx.tenantId, properties });
    filter = { ownerId: parts.ownerId, filter: parts.rest && { where: parts.rest, cost: parts.rowCost } };
  }
  return pageOf(ctx, body, filter, { keyId, endpoint: 'POST /contacts/search', boundFilters: body.filters ?? null, readsDefinitions: namesProperties });
}

// ------------------------------------------------------------------------------------------------
// Writes

function firstNameOf(s: string): string {
  const v = s.trim();
  if (!v) throw errors.field('firstName', 'must not be blank');
  return v;
}

/** Optional text: trimmed; blank means no value. */
const optionalText = (s: string | null): string | null => (s === null ? null : s.trim() || null);

const emailOf = (s: string | null) => (s === null || s.trim() === '' ? null : fieldRule('email', () => normalizeEmail(s)));
const phoneOf = (s: string | null) => (s === null || s.trim() === '' ? null : fieldRule('phone', () => normalizePhone(s)));

/** The value rules of a contact body (C.5), run on a body whose shape is refused too. */
export const CONTACT_VALUE_RULES: ValueRules = { firstName: firstNameOf, email: emailOf, phone: phoneOf };

/** C.5: the rules of a refused body that read the tenant's property definitions. */
export const CONTACT_DATA_RULES = customPropertiesRules('contact');

/** B.3: the company whose `domain` is the e-mail's domain, when exactly one live company has it. */
async function companyForEmail(db: Db, tenantId: string, email: string): Promise<string | null> {
  const ids = await repo.companyIdsByDomain(db, tenantId, emailDomain(email));
  return ids.length === 1 ? ids[0] : null;
}

/**
 * Creates a contact (spec 2.1, B.3) and records `contact.created`; works inside a caller's transaction.
 * NOTE: `ownerId` has no default (the spec gives "default: the creating user" only for activities and
 * proposals); an integration sets it explicitly.
 */
export async function createContact(ctx: Ctx, input: ContactCreateT): Promise<ContactT> {
  const checks = new FieldChecks();
  const firstName = checks.check('firstName', () => firstNameOf(input.firstName));
  const email = checks.check('email', () => emailOf(input.email ?? null));
  const phone = checks.check('phone', () => phoneOf(input.phone ?? null));
  const tags = [...new Set(input.tags ?? [])];
  return withTx(ctx.db, async (tx) => {
    const { tenantId } = ctx;
    // The definitions are read in the transaction, still before anything else is read or written (C.5). On SQLite
    // a read outside it committed the group of transactions the create was about to join (sqlite-fast-driver.ts):
    // one COMMIT, one read transaction and ~15 pages written to the WAL per create instead of per group.
    const customValues = await checkCustomPropertiesIn(tx, tenantId, 'contact', input.customProperties, checks);
    checks.assert();
    await assertRef(tx, tenantId, 'company', 'companyId', input.companyId);
    await assertRef(tx, tenantId, 'user', 'ownerId', input.ownerId);
    if (input.tags?.length) await assertRefArray(tx, tenantId, 'tag', 'tags', input.tags);
    let companyId = input.companyId ?? null;
    if (email && input.companyId === undefined) companyId = await companyForEmail(tx, tenantId, email);
    const now = nowIso();
    const row: repo.NewContactRow = {
      tenant_id: tenantId,
      id: newId('con'),
      first_name: firstName,
      last_name: optionalText(input.lastName ?? null),
      email,
      phone,
      company_id: companyId,
      owner_id: input.ownerId ?? null,
      score: input.score ?? null,
      custom_properties: customPropertiesJson(customValues),
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await guardUnique(tx, tenantId, { email, phone }, () => repo.insertContact(tx, row));
    if (tags.length) await replaceRecordTags(tx, tenantId, 'contact', row.id, tags);
    // The row as written is the row a read would return: no second statement to read it back.
    const { deleted_at: _live, ...written } = row;
    const record = toContact(written, sortedTagIds(tags));
    await recordEvent(tx, ctx, 'contact.created', record);
    await markChanged(tx, tenantId, 'contact');
    return record;
  });
}

const sameSet = (a: string[], b: string[]) => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
};

/**
 * Partial update (PATCH): omitted fields stay, `null` clears optional ones, `tags` replaces the set,
 * `customProperties` merges. Records `contact.updated` when anything changed; works inside a caller's
 * transaction.
 */
export async function updateContact(ctx: Ctx, id: string, input: ContactUpdateT): Promise<ContactT> {
  const set: repo.ContactChanges = {};
  const checks = new FieldChecks();
  if (input.firstName !== undefined) set.first_name = checks.check('firstName', () => firstNameOf(input.firstName!));
  if (input.lastName !== undefined) set.last_name = optionalText(input.lastName);
  if (input.email !== undefined) set.email = checks.check('email', () => emailOf(input.email!));
  if (input.phone !== undefined) set.phone = checks.check('phone', () => phoneOf(input.phone!));
  if (input.score !== undefined) set.score = input.score;
  return withTx(ctx.db, async (tx) => {
    const { tenantId } = ctx;
    // In the transaction, before anything else, as createContact's (which says why).
    const customValues = await checkCustomPropertiesIn(tx, tenantId, 'contact', input.customProperties, checks);
    checks.assert();
    const found = await repo.findContactForUpdate(tx, tenantId, id);
    if (!found) throw await notFoundOrMerged(tx, 'contacts', ctx.tenantId, id, 'Contact not found');
    const { row: current, tags: currentTags } = found;
    if (input.companyId !== undefined) {
      await assertRef(tx, tenantId, 'company', 'companyId', input.companyId);
      set.company_id = input.companyId;
    }
    if (input.ownerId !== undefined) {
      await assertRef(tx, tenantId, 'user', 'ownerId', input.ownerId);
      set.owner_id = input.ownerId;
    }
    if (input.tags?.length) await assertRefArray(tx, tenantId, 'tag', 'tags', input.tags);
    if (customValues !== undefined) set.custom_properties = customPropertiesJson(customValues, current.custom_properties);
    // B.3: an e-mail given without a companyId, on a contact without a company, picks the matching company.
    if (set.email && input.companyId === undefined && current.company_id === null) {
      const match = await companyForEmail(tx, tenantId, set.email);
      if (match) set.company_id = match;
    }
    for (const k of Object.keys(set) as (keyof typeof set)[]) {
      if (set[k] === current[k as keyof repo.ContactRow]) delete set[k];
    }
    const tagsChanged = input.tags !== undefined && !sameSet(input.tags, currentTags);
    if (Object.keys(set).length === 0 && !tagsChanged) return toContact(current, currentTags);

    set.updated_at = nowIso();
    const update = () => repo.updateContact(tx, tenantId, id, set, current);
    if (set.email || set.phone) await guardUnique(tx, tenantId, { email: set.email, phone: set.phone }, update);
    else await update();
    if (tagsChanged) await replaceRecordTags(tx, tenantId, 'contact', id, input.tags!);
    // The row as updated is the row a read would return (as createContact's): no statement to read it back.
    const record = toContact({ ...current, ...set }, tagsChanged ? sortedTagIds(input.tags!) : currentTags);
    await recordUpdated(tx, ctx, 'contact.updated', toContact(current, currentTags), record);
    await markChanged(tx, tenantId, 'contact');
    return record;
  });
}

/**
 * Soft delete (spec 4.1): the contact disappears from every read; a second delete is 404. Records
 * `contact.deleted` with the contact as it was last read (C.4).
 */
export async function deleteContact(ctx: Ctx, id: string): Promise<void> {
  await withTx(ctx.db, async (tx) => {
    const last = await getContact(inTx(ctx, tx), id);
    const n = await repo.softDeleteContact(tx, ctx.tenantId, id, nowIso());
    if (!n) throw await notFoundOrMerged(tx, 'contacts', ctx.tenantId, id, 'Contact not found');
    await recordEvent(tx, ctx, 'contact.deleted', last);
    await markChanged(tx, ctx.tenantId, 'contact');
  });
}

/** D.2: contacts of a merged company belong to the primary. How many moved. */
export function repointCompany(db: Db, tenantId: string, from: string, to: string, now: string): Promise<number> {
  return repo.repointCompany(db, tenantId, from, to, now);
}
