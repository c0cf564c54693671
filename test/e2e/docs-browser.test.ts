// The reference page in a real browser (issue 10 item 3, CONTRACT A.2 `GET /docs`): the compiled server,
// headless Chromium opening /docs over plain HTTP from a host name that is not localhost (docs.test,
// mapped to 127.0.0.1 so that traffic stays on the loopback interface). The page renders every section
// in the spec's order and a sample operation with its curl example and its SDK example (x-codeSamples),
// loads nothing from any other host, and screenshots are kept in test-artifacts/.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../helpers/browser.js';
import { ROOT, processEnv, startServer, tmpDataDir, type RunningServer } from '../helpers/server.js';

const SECTIONS = ['Contacts', 'Companies', 'Deals', 'Activities', 'Tags', 'Lists', 'Proposals', 'Pipelines', 'Properties', 'Forms', 'Webhooks', 'Events'];

test('GET /docs renders the reference over plain HTTP from a non-localhost host name, self-contained', { timeout: 180_000 }, async (t) => {
  const browser = await launchChromium(t, { args: ['--host-resolver-rules=MAP docs.test 127.0.0.1'] });
  if (!browser) return;
  const dataDir = tmpDataDir();
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  server = await startServer(processEnv(dataDir, { WORKERS: 'false' }));
  const port = new URL(server.url).port;

  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  const opened = await page.goto(`http://docs.test:${port}/docs`);
  assert.equal(opened?.status(), 200);
  assert.match(await page.title(), /CRM Public API/);

  // Rendered: the conventions up front, every section of the spec in its order, a sample operation.
  await page.getByText('X-API-Key', { exact: false }).first().waitFor({ timeout: 60_000 });
  // The sections, as the navigation lists them (the page renders their content as it is scrolled to).
  const sections = (await page.locator('a[href^="#tag/"]').allTextContents()).map((s) => s.trim());
  const positions = SECTIONS.map((s) => sections.indexOf(s));
  assert.deepEqual(SECTIONS.filter((_, i) => positions[i] === -1), [], `sections missing from ${JSON.stringify(sections)}`);
  assert.deepEqual([...positions].sort((a, b) => a - b), positions, 'sections in the spec\'s order');
  assert.ok(await page.getByText('rate limit', { exact: false }).first().isVisible(), 'the rate-limit convention is shown');
  assert.equal(sections.filter((s) => s === 'Webhooks').length, 1, 'one section called Webhooks; the payloads are under Webhook events');
  assert.ok(sections.includes('Webhook events'));
  // A sample operation: its page section, with a curl example.
  await page.goto(`http://docs.test:${port}/docs#tag/contacts/GET/api/v1/contacts/{id}`);
  await page.getByRole('heading', { name: 'Get a contact' }).first().waitFor({ timeout: 30_000 });
  await page.getByText('curl', { exact: false }).first().waitFor({ timeout: 30_000 });
  const operation = page.locator('section[id$="tag/contacts/GET/api/v1/contacts/{id}"]');
  await operation.getByText("curl 'http", { exact: false }).first().waitFor({ timeout: 30_000 });

  const dir = path.join(ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, 'docs.png') });

  // Its SDK example is one of the operation's request examples, beside Scalar's own curl (the default).
  await operation.getByText('Shell Curl').first().click();
  await page.getByRole('option', { name: 'SDK' }).first().click();
  await operation.getByText("crm.GET('/api/v1/contacts/{id}'", { exact: false }).first().waitFor({ timeout: 30_000 });
  assert.ok(await operation.getByText("from '@crm/sdk'", { exact: false }).first().isVisible(), 'the SDK example is shown');
  await page.screenshot({ path: path.join(dir, 'docs-sdk.png') });

  // Self-contained: nothing was fetched from another host (no CDN, fonts or telemetry).
  const foreign = requested.filter((u) => !u.startsWith(`http://docs.test:${port}/`) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
});
