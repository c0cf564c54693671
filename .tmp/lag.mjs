import dc from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
const t0 = performance.now();
let last = performance.now();
setInterval(() => { const now = performance.now(); if (now - last > 200) console.error(`LAG ${(now - last).toFixed(0)} ms at ${((now - t0) / 1000).toFixed(2)} s`); last = now; }, 20).unref();
const starts = new WeakMap();
dc.subscribe('http.server.request.start', ({ request }) => starts.set(request, performance.now()));
dc.subscribe('http.server.response.finish', ({ request }) => {
  const s = starts.get(request); if (s === undefined) return;
  const d = performance.now() - s;
  if (d > 400) console.error(`SLOW ${d.toFixed(0)} ms ${request.url.slice(0, 60)} started ${((s - t0) / 1000).toFixed(2)} s`);
});
