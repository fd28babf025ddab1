// Lifecycle figures (issue 11, decision 0044), each beside a baseline of the
// same run: pause and resume through Corral (HTTPS -> corral-api -> worker
// command -> dockerd's freeze -> the worker's report) against dockerd's own
// pause/unpause of a plain container; and deadline precision: how long after
// its deadline each of 200 sandboxes with staggered timeouts is acted on, read
// from the audit trail's event times (a test worker holds them: the deadline
// is the control plane's work, not dockerd's); snapshot and create-from-
// snapshot latency beside dockerd's commit and a create from the template.
// usage: node bench_lifecycle.mjs <owner key of a workspace with a workerd>
import { api, corralctl, newWorkspace, setLimit, sleep } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { docker } from '../lib/engine.mjs';

const key = process.argv[2];
const ROUNDS = 20, DEADLINES = 200;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = async (fn) => { const t = performance.now(); await fn(); return performance.now() - t; };
const must = (r, what) => { if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.raw ?? JSON.stringify(r.body)}`); return r; };

async function pauseResume() {
  const sb = must(await api('POST', '/v1/sandboxes', { key, body: { template: 'base', timeout: 600, cpu_cores: 0.1, memory_mb: 128 } }), 'create').body;
  const pauses = [], resumes = [];
  for (let i = 0; i < ROUNDS; i++) {
    pauses.push(await ms(async () => must(await api('POST', `/v1/sandboxes/${sb.sandbox_id}/pause`, { key }), 'pause')));
    resumes.push(await ms(async () => must(await api('POST', `/v1/sandboxes/${sb.sandbox_id}/resume`, { key }), 'resume')));
  }
  await api('DELETE', `/v1/sandboxes/${sb.sandbox_id}`, { key });
  const c = await docker('POST', '/containers/create', { Image: 'corral/base', Cmd: ['sleep', 'infinity'], Labels: { 'corral.bench': '1' } });
  await docker('POST', `/containers/${c.body.Id}/start`);
  const dp = [], du = [];
  for (let i = 0; i < ROUNDS; i++) {
    dp.push(await ms(() => docker('POST', `/containers/${c.body.Id}/pause`)));
    du.push(await ms(() => docker('POST', `/containers/${c.body.Id}/unpause`)));
  }
  await docker('DELETE', `/containers/${c.body.Id}?force=true`);
  console.log(`Pause and resume (freeze), ${ROUNDS} rounds, p50 / p99 ms:`);
  console.log(`  corral pause   ${pct(pauses, 0.5).toFixed(1)} / ${pct(pauses, 0.99).toFixed(1)}   dockerd pause   ${pct(dp, 0.5).toFixed(1)} / ${pct(dp, 0.99).toFixed(1)}   ratio p50 ${(pct(pauses, 0.5) / pct(dp, 0.5)).toFixed(1)}`);
  console.log(`  corral resume  ${pct(resumes, 0.5).toFixed(1)} / ${pct(resumes, 0.99).toFixed(1)}   dockerd unpause ${pct(du, 0.5).toFixed(1)} / ${pct(du, 0.99).toFixed(1)}   ratio p50 ${(pct(resumes, 0.5) / pct(du, 0.5)).toFixed(1)}`);
}

// Snapshot (commit) and create-from-snapshot through Corral, beside dockerd's
// own commit of a plain container and Corral's create from the base template.
async function snapshots() {
  const R = 5, snaps = [], fromSnap = [], fromBase = [], commits = [];
  const body = { template: 'base', timeout: 600, cpu_cores: 0.1, memory_mb: 128 };
  const src = must(await api('POST', '/v1/sandboxes', { key, body }), 'create').body;
  const ids = [];
  for (let i = 0; i < R; i++) {
    let snap;
    snaps.push(await ms(async () => { snap = must(await api('POST', `/v1/sandboxes/${src.sandbox_id}/snapshots`, { key, body: {} }), 'snapshot').body; }));
    ids.push(snap.snapshot_id);
    let a, b;
    fromSnap.push(await ms(async () => { a = must(await api('POST', '/v1/sandboxes', { key, body: { ...body, template: snap.snapshot_id } }), 'create from snapshot').body; }));
    fromBase.push(await ms(async () => { b = must(await api('POST', '/v1/sandboxes', { key, body }), 'create').body; }));
    await api('DELETE', `/v1/sandboxes/${a.sandbox_id}`, { key });
    await api('DELETE', `/v1/sandboxes/${b.sandbox_id}`, { key });
  }
  const c = await docker('POST', '/containers/create', { Image: 'corral/base', Cmd: ['sleep', 'infinity'], Labels: { 'corral.bench': '1' } });
  await docker('POST', `/containers/${c.body.Id}/start`);
  for (let i = 0; i < R; i++) {
    commits.push(await ms(() => docker('POST', `/commit?container=${c.body.Id}&repo=corral-bench&tag=c${i}&pause=true`, {})));
    await docker('DELETE', `/images/corral-bench:c${i}?force=1`);
  }
  await docker('DELETE', `/containers/${c.body.Id}?force=true`);
  await api('DELETE', `/v1/sandboxes/${src.sandbox_id}`, { key });
  for (const id of ids) await api('DELETE', `/v1/snapshots/${id}`, { key });
  console.log(`Snapshots, ${R} rounds, p50 ms:`);
  console.log(`  corral snapshot ${pct(snaps, 0.5).toFixed(0)}   dockerd commit ${pct(commits, 0.5).toFixed(0)}   ratio ${(pct(snaps, 0.5) / pct(commits, 0.5)).toFixed(2)}`);
  console.log(`  create from snapshot ${pct(fromSnap, 0.5).toFixed(0)}   from the base template ${pct(fromBase, 0.5).toFixed(0)}   ratio ${(pct(fromSnap, 0.5) / pct(fromBase, 0.5)).toFixed(2)}`);
}

async function deadlines() {
  const ws = newWorkspace();
  await setLimit(ws, DEADLINES + 10);
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', ws.id).token, { slots: DEADLINES + 10 });
  await w.handshake();
  w.start();
  try {
    const made = [];
    for (let i = 0; i < DEADLINES; i += 20) { // 20 at a time; timeouts 2-11 s, spread over them
      const batch = Array.from({ length: 20 }, (_, k) => api('POST', '/v1/sandboxes', { key: ws.member,
        body: { template: 'base', timeout: 2 + ((i + k) % 10), cpu_cores: 0.01, memory_mb: 16 } }));
      for (const r of await Promise.all(batch)) made.push(must(r, 'create').body);
    }
    const last = Math.max(...made.map((m) => Date.parse(m.expires_at)));
    // sleep: time is what is measured: every deadline has passed, and 3 s more for the sweeper to act.
    while (Date.now() < last + 3000) await sleep(500);
    const acted = new Map();
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const r = must(await api('GET', `/v1/audit?event=timed_out&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { key: ws.owner }), 'audit');
      for (const e of r.body.events) acted.set(e.sandbox_id, e.time_ms);
      if (!r.body.next) break;
      cursor = encodeURIComponent(r.body.next);
    }
    const lags = made.filter((m) => acted.has(m.sandbox_id)).map((m) => acted.get(m.sandbox_id) - Date.parse(m.expires_at));
    console.log(`Deadline precision, ${DEADLINES} sandboxes with timeouts of 2-11 s, one corral-sched sweeping every sweep_ms:`);
    console.log(`  acted on ${lags.length}/${DEADLINES}; lag after the deadline p50 ${pct(lags, 0.5)} ms, p99 ${pct(lags, 0.99)} ms, max ${Math.max(...lags)} ms   (goal: p99 < 1000 ms)`);
  } finally {
    await w.stop();
  }
}

await pauseResume();
console.log();
await snapshots();
console.log();
await deadlines();
