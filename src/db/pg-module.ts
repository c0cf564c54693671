import type pg from 'pg';
import { onUse } from '../util/on-use.js';

let loaded: typeof pg | undefined;

/** The pg package, loaded on first use (util/on-use.ts), reading int8 and numeric as numbers. */
export function postgres(): typeof pg {
  if (!loaded) {
    loaded = onUse<typeof pg>('pg');
    // pg returns int8/numeric as strings; our bigints are cents and counts, far below 2^53.
    loaded.types.setTypeParser(20, (v) => Number(v));
    loaded.types.setTypeParser(1700, (v) => Number(v));
  }
  return loaded;
}
