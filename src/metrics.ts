/**
 * Process-wide metrics (issue: operators' metrics), in one prom-client registry of this process (never
 * prom-client's global one). Labels never carry a tenant id, a key, a record id or a URL with ids in it:
 * routes are labelled by their template (`/api/v1/contacts/:id`). The HTTP plugin (plugins/metrics.ts)
 * records requests and adds the gauges of its app; other modules count what they do here.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const processRegistry = new Registry();

let defaultsCollected = false;
/** Node's own metrics (CPU, memory, event-loop delay, GC), once per process, on first use. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: processRegistry, prefix: 'crm_' });
}

export const httpRequests = new Counter({
  name: 'crm_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [processRegistry],
});

export const httpDuration = new Histogram({
  name: 'crm_http_request_duration_seconds',
  help: 'Time from the request received to the response sent, by method, route template and status code',
  labelNames: ['method', 'route', 'status'] as const,
  // Point reads answer in a fraction of a millisecond; long-polls of the event log wait up to 30 s.
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [processRegistry],
});

export const refusedRequests = new Counter({
  name: 'crm_refused_requests_total',
  help: 'Requests refused with 429, by error code (rate_limit_exceeded, too_many_concurrent_queries, too_many_waiting_requests)',
  labelNames: ['code'] as const,
  registers: [processRegistry],
});

export const authFailures = new Counter({
  name: 'crm_auth_failures_total',
  help: 'Requests refused by authentication, by error code (missing_api_key, invalid_api_key)',
  labelNames: ['code'] as const,
  registers: [processRegistry],
});

export const webhookAttempts = new Counter({
  name: 'crm_webhook_attempts_total',
  help: 'Webhook delivery attempts recorded by this process, by the status they left the delivery in (delivered, retry_scheduled, permanent_failure)',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});
