// Headless Debian Chromium for the browser tests (playwright-core drives it). Installed by .ci/run; where
// it is missing the browser tests are skipped. The flags keep it off the network (the machine's network
// is closed: background connections would be refused) and out of any profile.
import { existsSync } from 'node:fs';
import { after, type TestContext } from 'node:test';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser closed after the file, or undefined (the test skipped) when Chromium is not installed. */
export async function launchChromium(t: TestContext, opts: { args?: string[]; env?: Record<string, string> } = {}): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    t.skip('chromium not installed: apt-get install -y chromium');
    return undefined;
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, ...(opts.args ?? [])], ...(opts.env ? { env: opts.env } : {}) });
  after(() => browser.close().catch(() => {}));
  return browser;
}
