import dc from 'node:diagnostics_channel';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
const t0 = performance.now();
const seen = new WeakMap();
const emit = net.Server.prototype.emit;
let accepts = [];
net.Server.prototype.emit = function (ev, sock, ...rest) {
  if (ev === 'connection') { seen.set(sock, performance.now()); accepts.push(performance.now() - t0); }
  return emit.call(this, ev, sock, ...rest);
};
const firsts = new WeakSet();
let worst = 0;
dc.subscribe('http.server.request.start', ({ request }) => {
  const s = request.socket; if (firsts.has(s)) return; firsts.add(s);
  const a = seen.get(s); if (a === undefined) return;
  const d = performance.now() - a; if (d > worst) { worst = d; console.error(`FIRSTREQ ${d.toFixed(0)} ms after accept at ${((a - t0) / 1000).toFixed(2)} s`); }
});
setInterval(() => { if (accepts.length) { console.error(`ACCEPTS ${accepts.length} from ${(accepts[0]/1000).toFixed(2)} to ${(accepts.at(-1)/1000).toFixed(2)} s`); accepts = []; } }, 500).unref();
