/** CONTRACT D.2 for contacts: what a merge of two contacts fills, moves and re-points (modules/shared/merge.ts). */
import type { Ctx } from '../../http/context.js';
import { relinkActivities } from '../activities/activities.service.js';
import { repointDeals } from '../deals/deals.service.js';
import { repointSubmissions } from '../forms/forms.service.js';
import { moveMemberships } from '../lists/lists.service.js';
import { repointProposals } from '../proposals/proposals.service.js';
import type { ChangedType } from '../shared/changes.js';
import { mergeRecords, type MergeableResource, type MergeBody } from '../shared/merge.js';
import { Contact } from './contacts.schema.js';
import { getContact } from './contacts.service.js';

export const CONTACT_MERGE: MergeableResource = {
  path: 'contacts',
  type: 'contact',
  tag: 'Contacts',
  noun: 'Contact',
  schema: Contact,
  fill: ['first_name', 'last_name', 'email', 'phone', 'company_id', 'owner_id', 'score'],
  unique: ['email', 'phone'],
  searched: ['first_name', 'last_name', 'email'],
  read: getContact,
  async repoint(ctx: Ctx, from: string, to: string, now: string): Promise<ChangedType[]> {
    const { db, tenantId } = ctx;
    const deals = await repointDeals(db, tenantId, 'contact_id', from, to, now);
    await relinkActivities(db, tenantId, 'contact', from, to, now);
    await repointProposals(db, tenantId, 'contact_id', from, to, now);
    await repointSubmissions(db, tenantId, from, to);
    await moveMemberships(db, tenantId, from, to);
    return deals > 0 ? ['deal'] : [];
  },
};

export function mergeContacts(ctx: Ctx, body: MergeBody): Promise<object> {
  return mergeRecords(ctx, CONTACT_MERGE, body);
}
