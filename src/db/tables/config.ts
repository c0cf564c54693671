// Tenant configuration made in the CRM UI (here: by `crm setup apply`); read-only through the API.
export interface PipelinesTable {
  tenant_id: string;
  id: string;
  name: string;
  is_default: number;
  display_order: number;
  created_at: string;
}
export interface StagesTable {
  tenant_id: string;
  id: string;
  pipeline_id: string;
  name: string;
  display_order: number;
  probability: number;
  is_won_stage: number;
  is_lost_stage: number;
}
export interface LossReasonsTable {
  tenant_id: string;
  id: string;
  name: string;
}
export interface PropertiesTable {
  tenant_id: string;
  id: string;
  object_type: string;
  internal_name: string;
  label: string;
  type: string;
  group_name: string;
  display_order: number;
  is_default_in_form: number;
  options: string | null; // JSON [{ value, label }]
}
export interface FormsTable {
  tenant_id: string;
  id: string;
  name: string;
  slug: string;
  fields: string; // JSON
  submissions_count: number;
  created_at: string;
  updated_at: string;
}
export interface FormSubmissionsTable {
  tenant_id: string;
  id: string;
  form_id: string;
  contact_id: string | null;
  submitted_values: string; // JSON
  metadata: string; // JSON
  created_at: string;
}
