// The README's first screen, run as written (issue 50): its receiver snippet, verifying with the SDK's
// verifyWebhook, gets a contact created through the API from its `listen` command, and accepts it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, cli, freePort, ROOT, serverStarter } from '../helpers/server.js';
import { sampleSetup, scratch, waitUntil } from './cli.helpers.js';

const start = serverStarter();
const FIRST_SCREEN = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').slice(0, 60).join('\n');

function output(proc: ChildProcess): () => string {
  let text = '';
  proc.stdout!.on('data', (d) => (text += d));
  proc.stderr!.on('data', (d) => (text += d));
  return () => text;
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGINT');
  await exited;
}

test("the README's receiver verifies what its listen command forwards", { timeout: 120_000 }, async () => {
  const receiverCode = /```js\n([\s\S]*?)```/.exec(FIRST_SCREEN)?.[1];
  assert.ok(receiverCode, 'a receiver snippet on the first screen');
  const listenLine = /^npm run crm -- (listen [^#\n]*?)\s*(#.*)?$/m.exec(FIRST_SCREEN)?.[1];
  assert.ok(listenLine, 'a listen command on the first screen');

  const s = await scratch();
  const setup = cli(['setup', 'apply', s.file('setup.json', sampleSetup())], s.env);
  assert.equal(setup.status, 0, setup.stdout + setup.stderr);
  const KEY = setup.json.apiKeys.full as string;
  const server = await start(s.env);
  const WHSEC = `whsec_${randomBytes(24).toString('base64')}`;
  const port = await freePort();

  // The snippet as written, on a free port instead of 4000, saved in the repository (where `@crm/sdk` resolves).
  const dir = path.join(ROOT, '.tmp');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `readme-receiver-${process.pid}.mjs`);
  assert.match(receiverCode, /\.listen\(4000\)/);
  writeFileSync(file, receiverCode.replace('.listen(4000)', `.listen(${port})`));
  const receiver = spawn(process.execPath, [file], { env: { ...s.env, WHSEC }, stdio: ['ignore', 'pipe', 'pipe'] });
  const received = output(receiver);

  const args = listenLine
    .split(/\s+/)
    .slice(1)
    .map((a) => a.replace('$BASE', server.url).replace('$KEY', KEY).replace('$WHSEC', WHSEC).replace('localhost:4000', `localhost:${port}`));
  const listen = spawn(process.execPath, [CLI, 'listen', ...args], { env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const listened = output(listen);
  try {
    // listen starts from now: wait until it follows the log, then create the contact.
    await waitUntil(async () => listened().length > 0, 20_000, 'listen started');
    await new Promise((r) => setTimeout(r, 500));
    const r = await fetch(`${server.url}/api/v1/contacts`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ firstName: 'Ana', email: 'ana@example.com' }),
    });
    assert.equal(r.status, 201);
    await waitUntil(async () => /verified contact\.created/.test(received()), 20_000, `the receiver's verification: ${received()} / ${listened()}`);
    assert.doesNotMatch(received(), /rejected/);
  } finally {
    await stop(listen);
    await stop(receiver);
    rmSync(file, { force: true });
  }
});
