#!/usr/bin/env -S node --max-semi-space-size=8 --no-allocation-site-pretenuring
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { AdminError, createKey, listKeys, revokeKey } from '../admin/keys.js';
import { applySetup } from '../admin/setup.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createDatabase, migrate } from '../db/index.js';
import { ApiError } from '../errors.js';
import { printError, printJson } from './output.js';
// serve, worker and demo load the whole application (every module); they are imported on demand so the
// small operator commands start fast.

/** Which database a command works on, for messages: the SQLite file, or PostgreSQL's host and name. */
function databaseLabel(config: Config): string {
  if (!config.databaseUrl) return path.resolve(config.dataDir, 'crm.db');
  try {
    const u = new URL(config.databaseUrl);
    return `postgres://${u.host}${u.pathname}`; // never the password
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

/**
 * Runs fn with a migrated database, closing it after. `existing`: commands about data that must already be
 * there (a tenant's keys) refuse to create an empty SQLite database where none is (a DATA_DIR that is not
 * the server's), instead of reporting that the tenant does not exist; they name the database they used.
 */
async function withDatabase<T>(fn: (db: ReturnType<typeof createDatabase>) => Promise<T>, opts: { existing?: boolean } = {}): Promise<T> {
  const config = loadConfig();
  const label = databaseLabel(config);
  if (opts.existing && !config.databaseUrl && !existsSync(label)) {
    throw new AdminError(
      'database_not_found',
      `no database at ${label}: set DATA_DIR to the server's data directory (or DATABASE_URL), or create one with crm setup apply or crm serve`,
    );
  }
  const database = createDatabase(config);
  try {
    await migrate(database);
    return await fn(database);
  } catch (err) {
    if (opts.existing && err instanceof AdminError && err.code === 'not_found') err.message += ` (database: ${label})`;
    throw err;
  } finally {
    await database.close();
  }
}

// Help and usage text go to stderr (stdout is for JSON only); help is also kept to answer `--help` in JSON.
let helpText = '';
const program = new Command('crm')
  .description('CRM public API: server, workers and operator commands. Prints JSON on stdout.')
  .exitOverride()
  .showSuggestionAfterError()
  .configureOutput({
    writeOut: (s) => {
      helpText += s;
      process.stderr.write(s);
    },
    writeErr: (s) => process.stderr.write(s),
  });

program
  .command('serve')
  .description('run the API (and the background workers unless WORKERS=false)')
  .action(async () => (await import('./serve.js')).serve(loadConfig()));
program
  .command('worker')
  .description('run only the background workers')
  .action(async () => (await import('./worker.js')).runWorker(loadConfig()));

program
  .command('migrate')
  .description('apply pending schema migrations')
  .action(async () => {
    const database = createDatabase(loadConfig());
    try {
      printJson({ applied: await migrate(database) });
    } finally {
      await database.close();
    }
  });

program
  .command('setup')
  .description('provision tenants')
  .command('apply <file>')
  .description('provision one new tenant from a setup file (JSON)')
  .action(async (file: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new AdminError('invalid_file', `cannot read ${file} as JSON: ${(err as Error).message}`);
    }
    printJson(await withDatabase((d) => applySetup(d.db, parsed)));
  });

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .requiredOption('--tenant <id>')
  .requiredOption('--name <name>')
  .requiredOption('--scopes <list>', 'comma-separated scopes, or *')
  .option('--user <userId>')
  .option('--rate-limit <n>')
  .option('--expires-at <iso>')
  .action(async (o) => {
    const rateLimit = o.rateLimit === undefined ? undefined : /^\d+$/.test(o.rateLimit) ? Number(o.rateLimit) : NaN;
    const scopes = String(o.scopes)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    printJson(
      await withDatabase(
        (d) => createKey(d.db, { tenantId: o.tenant, name: o.name, scopes, userId: o.user ?? null, rateLimit, expiresAt: o.expiresAt ?? null }),
        { existing: true },
      ),
    );
  });
keys
  .command('list')
  .requiredOption('--tenant <id>')
  .action(async (o) => printJson(await withDatabase((d) => listKeys(d.db, o.tenant), { existing: true })));
keys.command('revoke <keyId>').action(async (keyId: string) => printJson(await withDatabase((d) => revokeKey(d.db, keyId), { existing: true })));

program
  .command('demo')
  .description('provision a demo tenant with realistic sample data')
  .action(async () => {
    const config = loadConfig();
    const { runDemo } = await import('./demo.js');
    printJson(await withDatabase((d) => runDemo(d, config)));
  });

/** What the SDK's `crm-listen` module offers the project's `crm listen` (see sdk/src/cli-listen.ts). */
interface ListenCli {
  main(argv: string[], resolveTenant?: (o: { apiKey: string }) => Promise<string | undefined>): Promise<number>;
}

/**
 * The body of a delivery carries `tenantId`, which the event log does not: on the server's own machine it
 * is read from the database the key belongs to (when there is one), so the forwarded bodies are the very
 * bytes a delivery sends. Undefined when that database is not here.
 */
async function tenantOfKey(apiKey: string): Promise<string | undefined> {
  const config = loadConfig();
  if (!config.databaseUrl && !existsSync(databaseLabel(config))) return undefined;
  const { hashApiKey } = await import('../auth/keys.js');
  const { findKeyByHash } = await import('../auth/keys.repo.js');
  const database = createDatabase(config);
  try {
    const row = await findKeyByHash(database.db, hashApiKey(apiKey));
    return row?.tenant_id;
  } finally {
    await database.close();
  }
}

program
  .command('listen')
  .description("forward new events to a local URL as signed webhook deliveries (the SDK's crm-listen; `crm listen --help` for its options)")
  .helpOption(false)
  .allowUnknownOption()
  .allowExcessArguments()
  .action(async (_opts, cmd: Command) => {
    // The SDK's command parses its own options, so `npx crm-listen` and `crm listen` are one command. The
    // specifier is a variable: the SDK is built after the root package (its types are not needed here).
    const specifier = '@crm/sdk/cli-listen';
    const { main } = (await import(specifier)) as ListenCli;
    process.exit(await main(cmd.args, (o) => tenantOfKey(o.apiKey)));
  });

// Connection refused / unknown host, and PostgreSQL's bad password (28P01) / unknown database (3D000).
const DB_UNREACHABLE = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', '28P01', '3D000', 'SQLITE_CANTOPEN'];

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    if (err.exitCode === 0) {
      // `--help`: stdout still carries JSON.
      printJson({ help: helpText });
      process.exit(0);
    }
    // A command group without its sub-command (`crm`, `crm keys`) shows help and is a usage error.
    const message = err.code === 'commander.help' ? 'a command is required; run crm --help' : err.message.replace(/^error: /, '');
    printError('usage', message);
    process.exit(2);
  }
  if (err instanceof AdminError) {
    printError(err.code, err.message, err.path ? { path: err.path } : {});
  } else if (err instanceof ConfigError) {
    printError('invalid_config', err.message);
  } else if (err instanceof ApiError && err.code === 'database_unavailable') {
    // A deadline of the database layer (another process's SQLite write lock, a database that does not answer).
    printError(err.code, err.message);
  } else if (DB_UNREACHABLE.includes((err as NodeJS.ErrnoException)?.code ?? '')) {
    printError('database_unavailable', `cannot reach the database: ${(err as Error).message}`);
  } else {
    process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
    printError('internal_error', (err as Error)?.message ?? String(err));
  }
  process.exit(1);
}
