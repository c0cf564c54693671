import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli, IS_PG, processEnv, startServer, tmpDataDir, type RunningServer } from '../helpers/server.js';

const servers: RunningServer[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

test(
  "two crm serve processes on one PostgreSQL + Redis share a key's rate limit",
  { skip: IS_PG && process.env.REDIS_URL ? false : 'needs the PostgreSQL + Redis pass (DATABASE_URL and REDIS_URL)' },
  async () => {
    const dir = tmpDataDir();
    const env = processEnv(dir, { WORKERS: 'false' });
    const file = path.join(dir, 'setup.json');
    writeFileSync(
      file,
      JSON.stringify({
        tenant: { name: 'Shared limit' },
        users: [{ ref: 'u', name: 'U', email: 'u@x.test' }],
        apiKeys: [{ ref: 'k', name: 'Ten a minute', user: 'u', scopes: ['tags:read'], rateLimit: 10 }],
      }),
    );
    const setup = cli(['setup', 'apply', file], env);
    assert.equal(setup.status, 0, setup.stdout + setup.stderr);
    const key = setup.json.apiKeys.k;
    const [a, b] = await Promise.all([startServer(env), startServer(env)]);
    servers.push(a, b);

    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 12; i++) {
      const s = i % 2 === 0 ? a : b;
      const r = await fetch(`${s.url}/api/v1/tags`, { headers: { 'x-api-key': key } });
      statuses.push(r.status);
      remaining.push(r.headers.get('x-ratelimit-remaining') ?? '');
      await r.arrayBuffer();
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    assert.deepEqual(remaining, ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0', '0']);
  },
);
