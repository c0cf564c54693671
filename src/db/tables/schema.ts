import type { ApiKeysTable, TenantsTable, UsersTable } from './core.js';
import type { FormSubmissionsTable, FormsTable, LossReasonsTable, PipelinesTable, PropertiesTable, StagesTable } from './config.js';
import type {
  ActivitiesTable,
  ActivityLinksTable,
  ChangeVersionsTable,
  CompaniesTable,
  ContactsTable,
  DealsTable,
  ListDirtyTable,
  ListMembersTable,
  ListsTable,
  ProposalCountersTable,
  ProposalItemsTable,
  ProposalsTable,
  RecordTagsTable,
  TagsTable,
} from './records.js';
import type { IdempotencyKeysTable } from './idempotency.js';
import type { EventsTable, WebhookDeliveriesTable, WebhooksTable } from './webhooks.js';
import type { EventLogColumns } from './events.js';
import type { AuditLogTable } from './audit.js';

export interface DB {
  tenants: TenantsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  pipelines: PipelinesTable;
  stages: StagesTable;
  loss_reasons: LossReasonsTable;
  properties: PropertiesTable;
  forms: FormsTable;
  form_submissions: FormSubmissionsTable;
  companies: CompaniesTable;
  contacts: ContactsTable;
  tags: TagsTable;
  record_tags: RecordTagsTable;
  deals: DealsTable;
  activities: ActivitiesTable;
  activity_links: ActivityLinksTable;
  lists: ListsTable;
  list_members: ListMembersTable;
  list_dirty: ListDirtyTable;
  change_versions: ChangeVersionsTable;
  proposal_counters: ProposalCountersTable;
  proposals: ProposalsTable;
  proposal_items: ProposalItemsTable;
  webhooks: WebhooksTable;
  events: EventsTable & EventLogColumns;
  webhook_deliveries: WebhookDeliveriesTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_log: AuditLogTable;
}
