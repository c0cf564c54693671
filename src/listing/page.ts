/**
 * The page every list answers (spec 2.12 / B.4 with C.1's `nextCursor`), as the routes send it. A page of records
 * the database made as JSON (contacts, companies, deals) stays that text, or those bytes, up to the socket.
 */
import type { FastifyReply } from 'fastify';
import { assertCursorOrPage, jsonPage, type Page } from '../http/pagination.js';
import { sendJsonText, type JsonBytes, type JsonText } from '../http/replies.js';
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
