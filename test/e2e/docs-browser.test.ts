// The reference page in a real browser (issue 10 item 3, CONTRACT A.2 `GET /docs`): the compiled server,
// headless Chromium opening /docs over plain HTTP from a host name that is not localhost (docs.test,
// mapped to 127.0.0.1 so that traffic stays on the loopback interface). The page renders every section
// in the spec's order and a sample operation with its curl example and its SDK example (x-codeSamples),
// loads nothing from any other host, and screenshots are kept in test-artifacts/. Issue 50: the guides
// (Authentication, Errors…) are sidebar entries, every error code has one, Contacts lists List, Create,
// Get, Update, Delete first, the SDK heads the client list, and no text reads "CONTRACT".
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../helpers/browser.js';
import { ROOT, processEnv, startServer, tmpDataDir, type RunningServer } from '../helpers/server.js';
import { ERROR_CODES, errorDocUrl } from '../../src/errors.js';

/** The guides of the introduction, as the sidebar lists them before the resources. */
const GUIDES = ['Introduction', 'Authentication', 'Errors', 'Pagination and sync', 'Rate limits', 'Idempotency', 'Webhooks and the event log', 'Versioning'];
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
  assert.deepEqual(
    SECTIONS.filter((_, i) => positions[i] === -1),
    [],
    `sections missing from ${JSON.stringify(sections)}`,
  );
  assert.deepEqual(
    [...positions].sort((a, b) => a - b),
    positions,
    "sections in the spec's order",
  );
  assert.ok(await page.getByText('rate limit', { exact: false }).first().isVisible(), 'the rate-limit convention is shown');
  assert.equal(sections.filter((s) => s === 'Webhooks').length, 1, 'one section called Webhooks; the payloads are under Webhook events');
  assert.ok(sections.includes('Webhook events'));

  // The guides are entries of the sidebar, before the resources; the Errors guide has one entry per code,
  // anchored `#description/<code with hyphens>`.
  const guides = await page.locator('a[href^="#description/"]').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.textContent?.trim()]));
  assert.deepEqual(
    guides.map(([, text]) => text),
    GUIDES,
    'the guides, in order',
  );
  const firstTag = (await page.locator('a[href^="#tag/"]').first().boundingBox())!;
  assert.ok((await page.locator('a[href="#description/versioning"]').boundingBox())!.y < firstTag.y, 'the guides come first');
  await page.locator('a[href="#description/errors"]').click();
  const codes = await page.locator('a[href^="#description/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  for (const code of Object.keys(ERROR_CODES)) assert.ok(codes.includes(`#description/${code.replace(/_/g, '-')}`), `the sidebar links the code ${code}`);
  // An error body's docUrl (the code with underscores) lands on the code's explanation, opened afresh or
  // followed from the page.
  const onScreen = async (code: string) => {
    const explained = page.getByText(code, { exact: true }).first();
    await explained.waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      (c) => {
        const el = [...document.querySelectorAll('code')].find((e) => e.textContent === c);
        const y = el?.getBoundingClientRect().top;
        return y !== undefined && y >= 0 && y < window.innerHeight;
      },
      code,
      { timeout: 30_000 },
    );
  };
  await page.goto(`http://docs.test:${port}${errorDocUrl('duplicate_proposal_for_deal')}`);
  await onScreen('duplicate_proposal_for_deal');
  assert.match(page.url(), /#description\/duplicate-proposal-for-deal$/);
  await page.evaluate((url) => {
    location.hash = new URL(url, location.href).hash;
  }, errorDocUrl('rate_limit_exceeded'));
  await onScreen('rate_limit_exceeded');

  // Written for integrators: no internal reference, and the API key field shows a key's shape, not
  // Scalar's own placeholder (not even in an attribute).
  const text = await page.locator('body').innerText();
  assert.doesNotMatch(text, /CONTRACT/);
  assert.doesNotMatch(text, /QUERY_QUEUE_PER_TENANT|QUERY_TIMEOUT_MS/);
  const html = await page.content();
  assert.doesNotMatch(html, /CONTRACT/);
  assert.ok(!html.includes('QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT'), 'no default key placeholder');
  const keyFields = await page
    .locator('input.scalar-password-input')
    .evaluateAll((es) => es.map((e) => [(e as HTMLInputElement).value, e.getAttribute('placeholder')]));
  assert.ok(
    keyFields.length > 0 && keyFields.every(([value, placeholder]) => value === 'crm_live_…' && placeholder === 'crm_live_…'),
    JSON.stringify(keyFields),
  );

  // Contacts: List, Create, Get, Update, Delete first, then the rest.
  await page.goto(`http://docs.test:${port}/docs#tag/contacts`);
  await page.locator('a[href="#tag/contacts/GET/api/v1/contacts"]').first().waitFor({ timeout: 30_000 });
  const contactOps = await page.locator('a[href^="#tag/contacts/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(contactOps.slice(0, 6), [
    '#tag/contacts/GET/api/v1/contacts',
    '#tag/contacts/POST/api/v1/contacts',
    '#tag/contacts/GET/api/v1/contacts/{id}',
    '#tag/contacts/PATCH/api/v1/contacts/{id}',
    '#tag/contacts/DELETE/api/v1/contacts/{id}',
    '#tag/contacts/GET/api/v1/contacts/{id}/deals',
  ]);

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
  // The SDK heads the list of clients, which is short.
  const clients = (await page.getByRole('option').allTextContents()).map((c) => c.trim());
  assert.equal(clients[0], 'SDK', JSON.stringify(clients));
  assert.ok(clients.length <= 10, JSON.stringify(clients));
  assert.ok(clients.includes('Curl'));
  await page.getByRole('option', { name: 'SDK' }).first().click();
  await operation.getByText("crm.GET('/api/v1/contacts/{id}'", { exact: false }).first().waitFor({ timeout: 30_000 });
  assert.ok(await operation.getByText("from '@crm/sdk'", { exact: false }).first().isVisible(), 'the SDK example is shown');
  await page.screenshot({ path: path.join(dir, 'docs-sdk.png') });

  // Self-contained: nothing was fetched from another host (no CDN, fonts or telemetry).
  const foreign = requested.filter((u) => !u.startsWith(`http://docs.test:${port}/`) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
});
