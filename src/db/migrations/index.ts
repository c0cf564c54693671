import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.js';
import * as m001 from './001_initial.js';
import * as m002 from './002_change_versions.js';
import * as m003 from './003_idempotency.js';
import * as m004 from './004_listing_indexes.js';
import * as m005 from './005_tenant_locale.js';
import * as m006 from './006_event_log.js';
import * as m007 from './007_webhook_health.js';
import * as m008 from './008_event_log_commit_order.js';
import * as m009 from './009_search_text.js';
import * as m010 from './010_idempotency_sweep_order.js';
import * as m011 from './011_owner_sort_indexes.js';
import * as m012 from './012_contacts_owner_score.js';
import * as m013 from './013_record_tag_ids.js';
import * as m014 from './014_record_doc.js';
import * as m015 from './015_contacts_owner_covers_score.js';
import * as m016 from './016_deals_pipeline_updated.js';
import * as m017 from './017_deal_doc.js';
import * as m018 from './018_finite_scores.js';
import * as m020 from './020_deleted_rows.js';
import * as m021 from './021_audit_log.js';
import * as m022 from './022_duplicate_keys.js';
import * as m023 from './023_merged_into.js';
import * as m024 from './024_duplicate_keys_once.js';

export interface DialectMigration {
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
}

// Append-only: a released migration is never edited; add the next number below.
export const migrations: Record<string, DialectMigration> = {
  '001_initial': m001,
  '002_change_versions': m002,
  '003_idempotency': m003,
  '004_listing_indexes': m004,
  '005_tenant_locale': m005,
  '006_event_log': m006,
  '007_webhook_health': m007,
  '008_event_log_commit_order': m008,
  '009_search_text': m009,
  '010_idempotency_sweep_order': m010,
  '011_owner_sort_indexes': m011,
  '012_contacts_owner_score': m012,
  '013_record_tag_ids': m013,
  '014_record_doc': m014,
  '015_contacts_owner_covers_score': m015,
  '016_deals_pipeline_updated': m016,
  '017_deal_doc': m017,
  '018_finite_scores': m018,
  '020_deleted_rows': m020,
  '021_audit_log': m021,
  '022_duplicate_keys': m022,
  '023_merged_into': m023,
  '024_duplicate_keys_once': m024,
};
