// Issue 35's benchmark: Sandbox.create() to resolved through the real SDK
// over HTTPS, from a warm pool (decision 0082) against a cold create of the
// same image on the same worker (template `cold`, the same image, no pool)
// and against the Engine API's create+start of that image, interleaved in one
// run. A warm create counts only if it did claim a warm sandbox (its
// container carries corral.role=warm); the misses are reported.
import { Sandbox } from '../e2b/sdk.mjs';
import { newWorkspace, eventually } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, containersLabelled, inspect, docker } from '../workerd/helpers.mjs';

const N = Number(process.env.BENCH_WARM_CREATES || 50);
const POOL = 4;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const timed = async (fn) => { const t = performance.now(); const v = await fn(); return [performance.now() - t, v]; };

async function engineRun() {
  const c = await docker('POST', '/containers/create', { Image: 'corral/base', Cmd: ['sleep', 'infinity'],
    Labels: { 'corral.bench': '1' } });
  if (c.status !== 201) throw new Error(JSON.stringify(c.body));
  await docker('POST', `/containers/${c.body.Id}/start`);
  return c.body.Id;
}

const ws = newWorkspace();
const w = await stackWorker(ws, { extra: `warm_pool = base=${POOL}\ntemplate.cold = corral/base\nslots = 64\nmemory_mb = 65536` });
const opts = { apiKey: ws.member, timeoutMs: 300_000 };
const readyWarm = async () => (await containersLabelled(`corral.worker=${w.id}`, 'corral.role=warm'))
  .filter((c) => c.Names[0].startsWith('/corral-warm_') && c.State === 'running').length;

try {
  const warm = [], cold = [], engine = [];
  let misses = 0;
  for (let i = 0; i < N; i++) {
    await eventually(async () => (await readyWarm()) >= 1, { timeout: 60_000, what: 'a warm sandbox' });
    const [wms, ws1] = await timed(() => Sandbox.create('base', opts));
    const role = (await inspect(`corral-${ws1.sandboxId}-${w.id}`))?.Config.Labels['corral.role'];
    if (role === 'warm') warm.push(wms); else misses++;
    const [cms, cs] = await timed(() => Sandbox.create('cold', opts));
    cold.push(cms);
    const [ems, eid] = await timed(engineRun);
    engine.push(ems);
    await Promise.all([ws1.kill(), cs.kill(), docker('DELETE', `/containers/${eid}?force=true`)]);
  }
  const row = (name, xs) => console.log(`  ${name.padEnd(34)} p50 ${pct(xs, 0.5).toFixed(0).padStart(5)} ms   p95 ${pct(xs, 0.95).toFixed(0).padStart(5)} ms`);
  console.log(`Sandbox.create() to resolved, SDK over HTTPS, ${N} each, interleaved:`);
  row(`warm pool (${warm.length} hits, ${misses} misses)`, warm);
  row('cold, the same image', cold);
  row('Engine API create+start (baseline)', engine);
  console.log(`  ratio warm/engine p50 ${(pct(warm, 0.5) / pct(engine, 0.5)).toFixed(2)}   cold/engine ${(pct(cold, 0.5) / pct(engine, 0.5)).toFixed(2)}   (goal: warm p50 < 50 ms, p95 < 100 ms)`);
} finally {
  await cleanupWorkers();
}
