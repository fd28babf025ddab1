// Sustained load with the real e2b SDK: BENCH_SUSTAINED_PARALLEL (4) loops of
// tests/lib/churn.mjs (create, 3 x commands.run, a 1 MB file written and read
// back, kill; plus a commands.run and a files.read in one long-lived sandbox)
// for BENCH_SUSTAINED_SECONDS (600: issue 34's ten minutes; CI's soak runs 60 s), at most
// BENCH_SUSTAINED_MAX rounds.
// Prints rounds per minute, create and commands.run p50/p99, and each daemon's
// fds and RSS before and after, side by side (tests/lib/procstat.mjs; both
// readings at rest: the killed sandboxes removed, fd counts settled). "Before"
// is cold, with no warm-up: pools fill during the run (each of corral-api's 64
// threads opens its Redis connection when first used, about +60 fds each), so
// growth here is not a leak by itself; tests/soak measures after a warm-up.
// Needs E2B_API_URL, E2B_API_KEY, E2B_SANDBOX_URL, CORRAL_ROUTING=url,
// CORRAL_RUN (the stack's state dir) and CORRAL_URL.
import { Sandbox } from '../e2b/lib.mjs';
import { churn, makeLong, removalsDone, pct, countContainers } from '../lib/churn.mjs';
import { stackDaemons, envdPidOf, settledSample, table } from '../lib/procstat.mjs';
import { enrolledAs } from '../workerd/helpers.mjs';
import { createHops } from '../lib/create_hops.mjs';
import { readFileSync, statSync } from 'node:fs';

// The sandboxes whose create claimed a warm sandbox, from workerd's log
// lines written since byte `from`.
function claimedSince(log, from) {
  const ids = new Set();
  for (const line of readFileSync(log).subarray(from).toString().split('\n')) {
    try {
      const l = JSON.parse(line);
      if (createHops(l.msg)?.claimed) ids.add(l.sandbox);
    } catch { /* not a JSON line */ }
  }
  return ids;
}

// Where creates' time went on the worker, from workerd's log lines written
// since byte `from`: waited on the worker, network, container, start, envd.
function createPhases(log, from) {
  const names = ['delivery', 'waited', 'network', 'container', 'start', 'envd'];
  const out = Object.fromEntries(names.map((n) => [n, []]));
  for (const line of readFileSync(log).subarray(from).toString().split('\n')) {
    let hops = null;
    try { hops = createHops(JSON.parse(line).msg); } catch { /* not a JSON line */ }
    if (hops) names.forEach((n) => out[n].push(hops[n]));
  }
  return out;
}

const RUN = process.env.CORRAL_RUN;
const SECONDS = Number(process.env.BENCH_SUSTAINED_SECONDS || 600);
const PARALLEL = Number(process.env.BENCH_SUSTAINED_PARALLEL || 3); // issue 34's soak: 3 loops
const IDLE_COLD = 5;
const MAX = Number(process.env.BENCH_SUSTAINED_MAX || 5000);

const long = await makeLong(Sandbox);
try {
  const workers = enrolledAs(`${RUN}/log/workerd.log`);
  const daemons = stackDaemons(RUN, { envdPid: await envdPidOf(long.sandboxId) });
  await removalsDone(workers, { keep: [long.sandboxId] });
  // The baseline, in this run: one loop alone, creates one at a time, each
  // killed before the next. The warm pool serves the first ones; under the
  // churn nearly every create is cold, so the baseline is the cold ones
  // (decision 0086), the warm ones shown beside: creates go on until
  // IDLE_COLD were cold (bounded).
  const idleFrom = statSync(`${RUN}/log/workerd.log`).size;
  const idleAll = [];
  let claimed = new Set();
  for (let i = 0; i < 4 * IDLE_COLD && idleAll.length - claimed.size < IDLE_COLD; i++) {
    const t = performance.now();
    const sbx = await Sandbox.create('base');
    idleAll.push({ id: sbx.sandboxId, ms: performance.now() - t });
    await sbx.kill();
    claimed = claimedSince(`${RUN}/log/workerd.log`, idleFrom);
  }
  const idle = idleAll.filter((c) => !claimed.has(c.id)).map((c) => c.ms);
  const idleWarm = idleAll.filter((c) => claimed.has(c.id)).map((c) => c.ms);
  if (idle.length < IDLE_COLD) throw new Error(`only ${idle.length} of ${idleAll.length} idle creates were cold: no baseline`);
  await removalsDone(workers, { keep: [long.sandboxId] });
  const start = await settledSample(daemons);
  const counter = countContainers(workers, 1000);
  const logFrom = statSync(`${RUN}/log/workerd.log`).size;
  const s = await churn({ Sandbox, parallel: PARALLEL, seconds: SECONDS, maxIterations: MAX, long, maxErrors: 50 });
  const containers = await counter.stop();
  const left = await removalsDone(workers, { keep: [long.sandboxId] });
  const end = await settledSample(daemons);
  const f = (xs, p) => pct(xs, p).toFixed(0);
  console.log(`sustained churn, ${PARALLEL} in parallel, ${(s.elapsedMs / 1000).toFixed(0)} s ` +
    '(create, 3 x commands.run, 1 MB write + read, kill; and a run + read in one long-lived sandbox):');
  console.log(`  ${s.iterations} rounds, ${(s.iterations / (s.elapsedMs / 60000)).toFixed(1)} per minute, ${s.errors.length} failed` +
    `${s.errors.length ? ` (first: ${s.errors[0]})` : ''}${left ? `, ${left} containers/networks not removed` : ''}`);
  console.log(`  create        p50 ${f(s.createMs, 0.5)} ms  p95 ${f(s.createMs, 0.95)} ms  p99 ${f(s.createMs, 0.99)} ms`);
  const warmUnderLoad = [...claimedSince(`${RUN}/log/workerd.log`, logFrom)].length;
  console.log(`  create, idle (one loop alone before the churn): cold p50 ${f(idle, 0.5)} ms ` +
    `(${idle.length}), warm p50 ${idleWarm.length ? f(idleWarm, 0.5) : '-'} ms (${idleWarm.length}); ` +
    `under load / idle cold = ${(pct(s.createMs, 0.5) / pct(idle, 0.5)).toFixed(2)} (issue 34's goal: within 2); ` +
    `${warmUnderLoad} of the churn's creates were warm`);
  console.log(`  commands.run  p50 ${f(s.runMs, 0.5)} ms  p95 ${f(s.runMs, 0.95)} ms  p99 ${f(s.runMs, 0.99)} ms`);
  console.log(`  kill (answered once its processes are dead: decision 0073) p50 ${f(s.killMs, 0.5)} ms  p95 ${f(s.killMs, 0.95)} ms  ` +
    `p99 ${f(s.killMs, 0.99)} ms; ${s.aliveAfterKill.length} with a process still running after the answer`);
  const ph = createPhases(`${RUN}/log/workerd.log`, logFrom);
  console.log(`  where a create's time went on the worker (${ph.envd.length} creates), p50 / p95 ms: ` +
    Object.entries(ph).map(([n, xs]) => `${n} ${f(xs, 0.5)} / ${f(xs, 0.95)}`).join(', '));
  console.log(`  sandbox containers at once: at most ${containers.peak} (sampled every second, ${containers.samples} samples; ` +
    `${PARALLEL} loops + 1 long-lived)`);
  console.log(`  1 MB write+read p50 ${f(s.fileMs, 0.5)} ms  p99 ${f(s.fileMs, 0.99)} ms`);
  console.log(`  daemons before and after (at rest):\n${table(start, end, { startLabel: 'before', endLabel: 'after' }).replace(/^/gm, '    ')}`);
} finally {
  await long.kill().catch(() => {});
}
