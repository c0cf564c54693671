import { errors } from '../errors.js';
import type { PaginationT } from './schemas.js';

/** The envelope of spec 2.12 / B.4 with C.1's `nextCursor`; pages are built by src/listing/planner.ts. */
export interface Page<T> {
  data: T[];
  pagination: PaginationT;
}

export const DEFAULT_PAGE_SIZE = 50;

/**
 * The page size of a request (CONTRACT C.5): `pageSize` and `limit` are one parameter under two names,
 * with the range of PageSizeParams. Both given with different values is 400 naming the alias (the name
 * the spec does not use on that endpoint, `canonical` being the one it does); equal values are fine.
 */
export function pageSizeOf(q: { pageSize?: number; limit?: number }, canonical: 'pageSize' | 'limit'): number {
  const { pageSize, limit } = q;
  if (pageSize !== undefined && limit !== undefined && pageSize !== limit) {
    const alias = canonical === 'pageSize' ? 'limit' : 'pageSize';
    throw errors.field(alias, `is an alias of \`${canonical}\` and differs from it (${q[alias]} vs ${q[canonical]}); give one of them, or the same value`);
  }
  return pageSize ?? limit ?? DEFAULT_PAGE_SIZE;
}

/**
 * The page a request asks for, checked before anything is read (B.1: validation, 400, comes before a 404 of the
 * path's record): the page size as pageSizeOf gives it, and `cursor` or `page`, not both (C.1).
 */
export function pageRequestOf(
  q: { page?: number; pageSize?: number; limit?: number; cursor?: string },
  canonical: 'pageSize' | 'limit',
): { page?: number; pageSize: number; cursor?: string } {
  const pageSize = pageSizeOf(q, canonical);
  assertCursorOrPage(q);
  return { page: q.page, pageSize, cursor: q.cursor };
}

/** C.1: `cursor` together with `page` is 400 validation_failed. */
export function assertCursorOrPage(q: { page?: number; cursor?: string }): void {
  if (q.cursor !== undefined && q.page !== undefined) throw errors.field('cursor', 'give either `cursor` or `page`, not both');
}
