// Child process of lazy-packages.test.ts: the app on SQLite without Redis, reporting which of the packages
// loaded on first use (src/util/on-use.ts) are loaded: at start, after ordinary requests, and after a
// description with markup. A process of its own: the test runner's process has loaded them already.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { newTenant, testConfig } from '../helpers/app.js';

const require = createRequire(import.meta.url);
const PACKAGES = ['pg', 'ioredis', 'undici', 'sanitize-html'];
const loaded = () => PACKAGES.filter((p) => Object.keys(require.cache).some((f) => f.includes(`/node_modules/${p}/`)));

const dir = mkdtempSync(path.join(tmpdir(), 'crm-lazy-'));
const config = testConfig({ DATA_DIR: dir, DATABASE_URL: '', REDIS_URL: '' });
const database = createDatabase(config);
await migrate(database);
const app = await buildApp({ config, database });
await app.ready();
const atStart = loaded();

const { api } = await newTenant({ app, database, config });
const contact = await api.post('/contacts', { firstName: 'Ana', email: 'ana@lazy.test' });
await api.get('/contacts');
await api.post('/activities', { type: 'note', title: 'Call', description: 'plain text & no markup', contactIds: [contact.body.id] });
const afterRequests = loaded();
const marked = await api.post('/activities', { type: 'note', title: 'Call', description: '<b>bold</b><script>x</script>' });
const afterMarkup = loaded();

await app.close();
await database.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ atStart, afterRequests, afterMarkup, sanitized: marked.body.description }));
