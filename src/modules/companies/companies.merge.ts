/** CONTRACT D.2 for companies: what a merge of two companies fills, moves and re-points (modules/shared/merge.ts). */
import type { Ctx } from '../../http/context.js';
import { relinkActivities } from '../activities/activities.service.js';
import { repointCompany } from '../contacts/contacts.service.js';
import { repointDeals } from '../deals/deals.service.js';
import { moveMemberships } from '../lists/lists.service.js';
import { repointProposals } from '../proposals/proposals.service.js';
import type { ChangedType } from '../shared/changes.js';
import { mergeRecords, type MergeableResource, type MergeBody } from '../shared/merge.js';
import { Company } from './companies.schema.js';
import { getCompany } from './companies.service.js';

export const COMPANY_MERGE: MergeableResource = {
  path: 'companies',
  type: 'company',
  tag: 'Companies',
  noun: 'Company',
  schema: Company,
  fill: ['name', 'cnpj', 'website', 'domain', 'phone', 'industry', 'owner_id'],
  unique: ['cnpj', 'domain'],
  searched: ['name', 'cnpj', 'website', 'domain'],
  read: getCompany,
  async repoint(ctx: Ctx, from: string, to: string, now: string): Promise<ChangedType[]> {
    const { db, tenantId } = ctx;
    const contacts = await repointCompany(db, tenantId, from, to, now);
    const deals = await repointDeals(db, tenantId, 'company_id', from, to, now);
    await relinkActivities(db, tenantId, 'company', from, to, now);
    await repointProposals(db, tenantId, 'client_id', from, to, now);
    await moveMemberships(db, tenantId, from, to);
    return [...(contacts > 0 ? (['contact'] as const) : []), ...(deals > 0 ? (['deal'] as const) : [])];
  },
};

export function mergeCompanies(ctx: Ctx, body: MergeBody): Promise<object> {
  return mergeRecords(ctx, COMPANY_MERGE, body);
}
