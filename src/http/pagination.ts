import type { PaginationT } from './schemas.js';

export function pagination(page: number, pageSize: number, total: number): PaginationT {
  const totalPages = Math.ceil(total / pageSize);
  return { page, pageSize, total, totalPages, hasNext: page < totalPages, hasPrev: page > 1 };
}

export interface Page<T> {
  data: T[];
  pagination: PaginationT;
}

/**
 * Row offset of a page. `page` has no upper bound (spec 8), but an offset past 2^53 would overflow the
 * databases' 64-bit OFFSET; clamped, such a page is simply empty.
 */
export function pageOffset(page: number, pageSize: number): number {
  return Math.min((page - 1) * pageSize, Number.MAX_SAFE_INTEGER);
}
