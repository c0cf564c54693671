/**
 * The planner statistics' interface to the rest of the service: callers tell of bulk changes and the workers run
 * the scheduled pass, whatever the database. PostgreSQL's ANALYZE schedule is pg-stats.ts; on SQLite these are
 * no-ops (its statistics are sqlite-stats.ts's, kept by the database itself).
 */
export { BULK_CHANGE_ROWS, noteBulkChange, refreshPlannerStatistics } from './pg-stats.js';
