import { sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { errors, type ApiError } from '../errors.js';
import { withSavepoint } from './transactions.js';
import type { Db } from './types.js';

/**
 * Database constraint errors, translated once for both dialects. Unique indexes are named
 * `<table>__<column>__uq`, so the violated column is known on SQLite and PostgreSQL alike.
 */
export interface UniqueViolation {
  table: string;
  column: string;
}

export function uniqueViolation(err: unknown): UniqueViolation | null {
  if (!err || typeof err !== 'object') return null;
  const e = err as { code?: string; message?: string; constraint?: string };
  if (e.code === '23505' && e.constraint) return parseIndexName(e.constraint);
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const msg = e.message ?? '';
    const idx = /index '([^']+)'/.exec(msg);
    if (idx) return parseIndexName(idx[1]);
    // "UNIQUE constraint failed: contacts.tenant_id, contacts.email"
    const cols =
      /failed: (.+)$/
        .exec(msg)?.[1]
        .split(',')
        .map((s) => s.trim()) ?? [];
    const last = cols[cols.length - 1];
    if (last) {
      const [table, column] = last.split('.');
      return { table, column };
    }
  }
  return null;
}

function parseIndexName(name: string): UniqueViolation | null {
  const m = /^([a-z_]+?)__([a-z_]+?)__uq$/.exec(name);
  return m ? { table: m[1], column: m[2] } : null;
}

/** Serialization failures and deadlocks (PostgreSQL) and busy errors (SQLite): nothing wrong with the request. */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === '40001' || code === '40P01' || code === 'SQLITE_BUSY';
}

/** Error codes of a database that is down, restarting, refusing sessions or unreachable. */
const UNAVAILABLE_CODES = new Set([
  'DATABASE_UNAVAILABLE', // pg-health.ts: the heartbeat found it down
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown (a fast or immediate stop)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, in recovery)
  '53300', // too_many_connections
]);

/**
 * Messages of node-postgres's own errors, which carry no code: a session cut (by the server, the network or
 * the heartbeat) and a session that could not be opened in time.
 */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/** Whether `err` says the database is unreachable (not that the statement or the request is wrong). */
export function isUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, message } = err as { code?: string; message?: string };
  if (code !== undefined) return UNAVAILABLE_CODES.has(code) || code.startsWith('08');
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

/**
 * A database refusal that is the client's to act on, as the contract's error; `undefined` for a real
 * failure (a 500). Used by the error handler and by batch items, so both answer alike.
 */
export function clientErrorOf(err: unknown): ApiError | undefined {
  // B.2: down, restarting or frozen is 503 with Retry-After, never a 500.
  if (isUnavailable(err)) return errors.databaseUnavailable();
  const code = (err as { code?: string })?.code;
  // PostgreSQL refused a value the edge let through (invalid byte sequence or text form).
  if (code === '22021' || code === '22P05' || code === '22P02') {
    return errors.validation([], 'A value has characters or a form the database cannot store');
  }
  // Two writers crossed (a deadlock between two batches touching the same records in another order).
  if (isTransient(err)) return errors.concurrentUpdate();
  return undefined;
}

// ------------------------------------------------------------------------------------------------
// Unique violations → the contract's answers, in one map (DESIGN §3; C.5 `existing…Id`)

interface ConflictRule {
  /** The error, given the value as the client wrote it and the id of the record holding it. */
  error: (shown: string, existingId: string | undefined) => ApiError;
  /** Only live records count (B.3): the unique index is partial on `deleted_at is null`. */
  softDelete: boolean;
}

const existing = (field: string, id: string | undefined) => (id ? { [field]: id } : {});

const UNIQUE_CONFLICTS: Record<string, ConflictRule> = {
  'contacts.email': {
    softDelete: true,
    error: (v, id) => errors.conflict('duplicate_email', `A contact with the e-mail ${v} already exists`, existing('existingContactId', id)),
  },
  'contacts.phone': {
    softDelete: true,
    error: (v, id) => errors.conflict('duplicate_phone', `A contact with the phone ${v} already exists`, existing('existingContactId', id)),
  },
  'companies.cnpj': {
    softDelete: true,
    error: (v, id) => errors.conflict('duplicate_cnpj', `A company with the CNPJ ${v} already exists`, existing('existingCompanyId', id)),
  },
  'companies.domain': {
    softDelete: true,
    error: (v, id) => errors.conflict('duplicate_domain', `A company with the domain ${v} already exists`, existing('existingCompanyId', id)),
  },
  'tags.name_key': {
    softDelete: false,
    error: (v, id) => errors.conflict('duplicate_name', `A tag named "${v}" already exists`, existing('existingTagId', id)),
  },
  'proposals.deal_id': { softDelete: true, error: (_v, id) => errors.duplicateProposalForDeal(id) },
};

/**
 * Runs a write that may hit a unique index and turns a violation into the contract's answer, naming
 * the record that holds the value. `values` are the written values by column (as stored, to find that
 * record); `shown` the same values as the client wrote them, for the message, when they differ.
 *
 * Inside a PostgreSQL transaction the write runs in a savepoint: PostgreSQL aborts the whole
 * transaction on a violation otherwise, also the caller's (a batch item, an idempotent request), and the
 * holder could not be read. Never read-then-write: the index decides, so concurrent writers cannot both pass.
 */
export async function guardUnique<T>(
  db: Db,
  tenantId: string,
  values: Record<string, string | null | undefined>,
  write: () => Promise<T>,
  shown: Record<string, string | null | undefined> = {},
): Promise<T> {
  try {
    // NOTE: SQLite undoes only the failed statement (ON CONFLICT ABORT) and the transaction goes on, so
    // the savepoint (two statements more per write) is needed on PostgreSQL alone.
    const savepoint = db.isTransaction && isPostgres(db);
    return savepoint ? await withSavepoint(db, write, 'unique_guard') : await write();
  } catch (err) {
    const v = uniqueViolation(err);
    const rule = v && UNIQUE_CONFLICTS[`${v.table}.${v.column}`];
    const value = v ? values[v.column] : undefined;
    if (!v || !rule || value == null) throw err;
    let q = db
      .selectFrom(v.table as 'contacts')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where(sql.ref(v.column), '=', value);
    if (rule.softDelete) q = q.where('deleted_at', 'is', null);
    const holder = await q.executeTakeFirst();
    throw rule.error(shown[v.column] ?? value, holder?.id);
  }
}
