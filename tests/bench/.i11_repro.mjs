// scratch: pause/resume timings, optionally right after 20 deletes
import { api } from '../lib/corral.mjs';
const key = process.argv[2], churn = process.argv[3] === 'churn';
const ms = async (fn) => { const t = performance.now(); await fn(); return performance.now() - t; };
const must = (r, w) => { if (r.status >= 300) throw new Error(`${w}: ${r.status} ${r.raw}`); return r; };
const body = { template: 'base', timeout: 600, cpu_cores: 0.1, memory_mb: 128 };
if (churn) {
  const ids = (await Promise.all(Array.from({ length: 20 }, () => api('POST', '/v1/sandboxes', { key, body })))).map((r) => must(r, 'c').body.sandbox_id);
  await Promise.all(ids.map((id) => api('DELETE', `/v1/sandboxes/${id}`, { key })));
}
let t0 = performance.now();
const sb = must(await api('POST', '/v1/sandboxes', { key, body }), 'create').body;
console.log(`create ${(performance.now() - t0).toFixed(0)}`);
const out = [];
for (let i = 0; i < 20; i++) {
  const p = await ms(async () => must(await api('POST', `/v1/sandboxes/${sb.sandbox_id}/pause`, { key }), 'pause'));
  const r = await ms(async () => must(await api('POST', `/v1/sandboxes/${sb.sandbox_id}/resume`, { key }), 'resume'));
  out.push(`${p.toFixed(0)}/${r.toFixed(0)}`);
}
console.log(new Date().toISOString(), sb.sandbox_id, out.join(' '));
await api('DELETE', `/v1/sandboxes/${sb.sandbox_id}`, { key });
