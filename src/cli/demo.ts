import type { Config } from '../config.js';
import { withTx, type Database } from '../db/index.js';
import { applySetup, type SetupResult } from '../admin/setup.js';
import { progress } from './output.js';
import { DEMO_SETUP, seedDemoRecords } from '../admin/demo.js';
import { recalculateDirtyLists } from '../workers/dynamic-lists.js';

/**
 * `crm demo`: a demo tenant with realistic sample data; same output as `setup apply`. The tenant and its
 * records are written in one transaction, so a failure leaves nothing half-made behind.
 */
export async function runDemo(database: Database, config: Config): Promise<SetupResult> {
  const started = Date.now();
  progress('demo: provisioning the demo tenant…');
  const result = await withTx(database.db, async (tx) => {
    const setup = await applySetup(tx, DEMO_SETUP());
    await seedDemoRecords({ ...database, db: tx }, config, setup, progress);
    return setup;
  });
  // Dynamic lists get their members now rather than at the workers' next pass.
  await recalculateDirtyLists(database);
  progress(`demo: done in ${((Date.now() - started) / 1000).toFixed(1)} s (tenant ${result.tenantId})`);
  return result;
}

/** The demo tenant provisioned by this start, and its full-scope key (shown once, in the start-up banner). */
export interface DemoKey {
  tenantId: string;
  key: string;
}

/**
 * On an empty embedded database, `crm serve` provisions the demo tenant (A.2) and answers its key, which the
 * start-up banner prints once the server listens (banner.ts); null when nothing was provisioned.
 */
export async function maybeProvisionDemo(database: Database, config: Config): Promise<DemoKey | null> {
  if (config.databaseUrl || config.noDemo) return null;
  const any = await database.db.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
  if (any) return null;
  const result = await runDemo(database, config);
  return { tenantId: result.tenantId, key: result.apiKeys.full };
}
