#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { AdminError, createKey, listKeys, revokeKey } from '../admin/keys.js';
import { applySetup } from '../admin/setup.js';
import { ConfigError, loadConfig } from '../config.js';
import { createDatabase, migrate } from '../db/index.js';
import { printError, printJson } from './output.js';
import { serve } from './serve.js';
import { runWorker } from './worker.js';
import { runDemo } from './demo.js';

/** Runs fn with a migrated database, closing it after. */
async function withDatabase<T>(fn: (db: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> {
  const database = createDatabase(loadConfig());
  try {
    await migrate(database);
    return await fn(database);
  } finally {
    await database.close();
  }
}

const program = new Command('crm')
  .description('CRM public API: server, workers and operator commands. Prints JSON on stdout.')
  .exitOverride()
  .configureOutput({ writeOut: (s) => process.stderr.write(s), writeErr: (s) => process.stderr.write(s) });

program.command('serve').description('run the API (and the background workers unless WORKERS=false)').action(() => serve(loadConfig()));
program.command('worker').description('run only the background workers').action(() => runWorker(loadConfig()));

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
    const scopes = String(o.scopes).split(',').map((s) => s.trim()).filter(Boolean);
    printJson(await withDatabase((d) => createKey(d.db, { tenantId: o.tenant, name: o.name, scopes, userId: o.user ?? null, rateLimit, expiresAt: o.expiresAt ?? null })));
  });
keys
  .command('list')
  .requiredOption('--tenant <id>')
  .action(async (o) => printJson(await withDatabase((d) => listKeys(d.db, o.tenant))));
keys
  .command('revoke <keyId>')
  .action(async (keyId: string) => printJson(await withDatabase((d) => revokeKey(d.db, keyId))));

program.command('demo').description('provision a demo tenant with realistic sample data').action(async () => {
  const config = loadConfig();
  printJson(await withDatabase((d) => runDemo(d, config)));
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    if (err.exitCode === 0) process.exit(0);
    printError('usage', err.message.replace(/^error: /, ''));
    process.exit(2);
  }
  if (err instanceof AdminError) {
    printError(err.code, err.message, err.path ? { path: err.path } : {});
  } else if (err instanceof ConfigError) {
    printError('invalid_config', err.message);
  } else {
    process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
    printError('internal_error', (err as Error)?.message ?? String(err));
  }
  process.exit(1);
}
