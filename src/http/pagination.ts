import type { PaginationT } from './schemas.js';

/** The envelope of spec 2.12 / B.4 with C.1's `nextCursor`; pages are built by modules/shared/listing.ts. */
export interface Page<T> {
  data: T[];
  pagination: PaginationT;
}
