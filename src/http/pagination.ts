import type { PaginationT } from './schemas.js';

export function pagination(page: number, pageSize: number, total: number): PaginationT {
  const totalPages = Math.ceil(total / pageSize);
  return { page, pageSize, total, totalPages, hasNext: page < totalPages, hasPrev: page > 1 };
}

export interface Page<T> {
  data: T[];
  pagination: PaginationT;
}
