/**
 * Process-wide metrics (issue: operators' metrics), in one prom-client registry of this process (never
 * prom-client's global one). Labels never carry a tenant id, a key, a record id or a URL with ids in it:
 * routes are labelled by their template (`/api/v1/contacts/:id`). The HTTP plugin (plugins/metrics.ts)
 * records requests and adds the gauges of its app; other modules count what they do here.
 */
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

export const processRegistry = new Registry();

let defaultsCollected = false;
/** Node's own metrics (CPU, memory, event-loop delay, GC), once per process, on first use. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: processRegistry, prefix: 'crm_' });
}

// Point reads answer in a fraction of a millisecond; long-polls of the event log wait up to 30 s.
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** One series of the HTTP metrics: the requests of one method, route template and status. */
class HttpSeries {
  count = 0;
  sum = 0;
  /** Requests per bucket (not cumulative): `counts[i]` took at most HTTP_BUCKETS[i] and more than the one before. */
  readonly counts = new Float64Array(HTTP_BUCKETS.length);
  constructor(readonly labels: Readonly<{ method: string; route: string; status: string }>) {}
}

/**
 * `crm_http_requests_total` and `crm_http_request_duration_seconds`, kept by hand and exposed through the
 * registry like prom-client's own Counter and Histogram (same names, labels, buckets and text).
 * NOTE: prom-client's `inc(labels)` and `observe(labels, v)` build and hash a string of the labels and
 * check them on every call: ~2.8 µs of a ~95 µs `GET /contacts/:id` (perf; bench/journal/).
 * Here a route's recorder (plugins/metrics.ts, made once per route) finds its series by method and status
 * in two small maps; the text is built only when /metrics is scraped.
 */
export class HttpMetrics {
  /** Every series of the process, by method, route and status (apps of one process share them, as before). */
  private readonly series = new Map<string, HttpSeries>();

  /** Records the responses of one route template (`unmatched` for requests no route matched). */
  recorder(route: string): (method: string, status: number, seconds: number) => void {
    const byMethod = new Map<string, Map<number, HttpSeries>>();
    return (method, status, seconds) => {
      let byStatus = byMethod.get(method);
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      let s = byStatus.get(status);
      if (!s) {
        const key = `${method} ${route} ${status}`;
        s = this.series.get(key);
        if (!s) this.series.set(key, (s = new HttpSeries({ method, route, status: String(status) })));
        byStatus.set(status, s);
      }
      s.count++;
      s.sum += seconds;
      let i = 0;
      while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]) i++;
      if (i < HTTP_BUCKETS.length) s.counts[i]++;
    };
  }

  /** The two metrics, as objects the registry reads (`get()`, as prom-client's own metrics answer it). */
  metrics(): PromMetric[] {
    const requests = {
      name: 'crm_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code',
      type: 'counter',
      aggregator: 'sum',
    } as const;
    const duration = {
      name: 'crm_http_request_duration_seconds',
      help: 'Time from the request received to the response sent, by method, route template and status code',
      type: 'histogram',
      aggregator: 'sum',
    } as const;
    const bucket = `${duration.name}_bucket`;
    return [
      { ...requests, get: async () => ({ ...requests, values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count })) }) },
      {
        ...duration,
        get: async () => ({
          ...duration,
          values: [...this.series.values()].flatMap((s) => {
            let acc = 0;
            return [
              ...HTTP_BUCKETS.map((le, i) => ({ labels: { le, ...s.labels }, value: (acc += s.counts[i]), metricName: bucket })),
              { labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: bucket },
              { labels: s.labels, value: s.sum, metricName: `${duration.name}_sum` },
              { labels: s.labels, value: s.count, metricName: `${duration.name}_count` },
            ];
          }),
        }),
      },
    ];
  }
}

/** What a prom-client registry reads of a metric (its `registerMetric` and text exposition). */
interface PromMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { labels: object; value: number; metricName?: string }[] }>;
}

export const httpMetrics = new HttpMetrics();
for (const m of httpMetrics.metrics()) processRegistry.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);

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

export const rateLimitStoreTransitions = new Counter({
  name: 'crm_rate_limit_store_transitions_total',
  help: 'Moves of the rate-limit counters between Redis and this process: to="per_process" when Redis became unreachable, to="shared" when it answered again',
  labelNames: ['to'] as const,
  registers: [processRegistry],
});
for (const to of ['per_process', 'shared']) rateLimitStoreTransitions.inc({ to }, 0);
