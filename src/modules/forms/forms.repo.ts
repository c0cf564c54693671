import type { Db } from '../../db/index.js';
import type { Listing, SortColumn } from '../../listing/descriptor.js';
import type { FormSubmissionsTable, FormsTable } from '../../db/tables/config.js';

const FORM_COLUMNS = ['forms.id', 'forms.name', 'forms.slug', 'forms.fields', 'forms.submissions_count', 'forms.created_at'] as const;
export type FormRow = Pick<FormsTable, 'id' | 'name' | 'slug' | 'fields' | 'submissions_count' | 'created_at'> & { tenant_slug: string };

const SUBMISSION_COLUMNS = ['id', 'form_id', 'contact_id', 'submitted_values', 'metadata', 'created_at'] as const;
export type SubmissionRow = Pick<FormSubmissionsTable, (typeof SUBMISSION_COLUMNS)[number]>;

function formsOf(db: Db, tenantId: string) {
  return db
    .selectFrom('forms')
    .innerJoin('tenants', 'tenants.id', 'forms.tenant_id')
    .select([...FORM_COLUMNS, 'tenants.slug as tenant_slug'])
    .where('forms.tenant_id', '=', tenantId);
}

export function listForms(db: Db, tenantId: string): Promise<FormRow[]> {
  return formsOf(db, tenantId).orderBy('forms.created_at').orderBy('forms.name').orderBy('forms.id').execute();
}

export function findForm(db: Db, tenantId: string, id: string): Promise<FormRow | undefined> {
  return formsOf(db, tenantId).where('forms.id', '=', id).executeTakeFirst();
}

/** The public intake's lookup: tenant by its (globally unique) slug, then the form by its slug in that tenant. */
export function findPublicForm(db: Db, tenantSlug: string, formSlug: string): Promise<(FormRow & { tenant_id: string; locale: string }) | undefined> {
  return db
    .selectFrom('forms')
    .innerJoin('tenants', 'tenants.id', 'forms.tenant_id')
    .select([...FORM_COLUMNS, 'tenants.slug as tenant_slug', 'tenants.locale', 'forms.tenant_id'])
    .where('tenants.slug', '=', tenantSlug)
    .where('forms.slug', '=', formSlug)
    .executeTakeFirst();
}

/** The submissions of a form (FROM … WHERE, no selection); listed newest first, then by id (SUBMISSION_SORT). */
function submissionListing(db: Db, tenantId: string, formId: string) {
  const base = db.selectFrom('form_submissions').where('tenant_id', '=', tenantId).where('form_id', '=', formId);
  return { base, select: (qb: typeof base) => qb.select(SUBMISSION_COLUMNS) };
}

/** created_at is strictly increasing per form (see insertSubmission); id breaks any tie. */
const SUBMISSION_SORT: SortColumn = { column: 'created_at', nullable: false };

/** The submissions of a form (GET /forms/:id/submissions), newest first. */
export const SUBMISSION_LISTING: Listing<{ formId: string }, 'createdAt'> = {
  sort: { createdAt: SUBMISSION_SORT },
  query: (db, tenantId, f) => submissionListing(db, tenantId, f.formId),
};

/**
 * Increments the form's counter. Run first in the intake transaction: on PostgreSQL the row lock
 * serializes submissions of one form (SQLite has one writer anyway), which latestSubmissionAt relies on.
 */
export async function incrementSubmissions(db: Db, tenantId: string, formId: string, now: string): Promise<void> {
  await db
    .updateTable('forms')
    .set((eb) => ({ submissions_count: eb('submissions_count', '+', 1), updated_at: now }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', formId)
    .execute();
}

export async function latestSubmissionAt(db: Db, tenantId: string, formId: string): Promise<string | undefined> {
  const r = await db
    .selectFrom('form_submissions')
    .select('created_at')
    .where('tenant_id', '=', tenantId)
    .where('form_id', '=', formId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r?.created_at;
}

export async function insertSubmission(db: Db, row: FormSubmissionsTable): Promise<void> {
  await db.insertInto('form_submissions').values(row).execute();
}

/** A new form (tenant configuration: `crm setup apply`). */
export async function insertForm(db: Db, row: FormsTable): Promise<void> {
  await db.insertInto('forms').values(row).execute();
}

/** D.5: an erased contact's submissions: values and metadata JSON null, no contact; their ids. */
export async function forgetContactSubmissions(db: Db, tenantId: string, contactId: string): Promise<string[]> {
  const rows = await db
    .updateTable('form_submissions')
    .set({ submitted_values: 'null', metadata: 'null', contact_id: null })
    .where('tenant_id', '=', tenantId)
    .where('contact_id', '=', contactId)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** D.2: submissions that created or updated a merged contact name the primary. */
export async function repointSubmissions(db: Db, tenantId: string, from: string, to: string): Promise<void> {
  await db.updateTable('form_submissions').set({ contact_id: to }).where('tenant_id', '=', tenantId).where('contact_id', '=', from).execute();
}
