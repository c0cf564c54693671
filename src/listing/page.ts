/**
 * The page every list answers (spec 2.12 / B.4 with C.1's `nextCursor`), as the routes send it. A page of records
 * the database made as JSON (contacts, companies, deals) stays that text, or those bytes, up to the socket.
 */
import type { FastifyReply } from 'fastify';
import { assertCursorOrPage, type Page } from '../http/pagination.js';
import { replyBytes, sendJsonText, type JsonBytes, type JsonText } from '../http/replies.js';
import type { PaginationT } from '../http/schemas.js';
import type { PageRequest } from './descriptor.js';

export type { Page } from '../http/pagination.js';

/** A page of `T`: its objects, or its JSON as text or as UTF-8 bytes. Routes send it with sendPage. */
export type ListPage<T> = Page<T> | JsonText<Page<T>> | JsonBytes<Page<T>>;

/** Sends a page as it is: objects through the route's serializer, JSON text or bytes untouched (replies.ts sendJsonText). */
export function sendPage<T>(reply: FastifyReply, page: ListPage<T>): Page<T> {
  if (typeof page === 'string' || Buffer.isBuffer(page)) return sendJsonText(reply, page);
  return page;
}

/**
 * A page whose records are JSON text made by the database (http/replies.ts sendJsonText): the envelope of Page.
 * NOTE: made by one `join`, which gives a flat string. `{"data":[` + records.join(',') + … gave a rope of three
 * strings over the flat records (a ConsString), and Fastify's `Buffer.byteLength` for Content-Length flattened it
 * into a copy: a page of 50 contacts allocated ~18 KB more, a tenth of what its request allocates.
 */
export function jsonPage<T>(records: readonly JsonText<T>[], pagination: PaginationT): JsonText<Page<T>> {
  const tail = `],"pagination":${JSON.stringify(pagination)}}`;
  const n = records.length;
  if (n === 0) return `{"data":[${tail}` as JsonText<Page<T>>;
  const parts: string[] = new Array(n);
  parts[0] = `{"data":[${records[0]}`;
  for (let i = 1; i < n; i++) parts[i] = records[i];
  parts[n - 1] += tail;
  return parts.join(',') as JsonText<Page<T>>;
}

const HEAD = Buffer.from('{"data":[');

/** The envelope of Page around records given as UTF-8 bytes, joined by commas (a page read as one BLOB), in a reusable buffer (http/replies.ts replyBytes). */
export function jsonBytesPage<T>(records: Buffer, pagination: PaginationT): JsonBytes<Page<T>> {
  const tail = `],"pagination":${JSON.stringify(pagination)}}`;
  const out = replyBytes(HEAD.length + records.length + Buffer.byteLength(tail));
  HEAD.copy(out, 0);
  records.copy(out, HEAD.length);
  out.write(tail, HEAD.length + records.length, 'utf8');
  return out as JsonBytes<Page<T>>;
}

/** The envelope of a query that can match nothing (a NUL byte in a filter): same shape as a listed page's. */
export function emptyPage(req: PageRequest): PaginationT {
  assertCursorOrPage(req);
  if (req.cursor !== undefined) return { page: null, pageSize: req.pageSize, total: 0, totalPages: null, hasNext: false, hasPrev: null, nextCursor: null };
  const page = req.page ?? 1;
  return { page, pageSize: req.pageSize, total: 0, totalPages: 0, hasNext: false, hasPrev: page > 1, nextCursor: null };
}

/** A page of nothing, for a query that can match nothing: the same answer a listed empty page gives. */
export function emptyListPage<T>(req: PageRequest): ListPage<T> {
  return jsonPage<T>([], emptyPage(req));
}
