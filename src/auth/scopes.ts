/** Scope catalog of spec 5.5, plus `users:read` (CONTRACT C.5), `events:read` (C.4), `audit:read` (D.4) and `contacts:erase` (D.5). `*` covers every scope, present and future. Scopes are literal (B.1). */
export const SCOPES = [
  'contacts:read',
  'contacts:write',
  'contacts:erase',
  'companies:read',
  'companies:write',
  'deals:read',
  'deals:write',
  'activities:read',
  'activities:write',
  'proposals:read',
  'proposals:write',
  'pipelines:read',
  'properties:read',
  'tags:read',
  'tags:write',
  'lists:read',
  'lists:write',
  'forms:read',
  'forms:submissions:read',
  'webhooks:manage',
  'users:read',
  'events:read',
  'audit:read',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isKnownScope(s: string): boolean {
  return s === '*' || (SCOPES as readonly string[]).includes(s);
}

/** Spec 5.6 steps 2–4: the scopes of `required` that `have` lacks (empty: allowed). */
export function missingScopes(required: readonly string[], have: readonly string[]): string[] {
  if (have.includes('*')) return [];
  return required.filter((s) => !have.includes(s));
}
