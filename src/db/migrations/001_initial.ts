import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * The whole initial schema. Conventions (DESIGN §3):
 * - every table has tenant_id, and every primary key and index leads with it (ready for distribution by tenant);
 * - timestamps are UTC ISO-8601 text with milliseconds (sorts lexicographically, identical on both dialects);
 * - booleans are integers 0/1; money is integer minor units (cents); JSON is text;
 * - soft-deleted rows keep deleted_at and every unique index is partial on `deleted_at is null`.
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  const real = dialect === 'postgres' ? 'double precision' : 'real';
  const statements = `
create table tenants (
  id text primary key,
  name text not null,
  slug text not null,
  created_at text not null
);
create unique index tenants__slug__uq on tenants (slug);

create table users (
  tenant_id text not null,
  id text not null,
  name text not null,
  email text not null,
  created_at text not null,
  primary key (tenant_id, id)
);
create unique index users__email__uq on users (tenant_id, email);

create table api_keys (
  tenant_id text not null,
  id text not null,
  user_id text,
  name text not null,
  prefix text not null,
  key_hash text not null,
  scopes text not null,
  rate_limit integer not null,
  created_at text not null,
  last_used_at text,
  revoked_at text,
  expires_at text,
  primary key (tenant_id, id)
);
-- NOTE: authentication looks a key up by its hash before the tenant is known; the only cross-tenant index.
create unique index api_keys__key_hash__uq on api_keys (key_hash);
create unique index api_keys__id__uq on api_keys (id);

create table pipelines (
  tenant_id text not null,
  id text not null,
  name text not null,
  is_default integer not null default 0,
  display_order integer not null,
  created_at text not null,
  primary key (tenant_id, id)
);

create table stages (
  tenant_id text not null,
  id text not null,
  pipeline_id text not null,
  name text not null,
  display_order integer not null,
  probability ${real} not null,
  is_won_stage integer not null default 0,
  is_lost_stage integer not null default 0,
  primary key (tenant_id, id)
);
create index stages__pipeline on stages (tenant_id, pipeline_id, display_order);

create table loss_reasons (
  tenant_id text not null,
  id text not null,
  name text not null,
  primary key (tenant_id, id)
);

create table properties (
  tenant_id text not null,
  id text not null,
  object_type text not null,
  internal_name text not null,
  label text not null,
  type text not null,
  group_name text not null,
  display_order integer not null,
  is_default_in_form integer not null default 0,
  options text,
  primary key (tenant_id, id)
);
create unique index properties__internal_name__uq on properties (tenant_id, object_type, internal_name);

create table companies (
  tenant_id text not null,
  id text not null,
  name text not null,
  cnpj text,
  website text,
  domain text,
  phone text,
  industry text,
  owner_id text,
  custom_properties text not null default '{}',
  created_at text not null,
  updated_at text not null,
  deleted_at text,
  primary key (tenant_id, id)
);
create unique index companies__cnpj__uq on companies (tenant_id, cnpj) where deleted_at is null and cnpj is not null;
create unique index companies__domain__uq on companies (tenant_id, domain) where deleted_at is null and domain is not null;
create index companies__created on companies (tenant_id, created_at, id) where deleted_at is null;
create index companies__owner on companies (tenant_id, owner_id) where deleted_at is null;

create table contacts (
  tenant_id text not null,
  id text not null,
  first_name text not null,
  last_name text,
  email text,
  phone text,
  company_id text,
  owner_id text,
  score ${real},
  custom_properties text not null default '{}',
  created_at text not null,
  updated_at text not null,
  deleted_at text,
  primary key (tenant_id, id)
);
create unique index contacts__email__uq on contacts (tenant_id, email) where deleted_at is null and email is not null;
create unique index contacts__phone__uq on contacts (tenant_id, phone) where deleted_at is null and phone is not null;
create index contacts__created on contacts (tenant_id, created_at, id) where deleted_at is null;
create index contacts__updated on contacts (tenant_id, updated_at, id) where deleted_at is null;
create index contacts__owner on contacts (tenant_id, owner_id, created_at) where deleted_at is null;
create index contacts__company on contacts (tenant_id, company_id) where deleted_at is null;
create index contacts__score on contacts (tenant_id, score) where deleted_at is null;

create table tags (
  tenant_id text not null,
  id text not null,
  name text not null,
  name_key text not null,
  color text not null,
  created_at text not null,
  updated_at text not null,
  primary key (tenant_id, id)
);
create unique index tags__name_key__uq on tags (tenant_id, name_key);

create table record_tags (
  tenant_id text not null,
  object_type text not null,
  object_id text not null,
  tag_id text not null,
  primary key (tenant_id, object_type, object_id, tag_id)
);
create index record_tags__tag on record_tags (tenant_id, tag_id);

create table deals (
  tenant_id text not null,
  id text not null,
  title text not null,
  pipeline_id text not null,
  stage_id text not null,
  value_cents ${big},
  currency text not null,
  contact_id text,
  company_id text,
  owner_id text,
  expected_close_date text,
  custom_properties text not null default '{}',
  is_won integer not null default 0,
  is_lost integer not null default 0,
  closed_at text,
  loss_reason_id text,
  loss_notes text,
  created_at text not null,
  updated_at text not null,
  deleted_at text,
  primary key (tenant_id, id)
);
create index deals__updated on deals (tenant_id, updated_at, id) where deleted_at is null;
create index deals__pipeline on deals (tenant_id, pipeline_id, stage_id) where deleted_at is null;
create index deals__contact on deals (tenant_id, contact_id) where deleted_at is null;
create index deals__company on deals (tenant_id, company_id) where deleted_at is null;
create index deals__owner on deals (tenant_id, owner_id) where deleted_at is null;

create table activities (
  tenant_id text not null,
  id text not null,
  type text not null,
  title text not null,
  description text,
  due_date text,
  completed integer not null default 0,
  completed_at text,
  priority text,
  assigned_to_id text,
  owner_id text,
  created_at text not null,
  updated_at text not null,
  primary key (tenant_id, id)
);

create table activity_links (
  tenant_id text not null,
  activity_id text not null,
  object_type text not null,
  object_id text not null,
  position integer not null default 0,
  primary key (tenant_id, activity_id, object_type, object_id)
);
create index activity_links__object on activity_links (tenant_id, object_type, object_id);

create table lists (
  tenant_id text not null,
  id text not null,
  name text not null,
  object_type text not null,
  kind text not null,
  description text,
  filters text,
  member_count integer not null default 0,
  recalculated_at text,
  created_at text not null,
  updated_at text not null,
  deleted_at text,
  primary key (tenant_id, id)
);
create index lists__object_type on lists (tenant_id, object_type) where deleted_at is null;

create table list_members (
  tenant_id text not null,
  list_id text not null,
  object_id text not null,
  created_at text not null,
  primary key (tenant_id, list_id, object_id)
);
create index list_members__object on list_members (tenant_id, object_id);

-- Which object types changed since dynamic lists were last recalculated (one row per tenant and type).
create table list_dirty (
  tenant_id text not null,
  object_type text not null,
  changed_at text not null,
  primary key (tenant_id, object_type)
);

create table proposal_counters (
  tenant_id text not null,
  year integer not null,
  last_seq integer not null,
  primary key (tenant_id, year)
);

create table proposals (
  tenant_id text not null,
  id text not null,
  number text not null,
  subject text not null,
  status text not null,
  sent_at text,
  deal_id text,
  contact_id text,
  client_id text,
  recipient_name text,
  recipient_email text,
  discount_cents ${big} not null default 0,
  adjustment_cents ${big} not null default 0,
  subtotal_cents ${big} not null default 0,
  total_cents ${big} not null default 0,
  notes text,
  owner_id text,
  created_at text not null,
  updated_at text not null,
  deleted_at text,
  primary key (tenant_id, id)
);
create unique index proposals__number__uq on proposals (tenant_id, number);
create unique index proposals__deal_id__uq on proposals (tenant_id, deal_id) where deleted_at is null and deal_id is not null;
create index proposals__created on proposals (tenant_id, created_at, id) where deleted_at is null;

create table proposal_items (
  tenant_id text not null,
  proposal_id text not null,
  id text not null,
  position integer not null,
  name text not null,
  description text,
  qty ${real} not null,
  unit text not null,
  rate ${real} not null,
  discount_pct ${real} not null,
  tax_pct ${real} not null,
  total_cents ${big} not null,
  primary key (tenant_id, proposal_id, id)
);

create table forms (
  tenant_id text not null,
  id text not null,
  name text not null,
  slug text not null,
  fields text not null,
  submissions_count integer not null default 0,
  created_at text not null,
  updated_at text not null,
  primary key (tenant_id, id)
);
create unique index forms__slug__uq on forms (tenant_id, slug);

create table form_submissions (
  tenant_id text not null,
  id text not null,
  form_id text not null,
  contact_id text,
  submitted_values text not null,
  metadata text not null,
  created_at text not null,
  primary key (tenant_id, id)
);
create index form_submissions__form on form_submissions (tenant_id, form_id, created_at);

create table webhooks (
  tenant_id text not null,
  id text not null,
  name text not null,
  url text not null,
  events text not null,
  is_active integer not null default 1,
  headers text not null default '{}',
  secret_enc text not null,
  secret_prefix text not null,
  created_at text not null,
  updated_at text not null,
  primary key (tenant_id, id)
);

create table events (
  tenant_id text not null,
  id text not null,
  type text not null,
  payload text not null,
  created_at text not null,
  primary key (tenant_id, id)
);

create table webhook_deliveries (
  tenant_id text not null,
  id text not null,
  webhook_id text not null,
  event_id text not null,
  event text not null,
  status text not null,
  status_code integer,
  response_snippet text,
  duration_ms integer,
  attempts integer not null default 0,
  last_error text,
  next_attempt_at text,
  delivered_at text,
  lease_owner text,
  lease_until text,
  created_at text not null,
  updated_at text not null,
  primary key (tenant_id, id)
);
create index webhook_deliveries__webhook on webhook_deliveries (tenant_id, webhook_id, created_at);
-- NOTE: the delivery queue is scanned across tenants by the workers; this index serves that scan only.
create index webhook_deliveries__due on webhook_deliveries (next_attempt_at) where status in ('pending', 'retry_scheduled');
`;
  const withoutComments = statements
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n');
  for (const stmt of withoutComments
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)) {
    await sql.raw(stmt).execute(db);
  }
}
