import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type Level, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { Config } from '../config.js';

const REDACTED = '[redacted]';

// Query parameters whose values are ids, numbers, dates or enums: kept in logs for debugging. Every
// other value (search, email, phone, q, and any name not listed) may be personal data or a pasted key,
// so it is redacted: an allow-list fails safe when a new parameter appears.
const PLAIN_PARAMS = new Set([
  'page',
  'pageSize',
  'limit',
  'cursor',
  'after',
  'before',
  'sortKey',
  'sortOrder',
  'updatedAfter',
  'updatedBefore',
  'createdAfter',
  'createdBefore',
  'closedAtFrom',
  'closedAtTo',
  'ownerId',
  'pipelineId',
  'stageId',
  'contactId',
  'companyId',
  'dealId',
  'clientId',
  'listId',
  'formId',
  'relatedType',
  'relatedId',
  'objectType',
  'status',
  'isWon',
  'isLost',
  'valueMin',
  'valueMax',
  'type',
  'types',
  'expand',
  'include',
  'wait',
  'timeout',
]);

const KEY_RE = /crm_live_/i;

function decoded(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/**
 * The URL as logs may show it: a path segment holding an API key is replaced, and query values are
 * kept only for the parameters of PLAIN_PARAMS (never when they hold a key). Keys are matched after
 * percent-decoding, so `crm%5Flive_…` is caught too.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const safePath = path
    .split('/')
    .map((seg) => (KEY_RE.test(decoded(seg)) ? REDACTED : seg))
    .join('/');
  if (q < 0) return safePath;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      if (pair === '') return pair;
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      const name = decoded(rawName);
      if (KEY_RE.test(name)) return REDACTED;
      if (eq < 0) return rawName;
      const value = pair.slice(eq + 1);
      return PLAIN_PARAMS.has(name) && !KEY_RE.test(decoded(value)) ? pair : `${rawName}=${REDACTED}`;
    })
    .join('&');
  return `${safePath}?${query}`;
}

/** Replaces Fastify's default `req` serializer: no headers, and the URL through redactUrl. */
export function serializeReq(req: FastifyRequest) {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    remoteAddress: req.ip,
    remotePort: req.socket ? req.socket.remotePort : undefined,
  };
}

type LoggerOption = FastifyServerOptions['logger'];

/** Pretty text instead of JSON lines: `LOG_FORMAT=pretty`, or `auto` (the default) while stderr is a terminal. */
export function prettyLogs(config: Config): boolean {
  return config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stderr.isTTY === true);
}

// Requests logged as started and not yet completed, kept to name the request on its one pretty line.
const MAX_STARTED = 10_000;

/**
 * One pino JSON line as the pretty stream shows it. Fastify logs a request twice ("incoming request" with its
 * method and URL, "request completed" with its status and time); on a terminal that is one short line,
 * `GET /api/v1/contacts → 200 in 1.4 ms`, written at completion, so request logs do not push the start-up
 * banner (and its key) off the screen. Every other line is pino-pretty's rendering of it. The line is already
 * serialized and redacted by pino, so pretty text shows exactly what the JSON would.
 */
export function prettyLine(line: string, started: Map<unknown, string>, format: (log: Record<string, unknown>) => string): string {
  let log: Record<string, any>;
  try {
    log = JSON.parse(line);
  } catch {
    return line;
  }
  if (log.msg === 'incoming request' && log.req) {
    if (started.size >= MAX_STARTED) started.delete(started.keys().next().value);
    started.set(log.reqId, `${log.req.method} ${log.req.url}`);
    return '';
  }
  if (log.msg === 'request completed' && log.res) {
    const { req: _req, res, responseTime, reqId, ...rest } = log;
    const what = started.get(reqId) ?? 'request';
    started.delete(reqId);
    const took = typeof responseTime === 'number' ? ` in ${responseTime.toFixed(1)} ms` : '';
    return format({ ...rest, msg: `${what} → ${res.statusCode}${took}` });
  }
  return format(log);
}

let pretty: Writable | undefined;

/** The process's one pretty stream: pino's lines in, pino-pretty's text out on stderr (synchronously, in order). */
function prettyStream(): Writable {
  if (pretty) return pretty;
  // Loaded only here: a server logging JSON (in production, stderr is no terminal) never holds pino-pretty.
  const { isColorSupported, prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const options = { colorize: process.stderr.isTTY === true && isColorSupported, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' };
  // One line a log, its fields inline; a line with an error keeps pino-pretty's multi-line form (its stack).
  const oneLine = prettyFactory({ ...options, singleLine: true }) as (log: object) => string;
  const multiLine = prettyFactory(options) as (log: object) => string;
  const format = (log: Record<string, unknown>) => (log.err ? multiLine(log) : oneLine(log));
  const started = new Map<unknown, string>();
  pretty = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const text = prettyLine(String(chunk), started, format);
      if (text) process.stderr.write(text);
      done();
    },
  });
  return pretty;
}

/** Where the server's logs go: stderr, as JSON lines or pretty text (prettyLogs). */
export function logStream(config: Config): NodeJS.WritableStream {
  return prettyLogs(config) ? prettyStream() : process.stderr;
}

/** A logger of the process outside the app (start-up, shutdown, workers of `crm serve`), in the app's format. */
export function processLogger(config: Config): Logger {
  return prettyLogs(config) ? pino({ level: config.logLevel }, prettyStream()) : pino({ level: config.logLevel }, pino.destination(2));
}

/**
 * The app's logger options; a logger given by the caller (tests, tools) keeps its own level and
 * stream but gets the same serializers and redaction, so no logger of the app can print a key.
 */
export function loggerOptions(config: Config, given: LoggerOption): LoggerOption {
  if (given === false) return false;
  const base = {
    level: config.logLevel,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.secret', '*.key'], censor: REDACTED },
    // CONTRACT A.1: the CLI's stdout carries only its JSON answers; logs go to stderr (JSON, or pretty text on a terminal).
    stream: logStream(config),
  };
  const custom = given && typeof given === 'object' ? (given as Record<string, any>) : {};
  return {
    ...base,
    ...custom,
    serializers: { ...(custom.serializers ?? {}), req: serializeReq },
  } as LoggerOption;
}

type LogArgs = [obj: unknown, msg?: string, ...args: unknown[]];

/**
 * A request's logger that makes pino's child (`{ reqId }`) only when it first writes a line at an enabled
 * level, and writes every line through it: the lines are the ones the child would have written.
 *
 * NOTE: Fastify makes a child logger for every request; with redaction on, pino serializes the child's
 * bindings through the redactor at once. That was ~1.5 % of a point read's CPU (bench/journal/),
 * for a logger that most requests, at the default level, never write to.
 */
class RequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bound: Bindings,
  ) {}

  /** pino's child, made on first need. */
  private real(): Logger {
    return (this.made ??= this.parent.child(this.bound));
  }

  get level(): string {
    return this.made ? this.made.level : this.parent.level;
  }
  set level(level: string) {
    this.real().level = level;
  }
  isLevelEnabled(level: Level): boolean {
    return this.made ? this.made.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }
  /** One line at `level`, through pino's child (made here when the level is enabled). */
  write(level: Level, args: LogArgs): void {
    if (this.isLevelEnabled(level)) (this.real()[level] as (...a: LogArgs) => void)(...args);
  }
  silent(): void {}
  /** A grandchild carries the request's bindings, as with pino's child. */
  child(bindings: Bindings, opts?: ChildLoggerOptions): Logger {
    return this.real().child(bindings, opts);
  }
  bindings(): Bindings {
    return this.real().bindings();
  }
  setBindings(bindings: Bindings): void {
    this.real().setBindings(bindings);
  }
  flush(cb?: (err?: Error) => void): void {
    this.real().flush(cb);
  }
}

// pino's six level methods, each a `write` at its level.
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
interface RequestLogger extends Record<(typeof LEVELS)[number], (...args: LogArgs) => void> {}
for (const level of LEVELS) {
  RequestLogger.prototype[level] = function (this: RequestLogger, ...args: LogArgs) {
    this.write(level, args);
  };
}

/**
 * Fastify's `childLoggerFactory`: a RequestLogger for a plain request; the logger's own child at once when
 * the route sets options of its own (a `logLevel`: rare, and on no hot path).
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  // Fastify's stand-in when logging is off (`logger: false`) is no pino logger: it gets its own child.
  // Fastify passes a route's `logLevel` and `logSerializers`, and nothing else, as options.
  if (opts.level !== undefined || opts.serializers !== undefined || typeof (logger as Partial<Logger>).isLevelEnabled !== 'function')
    return logger.child(bindings, opts);
  return new RequestLogger(logger as Logger, bindings) as unknown as FastifyBaseLogger;
}
