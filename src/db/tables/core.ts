export interface TenantsTable {
  id: string;
  name: string;
  slug: string;
  /** Language of the public form pages (C.5): `en` or `pt-BR`. */
  locale: string;
  created_at: string;
}
export interface UsersTable {
  tenant_id: string;
  id: string;
  name: string;
  email: string;
  created_at: string;
}
export interface ApiKeysTable {
  tenant_id: string;
  id: string;
  user_id: string | null;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string; // JSON array
  rate_limit: number;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}
