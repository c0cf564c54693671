import type { Generated, GeneratedAlways } from 'kysely';

// CRM records written through the API.
export interface CompaniesTable {
  tenant_id: string;
  id: string;
  name: string;
  cnpj: string | null;
  website: string | null;
  domain: string | null;
  phone: string | null;
  industry: string | null;
  owner_id: string | null;
  custom_properties: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The searched fields folded (db/search-text.ts); written by the repo only. */
  search_text: string;
  /** The record's tag ids as a sorted JSON array (`[]`), kept from record_tags by triggers (migration 013). */
  tag_ids: Generated<string>;
  /** The record as the API answers it, JSON text the database computes on every write (migration 014). */
  doc: GeneratedAlways<string>;
}
export interface ContactsTable {
  tenant_id: string;
  id: string;
  first_name: string;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  company_id: string | null;
  owner_id: string | null;
  score: number | null;
  custom_properties: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The searched fields folded (db/search-text.ts); written by the repo only. */
  search_text: string;
  /** The record's tag ids as a sorted JSON array (`[]`), kept from record_tags by triggers (migration 013). */
  tag_ids: Generated<string>;
  /** The record as the API answers it, JSON text the database computes on every write (migration 014). */
  doc: GeneratedAlways<string>;
}
export interface TagsTable {
  tenant_id: string;
  id: string;
  name: string;
  name_key: string;
  color: string;
  created_at: string;
  updated_at: string;
  /** The searched fields folded (db/search-text.ts); written by the repo only. */
  search_text: string;
}
export interface RecordTagsTable {
  tenant_id: string;
  object_type: string;
  object_id: string;
  tag_id: string;
}
export interface DealsTable {
  tenant_id: string;
  id: string;
  title: string;
  pipeline_id: string;
  stage_id: string;
  value_cents: number | null;
  currency: string;
  contact_id: string | null;
  company_id: string | null;
  owner_id: string | null;
  expected_close_date: string | null;
  custom_properties: string;
  is_won: number;
  is_lost: number;
  closed_at: string | null;
  loss_reason_id: string | null;
  loss_notes: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The searched fields folded (db/search-text.ts); written by the repo only. */
  search_text: string;
  /** The record's tag ids as a sorted JSON array (`[]`), kept from record_tags by triggers (migration 013). */
  tag_ids: Generated<string>;
  /** The deal as the API answers it, its contact and company null (migration 017); kept by the database. */
  doc: GeneratedAlways<string>;
}
export interface ActivitiesTable {
  tenant_id: string;
  id: string;
  type: string;
  title: string;
  description: string | null;
  due_date: string | null;
  completed: number;
  completed_at: string | null;
  priority: string | null;
  assigned_to_id: string | null;
  owner_id: string | null;
  created_at: string;
  updated_at: string;
}
export interface ActivityLinksTable {
  tenant_id: string;
  activity_id: string;
  object_type: string;
  object_id: string;
  /** Position of the id in the activity's array (contactIds, companyIds, dealIds keep the order given). */
  position: number;
}
export interface ListsTable {
  tenant_id: string;
  id: string;
  name: string;
  object_type: string;
  kind: string;
  description: string | null;
  filters: string | null;
  member_count: number;
  recalculated_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}
export interface ListMembersTable {
  tenant_id: string;
  list_id: string;
  object_id: string;
  created_at: string;
}
export interface ChangeVersionsTable {
  tenant_id: string;
  object_type: string;
  version: number;
}
export interface ListDirtyTable {
  tenant_id: string;
  object_type: string;
  changed_at: string;
}
export interface ProposalCountersTable {
  tenant_id: string;
  year: number;
  last_seq: number;
}
export interface ProposalsTable {
  tenant_id: string;
  id: string;
  number: string;
  subject: string;
  status: string;
  sent_at: string | null;
  deal_id: string | null;
  contact_id: string | null;
  client_id: string | null;
  recipient_name: string | null;
  recipient_email: string | null;
  discount_cents: number;
  adjustment_cents: number;
  subtotal_cents: number;
  total_cents: number;
  notes: string | null;
  owner_id: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The searched fields folded (db/search-text.ts); written by the repo only. */
  search_text: string;
}
export interface ProposalItemsTable {
  tenant_id: string;
  proposal_id: string;
  id: string;
  position: number;
  name: string;
  description: string | null;
  qty: number;
  unit: string;
  rate: number;
  discount_pct: number;
  tax_pct: number;
  total_cents: number;
}
