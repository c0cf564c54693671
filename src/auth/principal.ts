/** Who is calling: the key, its tenant, its user and what it may do. Every service call takes one. */
export interface Principal {
  tenantId: string;
  keyId: string;
  /** The key's name (the audit log's actor name). */
  keyName: string;
  userId: string | null;
  scopes: string[];
  rateLimit: number;
  expiresAt: string | null;
  revokedAt: string | null;
}
