// Issue 35's benchmark: Sandbox.create() to resolved through the real SDK
// over HTTPS, from a warm pool (decision 0082) against a cold create of the
// same image on the same worker (template `cold`, the same image, no pool)
// and against the Engine API's create+start of that image, interleaved in one
// run. A warm create counts only if it did claim a warm sandbox (its
// container carries corral.role=warm); the misses are reported.
import { Sandbox } from '../e2b/sdk.mjs';
import { newWorkspace, eventually } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, containersLabelled, inspect, docker, logLines, logOf } from '../workerd/helpers.mjs';
import { createHops } from '../lib/create_hops.mjs';

const N = Number(process.env.BENCH_WARM_CREATES || 50);
const POOL = 4;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const timed = async (fn) => { const t = performance.now(); const v = await fn(); return [performance.now() - t, v]; };

// Each hop of one create (issue 35), on this host's one clock: the client's
// start and end (t0, t1, epoch ms) around workerd's line for the sandbox,
// which says when the control plane queued it, how long its delivery and
// each worker phase took, and (its own time) when the worker was done.
function hopsOf(w, sbid, t0, t1) {
  const line = logLines(logOf(w)).find((l) => l.sandbox === sbid && createHops(l.msg));
  if (!line) throw new Error(`workerd wrote no create line for ${sbid}`);
  const h = createHops(line.msg);
  const done = Date.parse(line.time);
  return {
    'client → queued (TLS, nginx, corral-api, placement)': h.queuedAt - t0,
    'queued → on the worker (the command\'s delivery)': h.delivery,
    'waiting on the worker': h.waited,
    'worker: image and volumes ready': h.prepared,
    'worker: warm pool (look, and claim when warm)': h.warmPool,
    'worker: network': h.network,
    'worker: container create': h.container,
    'worker: container start': h.start,
    'worker: envd answers': h.envd,
    'worker done → client has it (report, wake, answer)': t1 - done,
    'total, as the client saw it': t1 - t0,
  };
}
const hopRows = { warm: [], cold: [] };
function hopTable() {
  console.log('Where a create\'s time goes, hop by hop, p50 in ms (issue 35):');
  console.log(`  ${'hop'.padEnd(54)}${'warm'.padStart(8)}${'cold'.padStart(8)}`);
  for (const hop of Object.keys(hopRows.warm[0] ?? hopRows.cold[0] ?? {})) {
    const cell = (rows) => (rows.length ? pct(rows.map((r) => r[hop]), 0.5).toFixed(0) : '-').padStart(8);
    console.log(`  ${hop.padEnd(54)}${cell(hopRows.warm)}${cell(hopRows.cold)}`);
  }
}

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
    const wt0 = Date.now();
    const [wms, ws1] = await timed(() => Sandbox.create('base', opts));
    const wt1 = Date.now();
    const role = (await inspect(`corral-${ws1.sandboxId}-${w.id}`))?.Config.Labels['corral.role'];
    if (role === 'warm') {
      warm.push(wms);
      hopRows.warm.push(hopsOf(w, ws1.sandboxId, wt0, wt1));
    } else misses++;
    const ct0 = Date.now();
    const [cms, cs] = await timed(() => Sandbox.create('cold', opts));
    cold.push(cms);
    hopRows.cold.push(hopsOf(w, cs.sandboxId, ct0, Date.now()));
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
  hopTable();
} finally {
  await cleanupWorkers();
}
