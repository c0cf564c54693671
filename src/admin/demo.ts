// STUB: replaced by the demo data set (grows with every resource).
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import type { SetupResult } from './setup.js';
export function DEMO_SETUP(): Record<string, unknown> {
  return { tenant: { name: 'Demo' }, users: [{ ref: 'ana', name: 'Ana', email: 'ana@demo.test' }], apiKeys: [{ ref: 'full', name: 'Demo', user: 'ana', scopes: ['*'], rateLimit: 1000 }] };
}
export async function seedDemoRecords(_d: Database, _c: Config, _r: SetupResult, _p: (m: string) => void): Promise<void> {}
