// Issue 30's benchmark: the code interpreter through the real
// @e2b/code-interpreter. Sandbox.create() of code-interpreter-v1 to the first
// runCode("1+1") answered (p50 over BENCH_INTERP_CREATES), then runCode("1+1")
// round trips (p50, p99) against `python3 -c` through commands.run in the same
// sandbox, in the same run: ratios are what to read on a shared machine.
// With a warm pool of the template on the worker (BENCH_WORKERD_EXTRA=
// "warm_pool = code-interpreter-v1=1"), the same for creates claimed from it,
// each once the pool holds one again.
import { CodeInterpreter as CI } from '../e2b/interp_sdk.mjs';
import { docker, isReadyWarm, sandboxContainer } from '../lib/engine.mjs';
import { until } from '../lib/poll.mjs';

const CREATES = Number(process.env.BENCH_INTERP_CREATES || 10);
const CALLS = Number(process.env.BENCH_INTERP_CALLS || 100);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => `${x.toFixed(1)} ms`;

const create = [], first = [];
for (let i = 0; i < CREATES; i++) {
  const t0 = performance.now();
  const s = await CI.create({ timeoutMs: 120_000 });
  const t1 = performance.now();
  const r = await s.runCode('1+1');
  const t2 = performance.now();
  if (r.text !== '2') throw new Error(`runCode("1+1") answered ${JSON.stringify(r.text)}`);
  create.push(t1 - t0);
  first.push(t2 - t1);
  await s.kill();
}
console.log(`code-interpreter-v1: Sandbox.create() then the first runCode("1+1"), ${CREATES} sandboxes:`);
console.log(`  create p50 ${ms(pct(create, 0.5))}; first result after create returned p50 ${ms(pct(first, 0.5))}, max ${ms(Math.max(...first))} (goal: < 1000 ms)`);
console.log(`  create to first result p50 ${ms(pct(create.map((c, i) => c + first[i]), 0.5))}`);

const warmReady = async () => (await docker('GET', '/containers/json')).body
  .some((c) => isReadyWarm(c) && c.Labels['corral.template'] === 'code-interpreter-v1');
if (await until(warmReady, { timeoutMs: 5000 })) {
  const wc = [], wf = [];
  for (let i = 0; i < Math.min(CREATES, 5); i++) {
    if (!(await until(warmReady, { timeoutMs: 180_000, everyMs: 250 }))) throw new Error('the pool did not refill');
    const t0 = performance.now();
    const w = await CI.create({ timeoutMs: 120_000 });
    const t1 = performance.now();
    await w.runCode('1+1');
    const t2 = performance.now();
    if ((await sandboxContainer(w.sandboxId)).Labels['corral.role'] !== 'warm') throw new Error('made cold, not claimed');
    wc.push(t1 - t0);
    wf.push(t2 - t1);
    await w.kill();
  }
  console.log(`  claimed warm (${wc.length}): create p50 ${ms(pct(wc, 0.5))}; first result after create returned p50 ${ms(pct(wf, 0.5))}, max ${ms(Math.max(...wf))}`);
}

const s = await CI.create({ timeoutMs: 300_000 });
try {
  const code = [], cmd = [];
  await s.runCode('1+1');
  await s.commands.run('python3 -c "print(1+1)"');
  for (let i = 0; i < CALLS; i++) { // interleaved: both see the same moments of a noisy machine
    let t = performance.now();
    await s.runCode('1+1');
    code.push(performance.now() - t);
    t = performance.now();
    await s.commands.run('python3 -c "print(1+1)"');
    cmd.push(performance.now() - t);
  }
  console.log(`round trips, ${CALLS} each, interleaved, one sandbox:`);
  console.log(`  runCode("1+1")                          p50 ${ms(pct(code, 0.5))}  p99 ${ms(pct(code, 0.99))}`);
  console.log(`  commands.run('python3 -c "print(1+1)"')  p50 ${ms(pct(cmd, 0.5))}  p99 ${ms(pct(cmd, 0.99))}`);
  console.log(`  ratio runCode/commands.run p50 ${(pct(code, 0.5) / pct(cmd, 0.5)).toFixed(2)} (goal: < 1.5)`);
  // Streaming: a line printed every 200 ms, each stamped in the kernel with
  // the wall clock (the sandbox shares this host's): how late onStdout sees it.
  const late = [];
  await s.runCode('import time\nfor i in range(20):\n    print(time.time(), flush=True)\n    time.sleep(0.2)',
    { onStdout: (m) => { const t = Number(m.line); if (t > 1e9) late.push(Date.now() - t * 1000); } }); // stamps only
  console.log(`streaming: ${late.length} lines 200 ms apart, onStdout after the print p50 ${ms(pct(late, 0.5))}, max ${ms(Math.max(...late))} (goal: < 100 ms)`);
} finally {
  await s.kill();
}
