/**
 * CONTRACT D.5: a contact erased for good, on request of the person (LGPD art. 18, GDPR art. 17). In one
 * transaction: the contact's row (its fields, custom property values and search text) with its tag links and list
 * memberships; its values inside every stored event (the event log; a delivery sends its event's payload, pending
 * ones included, so they go out without them) and what receivers answered to those events; its form submissions'
 * values and metadata; the submitter's address and agent in the audit log; stored idempotent answers that held it
 * (they replay as 404). Records that named it stay, without the reference. What remains: `contact.erased`
 * (`data: { id }`) and audit entries of ids and field names. The route then has the database forget the bytes
 * (Database.forgetErasedBytes: SQLite's write-ahead log still holds the pages as they were).
 */
import { withTx } from '../../db/index.js';
import { anyRow, deleteForGood } from '../../db/live-rows.js';
import { forgetResponses } from '../../events/deliveries.js';
import { errorBody, errors } from '../../errors.js';
import type { Ctx } from '../../http/context.js';
import { nowIso } from '../../util/time.js';
import { forgetContact as forgetInActivities } from '../activities/activities.service.js';
import { forgetSubmitter } from '../audit/audit.service.js';
import { forgetContact as forgetInDeals } from '../deals/deals.service.js';
import { rewriteEventsMentioning } from '../events/events.service.js';
import { forgetContactSubmissions } from '../forms/forms.service.js';
import { forgetContact as forgetInProposals } from '../proposals/proposals.service.js';
import { markChanged } from '../shared/changes.js';
import { answerKeyOf, forgetAnswersHolding } from '../shared/idempotency-answers.js';
import { recordEvent } from '../shared/record-change.js';

/** A contact's fields that name the person (C.4's contact record): null once erased, in every stored event. */
const PERSON_FIELDS = new Set(['firstName', 'lastName', 'email', 'phone']);
const ERASED = '[erased]';

export async function eraseContact(ctx: Ctx, id: string): Promise<void> {
  const notFound = () => errors.notFound('Contact not found');
  await withTx(ctx.db, async (tx) => {
    const row = await anyRow(tx, 'contacts', ctx.tenantId, id, ['email', 'phone']);
    if (!row) throw notFound();
    const values = [row.email, row.phone].filter((v): v is string => typeof v === 'string' && v !== '');
    const needles = [id, ...values];
    const rewritten = await rewriteEventsMentioning(tx, ctx.tenantId, needles, (payload) => scrubPayload(payload, id, values));
    await forgetResponses(tx, ctx.tenantId, rewritten);
    await forgetContactSubmissions(tx, ctx.tenantId, id);
    await forgetSubmitter(tx, ctx.tenantId, id);
    await forgetAnswersHolding(tx, answerKeyOf(ctx.config.secretKey()), ctx.tenantId, needles, 404, JSON.stringify(errorBody(notFound())));
    const now = nowIso();
    if ((await forgetInDeals(tx, ctx.tenantId, id, now)).length > 0) await markChanged(tx, ctx.tenantId, 'deal');
    await forgetInProposals(tx, ctx.tenantId, id, now);
    await forgetInActivities(tx, ctx.tenantId, id);
    await deleteForGood(tx, 'contacts', ctx.tenantId, id); // with its tag links and list memberships
    await recordEvent(tx, ctx, 'contact.erased', { id });
    await markChanged(tx, ctx.tenantId, 'contact');
  });
}

/**
 * A stored event's payload without the erased contact: in the contact's own record (wherever it sits: the event's
 * record, a deal's expanded `contact`, `previous`), the fields that name the person become null and its custom
 * properties `{}`; in its form submissions, `values` and `metadata` become null and `contactId` too; the `previous`
 * values of the contact's own `contact.updated` become null; and any other text that holds its e-mail or phone has
 * them replaced. Ids stay (the audit trail and other records' references name ids only).
 */
export function scrubPayload(payload: string, contactId: string, values: readonly string[]): string {
  const scrub = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(scrub);
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const isContact = o.id === contactId;
      const isSubmission = o.contactId === contactId && 'formId' in o && 'values' in o;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(o)) {
        if (isContact && PERSON_FIELDS.has(k)) out[k] = null;
        else if (isContact && k === 'customProperties') out[k] = {};
        else if (isSubmission && (k === 'values' || k === 'metadata' || k === 'contactId')) out[k] = null;
        else out[k] = scrub(x);
      }
      return out;
    }
    if (typeof v === 'string') return values.reduce((s, needle) => (s.includes(needle) ? s.split(needle).join(ERASED) : s), v);
    return v;
  };
  const parsed = JSON.parse(payload) as { data?: Record<string, unknown> };
  const data = parsed.data;
  if (data && (data.contact as { id?: unknown } | undefined)?.id === contactId && data.previous && typeof data.previous === 'object') {
    data.previous = Object.fromEntries(Object.keys(data.previous).map((k) => [k, null]));
  }
  return JSON.stringify(scrub(parsed));
}
