// Issue 35's benchmark: Sandbox.create() to resolved through the real SDK
// over HTTPS, from a warm pool (decision 0082) against a cold create of the
// same image on the same worker (template `cold`, the same image, no pool)
// and against the Engine API's create+start of that image, interleaved in one
// run. Each round starts with the worker at rest (its pool full, the last
// round's containers removed) and makes a warm create, a cold one, one with
// an egress policy (cold by decision 0082) and an Engine API one; it kills
// the four and at once makes a second warm create, while dockerd removes
// them (the "busy" row). A warm create counts only if
// it did claim a warm sandbox (workerd's line for it says claimed); the
// misses are reported.
import { writeFileSync } from 'node:fs';
import { Sandbox } from '../e2b/sdk.mjs';
import { newWorkspace, eventually } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, containersLabelled, docker, logLines, logOf } from '../workerd/helpers.mjs';
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
  return { claimed: h.claimed, row: {
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
  } };
}
const hopRows = { warm: [], busy: [], cold: [] };
function hopTable() {
  console.log('Where a create\'s time goes, hop by hop, in ms (issue 35):');
  console.log(`  ${'hop'.padEnd(54)}${'warm p50'.padStart(10)}${'warm p95'.padStart(10)}${'busy p95'.padStart(10)}${'cold p50'.padStart(10)}`);
  for (const hop of Object.keys(hopRows.warm[0] ?? hopRows.cold[0] ?? {})) {
    const cell = (rows, p) => (rows.length ? pct(rows.map((r) => r[hop]), p).toFixed(0) : '-').padStart(10);
    console.log(`  ${hop.padEnd(54)}${cell(hopRows.warm, 0.5)}${cell(hopRows.warm, 0.95)}${cell(hopRows.busy, 0.95)}${cell(hopRows.cold, 0.5)}`);
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
const POLICY = { denyOut: ['0.0.0.0/0'], allowOut: ['api.allowed.test'] };
const readyWarm = async () => (await containersLabelled(`corral.worker=${w.id}`, 'corral.role=warm'))
  .filter((c) => (c.Names?.[0] ?? '').startsWith('/corral-warm_') && c.State === 'running').length;

// The worker at rest: its pool full, nothing of the last round left (a
// kill is answered before dockerd has removed the container).
const settled = () => eventually(async () => {
  const mine = await containersLabelled(`corral.worker=${w.id}`);
  const bench = await containersLabelled('corral.bench=1');
  return (await readyWarm()) >= POOL && bench.length === 0
    && !mine.some((c) => ['sandbox', 'warm'].includes(c.Labels['corral.role'])
      && !(c.Names?.[0] ?? '').startsWith('/corral-warm_'));
}, { timeout: 120_000, what: 'the worker at rest (pool full, last round removed)' });

// One warm create: its time, or null (a miss: it was made cold).
async function warmCreate(rows) {
  const t0 = Date.now();
  const [ms, sb] = await timed(() => Sandbox.create('base', opts));
  const hops = hopsOf(w, sb.sandboxId, t0, Date.now());
  if (hops.claimed) rows.push(hops.row);
  return [hops.claimed ? ms : null, sb];
}

try {
  const warm = [], busy = [], cold = [], policy = [], engine = [];
  let misses = 0, later = null;
  for (let i = 0; i < N; i++) {
    if (later) await later.kill();
    await settled();
    const [wms, ws1] = await warmCreate(hopRows.warm);
    if (wms === null) misses++; else warm.push(wms);
    const ct0 = Date.now();
    const [cms, cs] = await timed(() => Sandbox.create('cold', opts));
    cold.push(cms);
    hopRows.cold.push(hopsOf(w, cs.sandboxId, ct0, Date.now()).row);
    const [pms, ps] = await timed(() => Sandbox.create('base', { ...opts, network: POLICY }));
    policy.push(pms);
    const [ems, eid] = await timed(engineRun);
    engine.push(ems);
    await Promise.all([ws1.kill(), cs.kill(), ps.kill(), docker('DELETE', `/containers/${eid}?force=true`)]);
    // A second warm create at once, while dockerd removes those four.
    const [bms, sb2] = await warmCreate(hopRows.busy);
    if (bms === null) misses++; else busy.push(bms);
    later = sb2;
  }
  if (later) await later.kill();
  const row = (name, xs) => console.log(`  ${name.padEnd(34)} p50 ${pct(xs, 0.5).toFixed(0).padStart(5)} ms   p95 ${pct(xs, 0.95).toFixed(0).padStart(5)} ms`);
  console.log(`Sandbox.create() to resolved, SDK over HTTPS, ${N} each, interleaved:`);
  row(`warm pool, worker at rest (${warm.length})`, warm);
  row(`warm pool, worker removing 4 (${busy.length})`, busy);
  console.log(`  (${misses} of ${2 * N} warm creates missed the pool and were made cold)`);
  row('cold, the same image', cold);
  row('egress policy (always cold: 0082)', policy);
  row('Engine API create+start (baseline)', engine);
  console.log(`  ratio warm/engine p50 ${(pct(warm, 0.5) / pct(engine, 0.5)).toFixed(2)}   cold/engine ${(pct(cold, 0.5) / pct(engine, 0.5)).toFixed(2)}   (goal: warm p50 < 50 ms, p95 < 100 ms)`);
  hopTable();
  if (process.env.BENCH_WARM_VERBOSE) for (const k of ['warm', 'busy']) console.log(k, JSON.stringify(hopRows[k].map((r) => Object.values(r).map((v) => Math.round(v)))));
} finally {
  if (process.env.BENCH_WARM_LOG) writeFileSync(process.env.BENCH_WARM_LOG, logOf(w));
  await cleanupWorkers();
}
