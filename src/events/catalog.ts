/**
 * Event catalog: spec 6.1, CONTRACT B.8/B.9 (the four proposal status events), C.4 (every change an
 * integrator syncs), D.1 (`<type>.restored`), D.2 (`*.merged`) and D.5 (`contact.erased`, whose `data` is `{ id }` alone). `data.<dataKey ?? objectType>` holds the record.
 */
export const EVENT_TYPES = [
  { key: 'contact.created', label: 'Contact created', objectType: 'contact' },
  { key: 'contact.updated', label: 'Contact updated', objectType: 'contact' },
  { key: 'contact.deleted', label: 'Contact deleted', objectType: 'contact' },
  { key: 'contact.restored', label: 'Contact restored', objectType: 'contact' },
  { key: 'contact.erased', label: 'Contact erased for good', objectType: 'contact', dataKey: '' },
  { key: 'contact.merged', label: 'Contacts merged', objectType: 'contact' },
  { key: 'company.created', label: 'Company created', objectType: 'company' },
  { key: 'company.updated', label: 'Company updated', objectType: 'company' },
  { key: 'company.deleted', label: 'Company deleted', objectType: 'company' },
  { key: 'company.restored', label: 'Company restored', objectType: 'company' },
  { key: 'company.merged', label: 'Companies merged', objectType: 'company' },
  { key: 'deal.created', label: 'Deal created', objectType: 'deal' },
  { key: 'deal.updated', label: 'Deal updated', objectType: 'deal' },
  { key: 'deal.stage_changed', label: 'Deal moved to another stage', objectType: 'deal' },
  { key: 'deal.won', label: 'Deal won', objectType: 'deal' },
  { key: 'deal.lost', label: 'Deal lost', objectType: 'deal' },
  { key: 'deal.deleted', label: 'Deal deleted', objectType: 'deal' },
  { key: 'deal.restored', label: 'Deal restored', objectType: 'deal' },
  { key: 'activity.created', label: 'Activity created', objectType: 'activity' },
  { key: 'activity.updated', label: 'Activity updated', objectType: 'activity' },
  { key: 'activity.deleted', label: 'Activity deleted', objectType: 'activity' },
  { key: 'tag.created', label: 'Tag created', objectType: 'tag' },
  { key: 'tag.updated', label: 'Tag updated', objectType: 'tag' },
  { key: 'tag.deleted', label: 'Tag deleted', objectType: 'tag' },
  { key: 'list.member_added', label: 'Record added to a static list', objectType: 'list' },
  { key: 'list.member_removed', label: 'Record removed from a static list', objectType: 'list' },
  { key: 'list.restored', label: 'List restored', objectType: 'list' },
  { key: 'proposal.sent', label: 'Proposal sent', objectType: 'proposal' },
  { key: 'proposal.accepted', label: 'Proposal accepted', objectType: 'proposal' },
  { key: 'proposal.declined', label: 'Proposal declined', objectType: 'proposal' },
  { key: 'proposal.expired', label: 'Proposal expired', objectType: 'proposal' },
  { key: 'proposal.restored', label: 'Proposal restored', objectType: 'proposal' },
  { key: 'form.submitted', label: 'Form submitted', objectType: 'form', dataKey: 'submission' },
  { key: 'webhook.disabled', label: 'Webhook disabled after failing too long', objectType: 'webhook' },
] as const;

export type EventType = (typeof EVENT_TYPES)[number]['key'];
export const EVENT_KEYS: ReadonlySet<string> = new Set(EVENT_TYPES.map((e) => e.key));
export const TEST_EVENT = 'webhook.test';

/** The key of `data` that holds the event's record (`contact`, `deal`, `submission`…); `''`: no record, `data` is the event's fields alone (`contact.erased`: `{ id }`). */
export function dataKeyOf(event: string): string {
  const e = EVENT_TYPES.find((x) => x.key === event) as { objectType: string; dataKey?: string } | undefined;
  return e ? (e.dataKey ?? e.objectType) : 'webhook';
}
