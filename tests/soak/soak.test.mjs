// Leaks under load: the stack's daemons must hold as many file descriptors and
// about as much memory after a stretch of sandbox churn as before it.
//
// Warm-up first (SOAK_WARMUP_SECONDS, 15): thread pools, connection caches
// (libcurl's in workerd, nginx's upstream keepalive, Redis connections of the
// corral-api threads) and malloc arenas fill up to their working size, so that
// what the warm-up leaves is the baseline. Then the measured stretch
// (SOAK_SECONDS, 60; at most SOAK_MAX_ITERATIONS rounds) with SOAK_PARALLEL (4)
// loops of tests/lib/churn.mjs: create, 3 x commands.run, a 1 MB file written
// and read back, kill; and in every round a commands.run and a files.read in
// one long-lived sandbox, whose envd is measured too. Both readings are taken
// at rest: every killed sandbox's container and network removed by dockerd,
// and fd counts no longer moving (tests/lib/procstat.mjs settledSample).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from '../e2b/lib.mjs';
import { churn, makeLong, removalsDone, pct, countContainers } from '../lib/churn.mjs';
import { stackDaemons, envdPidOf, settledSample, growth, table } from '../lib/procstat.mjs';
import { enrolledAs } from '../workerd/helpers.mjs';

const RUN = process.env.CORRAL_RUN;
const WARMUP_S = Number(process.env.SOAK_WARMUP_SECONDS || 15);
const LOOP_S = Number(process.env.SOAK_SECONDS || 60);
const PARALLEL = Number(process.env.SOAK_PARALLEL || 4);
const MAX = Number(process.env.SOAK_MAX_ITERATIONS || 600);
// The stack workerd's slots (tests/soak/run.sh): few, so that kills lagging
// behind creates would show as more containers than slots.
const SLOTS = Number(process.env.CORRAL_WORKERD_SLOTS);

// What a daemon may grow by between the two readings without it counting as a
// leak. The leak this suite was written for (issue 8) cost workerd about 8 fds
// and dockerd about 2.5 fds a second under this load: hundreds over the
// measured stretch, far past these.
//  - fds +20: at rest a daemon's descriptors are its listeners, its files and
//    its pooled connections. The pools are full after the warm-up, but how many
//    idle connections are open at the instant of a reading still varies a
//    little: nginx's keepalive connections to corral-api and to clients that
//    have not timed out yet, libcurl's cache in workerd (to dockerd and to the
//    control plane), corral-api's per-thread Redis connections (a thread used
//    for the first time opens one; 64 threads, most used in the warm-up), and
//    dockerd's per-container streams of the long-lived sandbox. Twenty covers
//    that; a leak of one fd per request or per sandbox does not fit in it.
//  - RSS +8 MB: malloc keeps freed memory and arenas grow with the threads that
//    touched them (workerd and corral-api start a thread per connection or
//    request: 256 KB stacks, 64 KB relay buffers), so RSS ratchets up a few MB
//    before it is flat; 1 MB bodies pass through nginx and envd's buffers.
//  - dockerd, RSS +32 MB: a Go program. Its heap may grow to twice the live
//    heap before a collection and the runtime hands freed pages back to the
//    kernel only lazily (the scavenger), so its RSS swings by tens of MB under
//    churn with nothing leaked; its fds get the same +20 as the others.
// (RSS is measured on the build without sanitizers: ASan's quarantine and
// shadow memory would swamp these figures; tests/run.sh runs this suite on build/bin.)
const ALLOW = { fds: 20, rssKb: 8 * 1024, byName: { dockerd: { rssKb: 32 * 1024 } } };

let long;
before(async () => { long = await makeLong(Sandbox); });
after(async () => { await long?.kill().catch(() => {}); });

const summary = (what, s) => `${what}: ${s.iterations} rounds in ${(s.elapsedMs / 1000).toFixed(0)} s ` +
  `(${(s.iterations / (s.elapsedMs / 60000)).toFixed(0)}/min), create p50 ${pct(s.createMs, 0.5).toFixed(0)} ms ` +
  `p99 ${pct(s.createMs, 0.99).toFixed(0)} ms, commands.run p50 ${pct(s.runMs, 0.5).toFixed(0)} ms ` +
  `p99 ${pct(s.runMs, 0.99).toFixed(0)} ms, kill p50 ${pct(s.killMs, 0.5).toFixed(0)} ms ` +
  `p99 ${pct(s.killMs, 0.99).toFixed(0)} ms, ${s.errors.length} failed`;

// Issue 34: a kill answers once its container is gone (decision 0073), within
// KILL_P99_MS at the 99th percentile under this load, and the worker never
// holds more sandbox containers than its slots, counting those being killed.
const KILL_P99_MS = 2000;

function killProblems(s, containers, slots) {
  const out = s.aliveAfterKill.map((id) => `sandbox ${id}: a process of it still ran after its kill returned`);
  if (pct(s.killMs, 0.99) > KILL_P99_MS) out.push(`kill p99 ${pct(s.killMs, 0.99).toFixed(0)} ms > ${KILL_P99_MS} ms`);
  if (containers.samples < 10) out.push(`only ${containers.samples} samples of the container count`);
  if (containers.peak > slots) out.push(`${containers.peak} sandbox containers at once, over the worker's ${slots} slots`);
  return out;
}

test(`fds and RSS of workerd, corral-api, nginx, dockerd and envd stay flat over ${LOOP_S} s of churn`,
  { timeout: (WARMUP_S + LOOP_S + 420) * 1000 }, async () => {
    assert.ok(SLOTS > PARALLEL, `CORRAL_WORKERD_SLOTS (${process.env.CORRAL_WORKERD_SLOTS}) must exceed ${PARALLEL}`);
    const workers = enrolledAs(`${RUN}/log/workerd.log`);
    assert.ok(workers.length > 0, 'the stack workerd has not enrolled');
    const keep = [long.sandboxId];
    const daemons = stackDaemons(RUN, { envdPid: await envdPidOf(long.sandboxId) });
    for (const name of ['workerd', 'corral-api 1', 'corral-api 2', 'nginx master', 'nginx worker 1', 'dockerd', 'envd']) {
      assert.ok(daemons.some((d) => d.name === name), `no pid for ${name}: ${JSON.stringify(daemons)}`);
    }
    // Every problem is collected and reported together: a failed round must not hide a leak.
    const problems = [];
    let start, end, loop;
    try {
      const warm = await churn({ Sandbox, parallel: PARALLEL, seconds: WARMUP_S, maxIterations: MAX, long });
      console.log(summary('warm-up', warm));
      problems.push(...warm.errors.map((e) => `warm-up ${e}`));
      const warmLeft = await removalsDone(workers, { keep });
      if (warmLeft) problems.push(`${warmLeft} containers or networks of the warm-up's killed sandboxes were not removed`);
      start = await settledSample(daemons);
      const counter = countContainers(workers);
      loop = await churn({ Sandbox, parallel: PARALLEL, seconds: LOOP_S, maxIterations: MAX, long });
      const containers = await counter.stop();
      console.log(summary('measured', loop));
      console.log(`sandbox containers at once: at most ${containers.peak} (${containers.samples} samples), ` +
        `slots ${SLOTS}`);
      problems.push(...loop.errors, ...killProblems(loop, containers, SLOTS));
      if (loop.iterations < 20) problems.push(`only ${loop.iterations} rounds: too few to show a leak`);
      const left = await removalsDone(workers, { keep });
      if (left) problems.push(`${left} containers or networks of killed sandboxes were not removed`);
      end = await settledSample(daemons);
      problems.push(...growth(start, end, ALLOW));
    } finally {
      if (start) {
        end ??= await settledSample(daemons, { maxMs: 3000 });
        console.log(`\nafter the warm-up (start) and after ${loop?.iterations ?? '?'} more rounds (end); allowed growth: ` +
          `fds +${ALLOW.fds}, RSS +${ALLOW.rssKb / 1024} MB (dockerd +${ALLOW.byName.dockerd.rssKb / 1024} MB)\n` +
          `${table(start, end)}\n`);
      }
    }
    assert.deepEqual(problems, [], `\n  ${problems.join('\n  ')}`);
  });
