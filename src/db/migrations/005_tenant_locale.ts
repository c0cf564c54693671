import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * CONTRACT C.5: the setup file's `tenant.locale` (`en` or `pt-BR`) picks the language of the public
 * form pages. Existing tenants keep English.
 */
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`alter table tenants add column locale text not null default 'en'`.execute(db);
}
