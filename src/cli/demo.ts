import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import { applySetup, type SetupResult } from '../admin/setup.js';
import { progress } from './output.js';
import { DEMO_SETUP, seedDemoRecords } from '../admin/demo.js';

/** `crm demo`: a demo tenant with realistic sample data; same output as `setup apply`. */
export async function runDemo(database: Database, config: Config): Promise<SetupResult> {
  const result = await applySetup(database.db, DEMO_SETUP());
  await seedDemoRecords(database, config, result, progress);
  return result;
}

/** On an empty embedded database, `crm serve` provisions the demo tenant and prints its key once (A.2). */
export async function maybeProvisionDemo(database: Database, config: Config): Promise<void> {
  if (config.databaseUrl || config.noDemo) return;
  const any = await database.db.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
  if (any) return;
  const result = await runDemo(database, config);
  progress(`\nDemo tenant ${result.tenantId} provisioned. Full-scope API key (shown once):\n\n  ${result.apiKeys.full}\n\nTry: curl -H "X-API-Key: ${result.apiKeys.full}" http://${config.host}:${config.port}/api/v1/contacts\n`);
}
