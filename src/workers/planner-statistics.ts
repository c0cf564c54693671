import { refreshPlannerStatistics } from '../db/statistics.js';
import { intervalLoop } from './loop.js';

/** How often the tables' planner statistics are checked (and the stale ones analyzed). */
const PLANNER_STATISTICS_INTERVAL_MS = 2 * 60_000;

/**
 * PostgreSQL: ANALYZE of every table whose statistics are missing or stale (db/pg-stats.ts), whether autovacuum
 * runs or not: without them a tag filter was planned as a nested loop over the whole tag set. A no-op on SQLite,
 * whose statistics `crm serve` refreshes hourly (Database.optimize).
 */
export const plannerStatisticsLoop = intervalLoop(
  'planner statistics',
  () => PLANNER_STATISTICS_INTERVAL_MS,
  async ({ database, log }) => {
    const analyzed = await refreshPlannerStatistics(database.db);
    if (analyzed.length) log.debug({ tables: analyzed }, 'planner statistics refreshed');
  },
);
