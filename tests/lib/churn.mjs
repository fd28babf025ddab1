// The sandbox churn that tests/soak and tests/bench/bench_sustained.mjs run
// with the real e2b SDK (the caller passes its Sandbox class, so that this file
// does not resolve 'e2b' itself): `parallel` loops, each round
//   Sandbox.create, 3 x commands.run, write a 1 MB file and read it back
//   (compared), kill;
// and, when `long` (a Sandbox made once by the caller) is given, one
// commands.run and one files.read of long.path in it, so that one envd serves
// requests for the whole run. Bounded by time (seconds) and by a total count
// (maxIterations); it stops early after maxErrors failed rounds.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { docker, isReadyProxy, isReadyNetwork, isReadyWarm, sandboxContainers, sandboxOf } from './engine.mjs';
import { sleep } from './poll.mjs';

export const LONG_FILE = '/tmp/corral-churn-long.txt';
export const LONG_TEXT = 'the long-lived sandbox\n';

const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] : NaN);
export { pct };

// A long-lived sandbox for `long`: made, and given its file.
export async function makeLong(Sandbox, timeoutMs = 900_000) {
  const sbx = await Sandbox.create('base', { timeoutMs });
  try {
    await sbx.files.write(LONG_FILE, LONG_TEXT);
  } catch (e) {
    await sbx.kill().catch(() => {});
    throw e;
  }
  return sbx;
}

export async function churn({ Sandbox, parallel = 4, seconds = 60, maxIterations = 10_000, maxErrors = 10, long = null,
  createOpts = { timeoutMs: 120_000 } } = {}) {
  const stats = { iterations: 0, errors: [], createMs: [], runMs: [], fileMs: [], killMs: [], aliveAfterKill: [],
    startedAt: performance.now(), elapsedMs: 0 };
  const deadline = Date.now() + seconds * 1000;
  let started = 0;
  const more = () => Date.now() < deadline && started < maxIterations && stats.errors.length < maxErrors;

  async function round(n) {
    let t = performance.now();
    const sbx = await Sandbox.create('base', createOpts);
    stats.createMs.push(performance.now() - t);
    let failure = null;
    try {
      for (let k = 0; k < 3; k++) {
        t = performance.now();
        const r = await sbx.commands.run(`echo round-${n}-${k}`);
        stats.runMs.push(performance.now() - t);
        if (r.stdout !== `round-${n}-${k}\n`) throw new Error(`commands.run: stdout ${JSON.stringify(r.stdout)}`);
      }
      const data = randomBytes(1024 * 1024);
      t = performance.now();
      await sbx.files.write('/tmp/churn.bin', data);
      const back = await sbx.files.read('/tmp/churn.bin', { format: 'bytes' });
      stats.fileMs.push(performance.now() - t);
      if (!Buffer.from(back).equals(data)) throw new Error(`1 MB file: read back ${back.length} bytes that differ`);
      if (long) {
        const r = await long.commands.run(`echo long-${n}`);
        if (r.stdout !== `long-${n}\n`) throw new Error(`long-lived sandbox: stdout ${JSON.stringify(r.stdout)}`);
        const f = await long.files.read(LONG_FILE);
        if (f !== LONG_TEXT) throw new Error(`long-lived sandbox: read ${JSON.stringify(f)}`);
      }
    } catch (e) {
      failure = e;
    }
    try {
      t = performance.now();
      await sbx.kill();
      stats.killMs.push(performance.now() - t);
      // A kill answers once no process of the sandbox runs (decision 0073),
      // as the kernel sees it: dockerd may still list the container running
      // while it cleans up after the kill, and removes it right after, which
      // removalsDone checks at the end of a stretch.
      const left = (await containersOfSandbox(sbx.sandboxId)).flatMap((c) => processesOf(c.Id));
      if (left.length) stats.aliveAfterKill.push(`${sbx.sandboxId} (pids ${left.join(' ')})`);
    } catch (e) {
      failure ??= new Error(`kill ${sbx.sandboxId}: ${e.message}`);
    }
    if (failure) throw failure;
  }

  async function loop() {
    while (more()) {
      const n = started++;
      try {
        await round(n);
        stats.iterations++;
      } catch (e) {
        stats.errors.push(`round ${n}: ${e?.message || e}`);
      }
    }
  }
  await Promise.all(Array.from({ length: parallel }, loop));
  stats.elapsedMs = performance.now() - stats.startedAt;
  return stats;
}

// The pids of the processes alive (not zombies) in the cgroup of the container
// whose full id is given: its path names the id under both of dockerd's
// cgroup drivers (/docker/<id>, docker-<id>.scope).
export function processesOf(id) {
  const pids = [];
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(id)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') pids.push(pid);
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

// The containers of one sandbox and its proxy, whatever state they are in.
export const containersOfSandbox = (sbid) => sandboxContainers(sbid, { withProxy: true });

// Samples, every everyMs until stop() is called, how many sandbox containers
// (not egress proxies) the named workers hold, running or not; the highest
// count seen.
export function countContainers(workerIds, everyMs = 250) {
  let peak = 0, samples = 0, stopped = false;
  const done = (async () => {
    while (!stopped) {
      let n = 0;
      for (const wid of workerIds) {
        const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${wid}`] }));
        const ctrs = (await docker('GET', `/containers/json?all=1&filters=${f}`)).body || [];
        n += ctrs.filter((c) => sandboxOf(c) !== null).length;
      }
      peak = Math.max(peak, n);
      samples++;
      // sleep: the sampling pace (until stop()).
      await sleep(everyMs);
    }
  })();
  return { async stop() { stopped = true; await done; return { peak, samples }; } };
}

// Waits until the workers named have no container or network left but those of
// the sandboxes in `keep` (kills are answered before dockerd has removed them);
// bounded. Returns the number of leftovers (0 when all went).
export async function removalsDone(workerIds, { keep = [], timeoutMs = 90_000 } = {}) {
  const end = Date.now() + timeoutMs;
  let left = 0;
  do {
    left = 0;
    for (const wid of workerIds) {
      const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${wid}`] }));
      const ctrs = (await docker('GET', `/containers/json?all=1&filters=${f}`)).body || [];
      const nets = (await docker('GET', `/networks?filters=${f}`)).body || [];
      // Kept: the sandboxes in keep and the warm pool's ready members (a
      // claimed one is known by its name, its network by its warm id).
      const kept = (c) => isReadyProxy(c) || isReadyWarm(c) || keep.includes(c.Labels?.['corral.sandbox'])
        || keep.includes(sandboxOf(c));
      const keptNets = new Set(ctrs.filter(kept).map((c) => c.Labels?.['corral.sandbox']));
      left += ctrs.filter((c) => !kept(c)).length;
      left += nets.filter((n) => !isReadyNetwork(n) && !keptNets.has(n.Labels?.['corral.sandbox'])).length;
    }
    if (left === 0) return 0;
    // sleep: between tries of this loop, bounded by timeoutMs.
    await sleep(500);
  } while (Date.now() < end);
  return left;
}

