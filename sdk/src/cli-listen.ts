#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listen, ListenError, newSecret, type ListenOptions } from './listen.js';

/** The `crm-listen` command (the SDK package's bin; the project runs it as `npm run crm -- listen`). */

export const USAGE = `Usage: crm-listen --forward-to <url> [options]

Follows the event log (GET /api/v1/events, long-polling) and POSTs every new event to a local URL
exactly as a webhook delivery arrives: same body, Standard Webhooks headers, signed with a whsec_ secret
printed at start. http:// and localhost work: this command delivers, not the server.

Options:
  --forward-to <url>      where to POST each event, e.g. http://localhost:4000/hooks (required)
  --base-url <url>        the service's root (default $CRM_BASE_URL, else http://127.0.0.1:3000)
  --key <key>             API key with events:read (default $CRM_API_KEY)
  --events <keys>         comma-separated event keys to forward (default: every type)
  --secret <whsec_…>      signing secret (default: a new one, printed at start)
  --tenant-id <id>        the body's tenantId (the event log does not carry it; default "")
  --replay-from <id>      start after that event id (the log's \`after\`: it is not sent again, every
                          later one is); \`start\` replays every event the log keeps.
                          Default: from now, nothing already in the log is sent.
  -h, --help              this text

Each event prints one line: time, type, id, the receiver's status and time in ms. Ctrl-C stops.`;

/** A mistake on the command line: printed with the usage, exit code 2. */
export class ListenArgsError extends Error {
  override readonly name = 'ListenArgsError';
}

export type ParsedListenArgs = Omit<ListenOptions, 'signal' | 'log' | 'warn' | 'fetch'> & { help?: boolean };

function httpUrl(name: string, value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ListenArgsError(`--${name} is not a URL: ${value}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ListenArgsError(`--${name} must be an http:// or https:// URL`);
  return value;
}

/** The options of argv (without the node and script paths); throws ListenArgsError on a mistake. */
export function parseListenArgs(argv: string[], env: Record<string, string | undefined> = process.env): ParsedListenArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'forward-to': { type: 'string' },
        'base-url': { type: 'string' },
        key: { type: 'string' },
        events: { type: 'string' },
        secret: { type: 'string' },
        'tenant-id': { type: 'string' },
        'replay-from': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new ListenArgsError((err as Error).message);
  }
  if (values.help) return { help: true, baseUrl: '', apiKey: '', forwardTo: '', secret: '' };
  if (!values['forward-to']) throw new ListenArgsError('--forward-to is required (e.g. --forward-to http://localhost:4000/hooks)');
  const apiKey = values.key ?? env.CRM_API_KEY;
  if (!apiKey) throw new ListenArgsError('--key is required (or set CRM_API_KEY)');
  const secret = values.secret ?? newSecret();
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) throw new ListenArgsError('--secret must be whsec_ followed by base64');
  const events = values.events
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (values.events !== undefined && !events?.length) throw new ListenArgsError('--events must name at least one event key');
  if (values['replay-from'] === '') throw new ListenArgsError('--replay-from needs an event id or `start`');
  return {
    forwardTo: httpUrl('forward-to', values['forward-to']),
    baseUrl: httpUrl('base-url', values['base-url'] ?? env.CRM_BASE_URL ?? 'http://127.0.0.1:3000'),
    apiKey,
    secret,
    ...(events ? { events } : {}),
    ...(values['tenant-id'] ? { tenantId: values['tenant-id'] } : {}),
    ...(values['replay-from'] ? { replayFrom: values['replay-from'] } : {}),
  };
}

/**
 * Runs the command until SIGINT or SIGTERM; answers the exit code: 0 when stopped, 1 on an error the
 * server gives (a bad key), 2 on a command-line mistake.
 */
export async function main(argv: string[], resolveTenant?: (o: ParsedListenArgs) => Promise<string | undefined>): Promise<number> {
  let opts: ParsedListenArgs;
  try {
    opts = parseListenArgs(argv);
  } catch (err) {
    process.stderr.write(`crm-listen: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  opts.tenantId ??= await resolveTenant?.(opts).catch(() => undefined);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const events = opts.events?.join(', ') ?? 'every event';
  process.stdout.write(`Signing secret: ${opts.secret}\n`);
  const from = opts.replayFrom === 'start' ? 'every event the log keeps' : opts.replayFrom ? `the events after ${opts.replayFrom}` : 'new events';
  const onReady = () => process.stdout.write(`Ready: forwarding ${from} (${events}) from ${opts.baseUrl} to ${opts.forwardTo}. Ctrl-C stops.\n`);
  if (!opts.tenantId) process.stderr.write('note: the body\'s tenantId is "" (give --tenant-id for bodies identical to the server\'s deliveries)\n');
  try {
    await listen({ ...opts, signal: stop.signal, onReady });
    return 0;
  } catch (err) {
    if (stop.signal.aborted) return 0;
    process.stderr.write(`crm-listen: ${err instanceof ListenError ? err.message : (err as Error).stack}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

// Run when executed (directly, through npx's symlink, or node_modules/.bin), not when imported.
function invokedPath(): string {
  try {
    return process.argv[1] ? realpathSync(process.argv[1]) : '';
  } catch {
    return '';
  }
}
if (invokedPath() === fileURLToPath(import.meta.url)) {
  // A rejection is left to Node, which prints it and exits with 1.
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
