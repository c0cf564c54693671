import type { FastifyBaseLogger } from 'fastify';
import { withTx, type Db } from '../../db/index.js';
import { recordEvent } from '../shared/record-change.js';
import { DomainError } from '../../domain/errors.js';
import { normalizePropertyValue } from '../../domain/properties.js';
import { ApiError, errors, type FieldIssue } from '../../errors.js';
import { inTx, type Ctx } from '../../http/context.js';
import { pageRequestOf, type Page } from '../../http/pagination.js';
import { rowsPage } from '../../listing/planner.js';
import { newId } from '../../util/ids.js';
import { parseJson } from '../../util/json.js';
import { nowIso } from '../../util/time.js';
import { createContact, findContactIdByEmailOrPhone, updateContact } from '../contacts/contacts.service.js';
import type { ContactCreateT, ContactUpdateT } from '../contacts/contacts.schema.js';
import { propertyDefs } from '../shared/custom-properties.js';
import * as repo from './forms.repo.js';
import type { FormDetailT, FormT, IntakeResultT, StoredField, SubmissionsQueryT, SubmissionT } from './forms.schema.js';
import { checkValues, type Source } from './forms.values.js';
import { extended } from '../../util/objects.js';

/** Public path of a form. NOTE: A.4 — tenants may share form slugs, so the path carries the tenant's slug. */
export function formPath(tenantSlug: string, formSlug: string): string {
  return `/f/${encodeURIComponent(tenantSlug)}/${encodeURIComponent(formSlug)}`;
}

function fieldsOf(row: repo.FormRow): StoredField[] {
  return parseJson<StoredField[]>(row.fields, []);
}

export function toForm(row: repo.FormRow, baseUrl: string): FormT {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    embedUrl: baseUrl + formPath(row.tenant_slug, row.slug),
    fields: fieldsOf(row).map((f) => ({ name: f.name, label: f.label, type: f.type, required: f.required })),
    submissionsCount: Number(row.submissions_count),
    createdAt: row.created_at,
  };
}

// NOTE: A.4 gap — `mapsTo` (which contact field a value feeds) is CRM configuration made in the UI;
// it is not part of the spec's field structure and stays internal.
export function toFormDetail(row: repo.FormRow, baseUrl: string): FormDetailT {
  return {
    ...toForm(row, baseUrl),
    fields: fieldsOf(row).map((f) => ({
      name: f.name,
      label: f.label,
      type: f.type,
      required: f.required,
      ...(f.options && (f.type === 'select' || f.type === 'multi_select') ? { options: f.options } : {}),
      ...(f.validations && Object.keys(f.validations).length ? { validations: f.validations } : {}),
    })),
  };
}

function toSubmission(r: repo.SubmissionRow): SubmissionT {
  // Both `null` (stored as JSON null) once the submission's contact was erased (D.5).
  const meta = parseJson<Record<string, string | null> | null>(r.metadata, {});
  return {
    id: r.id,
    formId: r.form_id,
    contactId: r.contact_id,
    values: parseJson<Record<string, unknown> | null>(r.submitted_values, {}),
    metadata: meta && { ipAddress: meta.ipAddress ?? null, userAgent: meta.userAgent ?? null, referrer: meta.referrer ?? null },
    createdAt: r.created_at,
  };
}

/**
 * D.5: the submissions of an erased contact keep their form and time, and lose their values, their metadata and
 * the contact. Returns their ids.
 */
export function forgetContactSubmissions(db: Db, tenantId: string, contactId: string): Promise<string[]> {
  return repo.forgetContactSubmissions(db, tenantId, contactId);
}

export async function listForms(ctx: Ctx, baseUrl: string): Promise<FormT[]> {
  return (await repo.listForms(ctx.db, ctx.tenantId)).map((r) => toForm(r, baseUrl));
}

export async function getForm(ctx: Ctx, id: string, baseUrl: string): Promise<FormDetailT> {
  const row = await repo.findForm(ctx.db, ctx.tenantId, id);
  if (!row) throw errors.notFound('Form not found');
  return toFormDetail(row, baseUrl);
}

/** GET /forms/:id/submissions: newest first, by page or cursor (C.1). */
export async function listSubmissions(ctx: Ctx, formId: string, q: SubmissionsQueryT, keyId = ''): Promise<Page<SubmissionT>> {
  const req = pageRequestOf(q, 'limit');
  const form = await repo.findForm(ctx.db, ctx.tenantId, formId);
  if (!form) throw errors.notFound('Form not found');
  const { data: rows, pagination } = await rowsPage<repo.SubmissionRow, { formId: string }, 'createdAt'>(ctx, repo.SUBMISSION_LISTING, {
    ...req,
    sortKey: 'createdAt',
    order: 'desc',
    filters: { formId: form.id },
    boundFilters: null,
    keyId,
    endpoint: `GET /forms/${form.id}/submissions`,
  });
  return { data: rows.map(toSubmission), pagination };
}

// ---------------------------------------------------------------------------------------------------
// Public intake (CONTRACT A.4)

export interface PublicForm {
  tenantId: string;
  tenantSlug: string;
  /** The tenant's locale: language of the public pages (C.5). */
  locale: string;
  id: string;
  name: string;
  slug: string;
  fields: StoredField[];
}

/** The form behind a public URL; 404 for an unknown tenant or form (the two look the same). */
export async function findPublicForm(db: Ctx['db'], tenantSlug: string, formSlug: string): Promise<PublicForm> {
  const row = await repo.findPublicForm(db, tenantSlug, formSlug);
  if (!row) throw errors.notFound('Form not found');
  return { tenantId: row.tenant_id, tenantSlug: row.tenant_slug, locale: row.locale, id: row.id, name: row.name, slug: row.slug, fields: fieldsOf(row) };
}

export interface SubmissionMetadata {
  ipAddress: string | null;
  userAgent: string | null;
  referrer: string | null;
}

/** Validation errors of a submission, with the values as the visitor sent them (to refill an HTML form). */
export function validateSubmission(form: PublicForm, body: unknown, source: Source): Record<string, unknown> {
  const { values, issues } = checkValues(form.fields, body, source);
  if (issues.length) throw errors.validation(issues);
  return values;
}

/**
 * Records one submission (CONTRACT A.4) in one transaction: the form's counter, the contact created
 * or updated through the contacts service (its uniqueness rules, events and change marks apply), and
 * the submission linked to that contact. Invalid values change nothing.
 */
export async function submitForm(
  ctx: Ctx,
  form: PublicForm,
  body: unknown,
  source: Source,
  metadata: SubmissionMetadata,
  log?: FastifyBaseLogger,
): Promise<IntakeResultT> {
  const values = validateSubmission(form, body, source);
  return withTx(ctx.db, async (tx) => {
    const c = inTx(ctx, tx);
    const now = nowIso();
    await repo.incrementSubmissions(tx, ctx.tenantId, form.id, now);
    // Submissions list newest first: keep created_at strictly increasing per form (the counter's row
    // lock serializes this read on PostgreSQL), so two submissions within one millisecond still order.
    const last = await repo.latestSubmissionAt(tx, ctx.tenantId, form.id);
    const createdAt = last && last >= now ? new Date(Date.parse(last) + 1).toISOString() : now;
    const contactId = await upsertContact(c, form.fields, values, log);
    const row = {
      tenant_id: ctx.tenantId,
      id: newId('sub'),
      form_id: form.id,
      contact_id: contactId,
      submitted_values: JSON.stringify(values),
      metadata: JSON.stringify(metadata),
      created_at: createdAt,
    };
    await repo.insertSubmission(tx, row);
    // C.4: the submission as GET /forms/:id/submissions lists it, in the transaction of the intake.
    await recordEvent(tx, ctx, 'form.submitted', toSubmission(row));
    return { submissionId: row.id, contactId };
  });
}

type ContactFields = { firstName?: string; lastName?: string; email?: string; phone?: string; customProperties?: Record<string, unknown> };

function asText(v: unknown): string {
  return Array.isArray(v) ? v.map(String).join(', ') : String(v);
}

/** Applies `mapsTo`: contact fields from the submitted values. */
async function mappedContact(ctx: Ctx, fields: StoredField[], values: Record<string, unknown>, log?: FastifyBaseLogger): Promise<ContactFields> {
  const out: ContactFields = {};
  const custom: Record<string, unknown> = {};
  let defs: Awaited<ReturnType<typeof propertyDefs>> | undefined;
  for (const f of fields) {
    if (!f.mapsTo || !Object.prototype.hasOwnProperty.call(values, f.name)) continue;
    const v = values[f.name];
    if (f.mapsTo === 'firstName' || f.mapsTo === 'lastName') out[f.mapsTo] = asText(v);
    else if (f.mapsTo === 'email' || f.mapsTo === 'phone')
      out[f.mapsTo] = v as string; // normalized by checkValues
    else if (f.mapsTo.startsWith('customProperties.')) {
      const propertyId = f.mapsTo.slice('customProperties.'.length);
      defs ??= await propertyDefs(ctx, 'contact');
      const def = defs.get(propertyId);
      // NOTE: A.4 gap — a value the mapped property cannot hold (its options differ from the field's,
      // or the property is gone) is a configuration mismatch the visitor cannot fix: the submission
      // keeps the value and the contact is left without it, rather than refusing the visitor.
      try {
        if (!def) throw new DomainError('the mapped property no longer exists');
        Object.defineProperty(custom, propertyId, { value: normalizePropertyValue(def, v), enumerable: true, writable: true, configurable: true });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        log?.warn({ field: f.name, propertyId, reason: err.message }, 'form value not copied to the contact property');
      }
    }
  }
  if (Object.keys(custom).length) out.customProperties = custom;
  return out;
}

/**
 * Creates or updates the contact matched by e-mail, else by phone. A phone that already belongs to
 * another contact than the e-mail's is left where it is (not moved, no 409 for the visitor).
 */
async function upsertContact(ctx: Ctx, fields: StoredField[], values: Record<string, unknown>, log?: FastifyBaseLogger): Promise<string> {
  const mapped = await mappedContact(ctx, fields, values, log);
  const byEmail = mapped.email ? ((await findContactIdByEmailOrPhone(ctx, { email: mapped.email })) ?? undefined) : undefined;
  const byPhone = mapped.phone ? ((await findContactIdByEmailOrPhone(ctx, { phone: mapped.phone })) ?? undefined) : undefined;
  const target = byEmail ?? byPhone;
  try {
    if (target) {
      const patch: ContactFields = { ...mapped };
      if (byPhone && byPhone !== target) delete patch.phone;
      await updateContact(ctx, target, patch as ContactUpdateT);
      return target;
    }
    // NOTE: A.4 gap — a new contact needs a first name: the e-mail's local part, else "Unknown".
    const firstName = mapped.firstName?.trim() ? mapped.firstName : mapped.email ? mapped.email.slice(0, mapped.email.lastIndexOf('@')) : 'Unknown';
    const created = await createContact(ctx, extended(mapped, { firstName }) as ContactCreateT);
    return created.id;
  } catch (err) {
    throw renameContactIssues(err, fields);
  }
}

/** A contact-field validation error is reported under the form field that fed it. */
function renameContactIssues(err: unknown, fields: StoredField[]): unknown {
  if (!(err instanceof ApiError) || !Array.isArray(err.extra.details)) return err;
  const byTarget = new Map(fields.filter((f) => f.mapsTo).map((f) => [f.mapsTo!, f.name]));
  const details = (err.extra.details as FieldIssue[]).map((d) => ({ field: byTarget.get(d.field) ?? d.field, message: d.message }));
  return errors.withDetails(err, details);
}

/** D.2: submissions of a merged contact belong to the primary. */
export function repointSubmissions(db: Db, tenantId: string, from: string, to: string): Promise<void> {
  return repo.repointSubmissions(db, tenantId, from, to);
}
