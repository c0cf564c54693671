/** Event catalog (spec 6.1 + CONTRACT B.8/B.9: the four proposal status events). */
export const EVENT_TYPES = [
  { key: 'contact.created', label: 'Contact created', objectType: 'contact' },
  { key: 'contact.updated', label: 'Contact updated', objectType: 'contact' },
  { key: 'deal.created', label: 'Deal created', objectType: 'deal' },
  { key: 'deal.stage_changed', label: 'Deal moved to another stage', objectType: 'deal' },
  { key: 'deal.won', label: 'Deal won', objectType: 'deal' },
  { key: 'deal.lost', label: 'Deal lost', objectType: 'deal' },
  { key: 'proposal.sent', label: 'Proposal sent', objectType: 'proposal' },
  { key: 'proposal.accepted', label: 'Proposal accepted', objectType: 'proposal' },
  { key: 'proposal.declined', label: 'Proposal declined', objectType: 'proposal' },
  { key: 'proposal.expired', label: 'Proposal expired', objectType: 'proposal' },
] as const;

export type EventType = (typeof EVENT_TYPES)[number]['key'];
export const EVENT_KEYS: ReadonlySet<string> = new Set(EVENT_TYPES.map((e) => e.key));
export const TEST_EVENT = 'webhook.test';

export function objectTypeOf(event: string): string {
  return EVENT_TYPES.find((e) => e.key === event)?.objectType ?? 'webhook';
}
