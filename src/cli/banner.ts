import type { AddressInfo } from 'node:net';
import type { DemoKey } from './demo.js';

/** The URL a client on this machine reaches the server at: an unspecified bind address is reached as loopback. */
export function localBaseUrl(address: AddressInfo | string | null, fallbackHost: string, fallbackPort: number): string {
  const info = address && typeof address === 'object' ? address : { address: fallbackHost, port: fallbackPort };
  let host = info.address;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  else if (host === '::') host = 'localhost';
  else if (host.includes(':')) host = `[${host}]`;
  return `http://${host}:${info.port}`;
}

/** The lines that hand the demo key over: a ready `export` line, a first call, and how to get another key. */
export function demoKeyLines(base: string, demo: DemoKey): string[] {
  return [
    `  Demo tenant ${demo.tenantId} provisioned. Its full-scope API key is shown this once; copy the line below:`,
    '',
    `    export KEY=${demo.key} BASE=${base}`,
    '',
    '  First call:  curl -H "X-API-Key: $KEY" $BASE/api/v1/contacts',
    `  Another key: npm run --silent crm -- keys create --tenant ${demo.tenantId} --name dev --scopes '*'`,
  ];
}

/**
 * What `crm serve` prints on stderr once it listens, after its start-up logs so that it stays the last thing
 * on the screen: the base URL, the reference page, and on a first start the demo key as an `export` line.
 */
export function startBanner(base: string, demo: DemoKey | null): string {
  const lines = ['', `  CRM API ready at ${base}  (API under ${base}/api/v1)`, `  Reference and guides: ${base}/docs`, ''];
  if (demo) lines.push(...demoKeyLines(base, demo), '');
  return lines.join('\n');
}
