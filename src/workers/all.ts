// Importing this module registers every background loop (one import per loop).
import './webhooks.js';
import './dynamic-lists.js';
import './idempotency.js';
import './retention.js';
import './planner-statistics.js';
export {};
