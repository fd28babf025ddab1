// A store outage under load, with a real workerd on the real dockerd (issue 34
// point 1, decision 0070): shared by tests/workerd/redis_outage.test.mjs
// (Redis stopped) and tests/failover/workerd.check.mjs (a Sentinel failover
// slower than a lease).
//
// Before the outage: sandboxes that run (envd answers, a file written in each)
// and loops of create -> command (through the gateway) -> kill. During it the
// loops go on and expect 503s. After it, what must hold:
// - every sandbox that ran before is `running` in the API, answers a command
//   directly and through the gateway, with its file, in the same container
//   (never restarted), and workerd never killed it;
// - no sandbox of the workspace is `lost`; workerd was never told 410 and
//   never enrolled again;
// - creates work again within a bounded wait of the store's return;
// - nothing is corrupted: the API's running sandboxes, the worker's running
//   containers and the admission count agree, every kill a client was
//   answered 204 is gone, and workerd killed only sandboxes a client killed
//   or was never answered 201 for;
// - every API answer was 2xx or a JSON 503, and the outage (as a client saw
//   it) lasted longer than a lease, so that the run tested what it claims.
import assert from 'node:assert/strict';
import { before, after } from 'node:test';
import { copyFileSync } from 'node:fs';
import { api, eventually, sleep, newWorkspace, setLimit } from '../lib/corral.mjs';
import { stream as envdStream, unb64 } from '../envd/lib.mjs';
import { stackWorker, cleanupWorkers, createSb, getSb, deleteSb, ctrsOf, envdOf, envdRun, envdToken, inspect, logOf, logLines,
  sandboxLog, enrolledAs } from './helpers.mjs';

export const LEASE_MS = Number(process.env.CORRAL_LEASE_MS || 5000);
const GATEWAY = `https://localhost:${Number(new URL(process.env.CORRAL_URL).port) + 1}`;

// A command through the data plane (nginx, the module's route lookup, the
// worker's data port, envd), routed by headers as the SDK's E2B_SANDBOX_URL.
export async function gatewayRun(sbid, cmd) {
  let stdout = ''; let end = null;
  const req = { process: { cmd: '/bin/bash', args: ['-l', '-c', cmd], envs: {} }, stdin: false };
  const opts = { user: 'user', token: envdToken(sbid), headers: { 'E2b-Sandbox-Id': sbid, 'E2b-Sandbox-Port': '49983' } };
  for await (const m of envdStream({ base: GATEWAY }, 'process.Process/Start', req, opts)) {
    if (m.event?.data?.stdout) stdout += unb64(m.event.data.stdout);
    if (m.event?.end) end = m.event.end;
  }
  return { stdout, end };
}

const runningIds = async (ws) => {
  const r = await api('GET', '/v1/sandboxes?state=running', { key: ws.member });
  if (r.status !== 200) return null;
  return new Set(r.body.sandboxes.map((s) => s.sandbox_id));
};

// One loop of create -> command -> kill until stop() says so (bounded by
// maxMs too). Every answer is recorded; a kill refused (503) is retried later.
function loadLoop(ws, n, rec, stop, maxMs) {
  return (async () => {
    for (let i = 0, t0 = Date.now(); !stop() && Date.now() - t0 < maxMs; i++) {
      const at = Date.now();
      let c;
      try { c = await createSb(ws, { timeout: 900, metadata: { load: String(n) } }); } catch (e) {
        rec.answers.push({ at, op: 'create', status: `fetch: ${e.message}` });
        // sleep: a client's pause before it tries again (the loop is bounded by stop() and maxMs).
        await sleep(250);
        continue;
      }
      rec.answers.push({ at, op: 'create', status: c.status, code: c.body?.code });
      // sleep: a client's pause before it tries again (the loop is bounded by stop() and maxMs).
      if (c.status !== 201) { await sleep(250); continue; }
      const id = c.body.sandbox_id;
      rec.told.add(id);
      try {
        const out = await gatewayRun(id, `echo loop ${n} round ${i}`);
        rec.commands.push({ at, ok: out.stdout === `loop ${n} round ${i}\n`, id });
      } catch (e) {
        rec.commands.push({ at, ok: false, id, e: e.message });
      }
      const d = await deleteSb(ws, id).catch((e) => ({ status: `fetch: ${e.message}` }));
      rec.answers.push({ at: Date.now(), op: 'delete', status: d.status, code: d.body?.code });
      if (d.status === 204) { rec.killed.add(id); rec.rounds[n] = (rec.rounds[n] || 0) + 1; } else rec.unkilled.add(id);
      if (d.status === 204 && rec.backAt && at > rec.backAt) rec.roundsAfter[n] = (rec.roundsAfter[n] || 0) + 1;
    }
  })();
}

// A probe of the store as clients see it: GET /v1/workspace every 200 ms.
// okAfter: the first 200 sent once backAt() is set (the store's return).
function probe(ws, stop, backAt) {
  const p = { first503: 0, last503: 0, okAfter: 0, other: [] };
  p.done = (async () => {
    while (!stop()) {
      const at = Date.now();
      const r = await api('GET', '/v1/workspace', { key: ws.member }).catch((e) => ({ status: `fetch: ${e.message}` }));
      if (r.status === 503) { p.first503 ||= at; p.last503 = Date.now(); } else if (r.status !== 200) p.other.push(r.status);
      if (r.status === 200 && backAt() && at >= backAt()) p.okAfter ||= at;
      // sleep: the probe's pace, one request every 200 ms (until stop()).
      await sleep(200);
    }
  })();
  return p;
}

/* The scenario. down() starts the outage; back() ends it and resolves once
 * the store answers (Redis started, or the sentinels name a new primary);
 * holdMs is how long the outage is held before back() (0: back() waits it out). */
export async function outageUnderLoad({ ws, worker, name, down, back, holdMs = 0, keep = 3, loops = 2 }) {
  const t = { start: Date.now() };
  const log0 = logOf(worker).length;
  // Sandboxes that run before, each with a file of its own.
  const kept = await Promise.all(Array.from({ length: keep }, async (_, i) => {
    const r = await createSb(ws, { timeout: 900, metadata: { kept: String(i) } });
    assert.equal(r.status, 201, r.raw);
    const id = r.body.sandbox_id;
    const out = await envdRun(await envdOf(worker.id, id), `echo ${name}-${i} > /tmp/mark && cat /tmp/mark`);
    assert.equal(out.stdout, `${name}-${i}\n`);
    const [c] = (await ctrsOf(worker.id, id)).filter((x) => x.Labels['corral.role'] === 'sandbox');
    return { id, mark: `${name}-${i}`, ctr: c.Id, started: (await inspect(c.Id)).State.StartedAt };
  }));

  // Every handler thread of every corral-api holds a connection to the store
  // before it goes (two processes of 64): after a failover to a new primary,
  // each must find it, not only the few a quiet test would have used.
  const warm = await Promise.all(Array.from({ length: 200 }, () => api('GET', '/v1/workspace', { key: ws.member })));
  assert.deepEqual([...new Set(warm.map((r) => r.status))], [200]);

  const rec = { answers: [], commands: [], told: new Set(), killed: new Set(), unkilled: new Set(), rounds: {}, roundsAfter: {},
    backAt: 0 };
  let stopLoad = false; let stopProbe = false;
  const p = probe(ws, () => stopProbe, () => rec.backAt);
  const running = Array.from({ length: loops }, (_, n) => loadLoop(ws, n, rec, () => stopLoad, 600_000));
  try {
    await eventually(() => Array.from({ length: loops }, (_, n) => rec.rounds[n] > 0).every(Boolean),
      { timeout: 120_000, every: 250, what: 'every load loop to complete a round before the outage' })
      .catch((e) => { throw new Error(`${e.message}; rounds: ${JSON.stringify(rec.rounds)}`); });
    t.down = Date.now();
    await down();
    // sleep: the outage is held holdMs: its length is what the run tests.
    if (holdMs) await sleep(Math.max(0, t.down + holdMs - Date.now()));
    await back();
    t.back = Date.now(); rec.backAt = t.back;
    console.log(`# ${name}: the store was out for ${t.back - t.down} ms (lease ${LEASE_MS} ms)`);

    // Creates work again: bounded waits, not measures of speed. The control
    // plane takes creates again (answers other than 503: "no worker", "the
    // store") within 30 s of the return; and one succeeds, within 3 min: how
    // long it then waits for dockerd (a create that dockerd does not start in
    // the create timeout is a JSON 504, retried) is dockerd's speed, not the
    // outage's.
    let ok;
    for (const end = Date.now() + 180_000; !ok && Date.now() < end;) {
      const sent = Date.now();
      const r = await createSb(ws, { timeout: 900, metadata: { probe: '1' } });
      rec.answers.push({ at: sent, op: 'create', status: r.status, code: r.body?.code });
      if (r.status !== 503) t.accepted ||= sent;
      assert.ok(t.accepted || sent - t.back < 30_000, `every create sent within 30 s of the store's return was answered 503 (${name})`);
      // sleep: a client's pause before it tries again (the loop is bounded: 3 min).
      if (r.status === 201) { ok = r.body.sandbox_id; t.created = sent; t.createdAnswer = Date.now(); } else await sleep(250);
    }
    assert.ok(ok, `no create succeeded within 3 min of the store's return (${name})`);
    console.log(`# ${name}: creates taken again ${t.accepted - t.back} ms after the return; the first to succeed was sent ` +
      `${t.created - t.back} ms after it (answered 201 after ${t.createdAnswer - t.created} ms)`);
    rec.told.add(ok);
    assert.equal((await deleteSb(ws, ok)).status, 204);
    rec.killed.add(ok);
    // Each loop completes a round after the return (bounded).
    await eventually(() => Array.from({ length: loops }, (_, n) => rec.roundsAfter[n] > 0).every(Boolean),
      { timeout: 180_000, every: 250, what: `every load loop to complete a round after the return: ${JSON.stringify(rec.roundsAfter)}` });
  } finally {
    stopLoad = true;
    await Promise.all(running);
    stopProbe = true;
    await p.done;
  }

  // Kills the outage refused are sent again now (a client retrying).
  for (const id of rec.unkilled) {
    const d = await deleteSb(ws, id);
    assert.ok([204, 404].includes(d.status), `retried kill of ${id}: ${d.status} ${d.raw}`);
    rec.killed.add(id);
  }

  const counts = rec.answers.reduce((m, a) => ({ ...m, [`${a.op} ${a.status}`]: (m[`${a.op} ${a.status}`] || 0) + 1 }), {});
  console.log(`# ${name}: load ${JSON.stringify(counts)}; commands ${rec.commands.filter((c) => c.ok).length} ok, ` +
    `${rec.commands.filter((c) => !c.ok).length} failed; rounds after the return ${JSON.stringify(rec.roundsAfter)}; ` +
    `503 seen by the probe for ${p.last503 - p.first503} ms, the first 200 ${p.okAfter - t.back} ms after the return`);

  // The outage, as a client saw it, lasted longer than a lease; once the
  // store was back, the API answered again (a bound, not a measure of speed:
  // it is the handlers finding the store, milliseconds when they do).
  assert.ok(p.first503 && p.last503 - p.first503 > LEASE_MS,
    `the outage must outlast a lease (${LEASE_MS} ms): 503 for ${p.last503 - p.first503} ms`);
  assert.ok(p.okAfter && p.okAfter - t.back < 10_000,
    `the API answered 503 for ${(p.okAfter || Date.now()) - t.back} ms after the store was back`);
  assert.deepEqual(p.other, [], 'the probe saw only 200 and 503');
  // Only 2xx or a JSON 503 (retry) answered the loops.
  // Only 2xx, a JSON 503 (retry) or, for a create dockerd did not start in
  // time, a JSON 504 answered the loops.
  const bad = rec.answers.filter((a) => !(a.status === 201 || a.status === 204 ||
    ([503, 504].includes(a.status) && a.code === a.status && (a.status === 503 || a.op === 'create'))));
  assert.deepEqual(bad, [], 'answers other than 201/204, a JSON 503 or a create\'s JSON 504');

  // Every sandbox that ran before still runs, in the same container, and answers.
  for (const k of kept) {
    const g = await getSb(ws, k.id);
    assert.equal(g.status, 200, g.raw);
    assert.equal(g.body.state, 'running', `${k.id} after the outage: ${g.raw}`);
    const info = await inspect(k.ctr);
    assert.ok(info?.State?.Running, `the container of ${k.id} runs`);
    assert.equal(info.State.StartedAt, k.started, `the container of ${k.id} was not restarted`);
    assert.equal(info.RestartCount, 0);
    const direct = await envdRun(await envdOf(worker.id, k.id), 'cat /tmp/mark');
    assert.equal(direct.stdout, `${k.mark}\n`, `envd of ${k.id}, directly`);
    const via = await eventually(async () => (await gatewayRun(k.id, 'cat /tmp/mark').catch((e) => ({ e: e.message }))),
      { timeout: 15_000, every: 500, what: `${k.id} through the gateway` });
    assert.equal(via.stdout, `${k.mark}\n`, `envd of ${k.id}, through the gateway: ${JSON.stringify(via)}`);
    assert.doesNotMatch(sandboxLog(worker, k.id), /killed/, `workerd killed ${k.id}`);
  }
  const lost = await api('GET', '/v1/sandboxes?state=lost', { key: ws.member });
  assert.equal(lost.status, 200);
  assert.deepEqual(lost.body.sandboxes.map((s) => s.sandbox_id), [], 'no sandbox is lost');

  // workerd was never refused, never enrolled again, and killed only what a
  // client killed or was never told of.
  const log = logOf(worker).slice(log0);
  assert.doesNotMatch(log, /answered 410|answered 403/, 'a heartbeat was refused (declared dead)');
  assert.equal(enrolledAs(worker.files.log).length, 1, 'workerd enrolled again');
  assert.match(log, /heartbeat/, 'workerd saw the outage (its heartbeats failed)');
  assert.equal(worker.wd.proc.exitCode, null, 'workerd still runs');
  const keptIds = new Set(kept.map((k) => k.id));
  const killedByWorkerd = logLines(log).filter((l) => l.msg === 'killed').map((l) => l.sandbox);
  for (const id of killedByWorkerd) {
    assert.ok(!keptIds.has(id), `workerd killed ${id}, which ran before the outage`);
    assert.ok(rec.killed.has(id) || !rec.told.has(id), `workerd killed ${id}, told 201 and never killed by a client`);
  }

  // The API, the worker's containers and the admission count agree; every
  // sandbox a client was told of and did not kill is among them. A create in
  // flight when the store went may have made one nobody was told of: listed,
  // then killed here.
  let last;
  const agreed = await eventually(async () => {
    const listed = await runningIds(ws);
    const ctrs = (await ctrsOf(worker.id)).filter((c) => c.Labels['corral.role'] === 'sandbox' && c.State === 'running')
      .map((c) => c.Labels['corral.sandbox']);
    const active = (await api('GET', '/v1/workspace', { key: ws.member })).body.active_sandboxes;
    last = { listed: listed && [...listed], ctrs, active };
    return listed && listed.size === ctrs.length && ctrs.every((id) => listed.has(id)) && active === listed.size &&
      [...keptIds].every((id) => listed.has(id)) && [...rec.killed].every((id) => !listed.has(id)) && listed;
  }, { timeout: 60_000, every: 500, what: `the API, the worker's containers and the admission count to agree` })
    .catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(last)}`); });
  const orphans = [...agreed].filter((id) => !keptIds.has(id));
  console.log(`# ${name}: after: ${agreed.size} running (${keep} kept, ${orphans.length} made by creates in flight)`);
  for (const d of await Promise.all([...keptIds, ...orphans].map((id) => deleteSb(ws, id)))) assert.equal(d.status, 204, d.raw);
  return { t, rec, probe: p };
}

// The file's workspace (room for the load) and its own workerd, made before
// its tests and ended after them; workerd's log is kept beside the stack's as
// log/<logName> (kept when the suite fails). ctx.A and ctx.w once made.
export function outageWorker(logName) {
  const ctx = {};
  before(async () => {
    ctx.A = newWorkspace();
    await setLimit(ctx.A, 30);
    ctx.w = await stackWorker(ctx.A, { extra: 'cpu_cores = 64\nmemory_mb = 65536\nslots = 16' });
  });
  after(async () => {
    if (ctx.w) {
      copyFileSync(ctx.w.files.log, `${process.env.CORRAL_RUN}/log/${logName}`);
      console.log(`# workerd: exit ${ctx.w.wd.proc.exitCode} signal ${ctx.w.wd.proc.signalCode}`);
    }
    await cleanupWorkers();
  });
  return ctx;
}
