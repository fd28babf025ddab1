// Faults: a handler process killed mid-create, Redis stopped and restarted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, setLimit, stack, sleep, eventually, redisPortOf, redisPorts } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

test('kill -9 of a corral-api process mid-creates: no leaked reservation, no sandbox in two places, the other keeps serving', async () => {
  const A = newWorkspace();
  await setLimit(A, 40);
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { slots: 100 });
  await w.handshake();
  workers.push(w.start());
  let sent = 0;
  // sleep: the creates are spread over 600 ms, so that the kill falls among them.
  const creates = Array.from({ length: 30 }, (_, i) => sleep(i * 20).then(() => {
    sent++;
    return api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  }));
  await eventually(() => sent >= 8, { every: 10, what: 'the first creates sent' });
  stack('kill-api', '1');
  const results = await Promise.all(creates);
  stack('start-api', '1');
  // The survivor served while the other was dead.
  assert.ok(results.some((r) => r.status === 201), 'no create succeeded');
  assert.ok(results.every((r) => [201, 502, 503].includes(r.status)), results.map((r) => r.status).join(','));
  // Eventually: every admitted place belongs to a sandbox that exists exactly once.
  let seen;
  await eventually(async () => {
    const ws = (await api('GET', '/v1/workspace', { key: A.member })).body;
    const list = (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes;
    seen = { active: ws.active_sandboxes, states: list.map((s) => s.state) };
    return ws.active_sandboxes === list.filter((s) => s.state === 'running').length && list.every((s) => s.state === 'running');
  }, { timeout: 20000, what: 'reservations to match running sandboxes' }).catch((e) => {
    throw new Error(`${e.message}; last seen ${JSON.stringify(seen)}`);
  });
  const list = (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes;
  const ids = list.map((s) => s.sandbox_id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.ok(w.running.has(id), `sandbox ${id} is not on its worker`);
  const wk = (await api('GET', '/v1/workers', { key: A.member })).body.workers[0];
  await eventually(async () => (await api('GET', '/v1/workers', { key: A.member })).body.workers[0].used_slots === ids.length,
    { timeout: 40000, what: `worker slots (${wk.used_slots}) to match ${ids.length} sandboxes` });
});

const running = async (ws) => (await api('GET', '/v1/sandboxes', { key: ws.member })).body.sandboxes
  .filter((x) => x.state === 'running').map((x) => x.sandbox_id).sort();
const active = async (ws) => (await api('GET', '/v1/workspace', { key: ws.member })).body.active_sandboxes;

// Both handler processes die (nginx may have sent every create to one of them:
// it avoids a process that failed recently), so no client hears of any of
// these sandboxes, which the worker creates all the same once it polls.
test('kill -9 of the handlers during 20 concurrent creates: what nobody was told about is killed within seconds', async () => {
  const A = newWorkspace();
  await setLimit(A, 40);
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { slots: 100 });
  await w.handshake(); // polls only later: every create is still waiting when the handlers die
  const creates = Array.from({ length: 20 }, () => api('POST', '/v1/sandboxes', { key: A.member, body: {} }));
  await until(async () => await active(A) === 20, { timeoutMs: 5000 }); // all 20 admitted, waiting
  stack('kill-api', '1');
  stack('kill-api', '2');
  const results = await Promise.all(creates);
  stack('start-api', '1');
  stack('start-api', '2');
  workers.push(w.start());
  for (const r of results) {
    assert.equal(r.status, 503, r.raw);
    assert.equal(r.body.code, 503, `the status nginx sends matches the body: ${r.raw}`);
  }
  await eventually(() => w.running.size === 20, { what: 'the worker created all 20' });
  await eventually(async () => (await running(A)).length === 0 && await active(A) === 0,
    { timeout: 8000, what: 'no abandoned create still running or counted' });
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(r.status, 201, r.raw);
  assert.deepEqual(await running(A), [r.body.sandbox_id]);
});

test('Idempotency-Key: a retry returns the same sandbox, even after the handler serving the first died', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  const key = `retry-${Date.now()}`;
  const first = api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { n: '1' } }, headers: { 'Idempotency-Key': key } });
  await until(async () => await active(A) === 1, { timeoutMs: 5000 }); // admitted, waiting for its worker
  stack('kill-api', '1');
  stack('kill-api', '2');
  const lost = await first; // both handlers are gone: the client never hears of its sandbox
  assert.equal(lost.status, 503, lost.raw);
  stack('start-api', '1');
  stack('start-api', '2');
  workers.push(w.start());
  const again = await eventually(async () => {
    const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { n: '1' } }, headers: { 'Idempotency-Key': key } });
    return r.status !== 503 && r;
  }, { timeout: 15000, what: 'the retry answered' });
  assert.equal(again.status, 201, again.raw);
  assert.match(again.body.envd_access_token, /^[0-9a-f]{64}$/);
  const once = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { n: '1' } }, headers: { 'Idempotency-Key': key } });
  assert.equal(once.status, 201, once.raw);
  assert.equal(once.body.sandbox_id, again.body.sandbox_id, 'the same sandbox again');
  assert.deepEqual(await running(A), [again.body.sandbox_id], 'one sandbox, not one per attempt');
  assert.equal(w.running.size, 1);
  const other = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { n: '2' } }, headers: { 'Idempotency-Key': key } });
  assertError(other, 409, /Idempotency-Key: already used with a different request/);
  for (const bad of ['has space', 'x'.repeat(256)]) {
    const r = await api('POST', '/v1/sandboxes', { key: A.member, body: {}, headers: { 'Idempotency-Key': bad } });
    assertError(r, 400, /Idempotency-Key/);
  }
  assert.deepEqual(await running(A), [again.body.sandbox_id], 'refused requests created nothing');
  // Another tenant sending the same key gets a sandbox of its own, never A's.
  const B = newWorkspace();
  const wb = new TestWorker(corralctl('join-token', 'create', '--workspace', B.id).token);
  await wb.handshake();
  workers.push(wb.start());
  const theirs = await api('POST', '/v1/sandboxes', { key: B.member, body: { metadata: { n: '1' } }, headers: { 'Idempotency-Key': key } });
  assert.equal(theirs.status, 201, theirs.raw);
  assert.notEqual(theirs.body.sandbox_id, again.body.sandbox_id);
  assert.equal((await api('GET', `/v1/sandboxes/${again.body.sandbox_id}`, { key: B.member })).status, 404);
  // Once the sandbox has ended, the key names it once (409), then is free for a new attempt.
  assert.equal((await api('DELETE', `/v1/sandboxes/${again.body.sandbox_id}`, { key: A.member })).status, 204);
  const ended = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { n: '1' } }, headers: { 'Idempotency-Key': key } });
  assertError(ended, 409, new RegExp(`Idempotency-Key: its sandbox ${again.body.sandbox_id} did not start or has ended`));
  const fresh = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { n: '1' } }, headers: { 'Idempotency-Key': key } });
  assert.equal(fresh.status, 201, fresh.raw);
  assert.notEqual(fresh.body.sandbox_id, again.body.sandbox_id);
});

// On a cluster, `stop-redis` stops its first node: a workspace whose slot it
// serves, with a started worker of its own.
async function workspaceOnFirstNode() {
  let A = newWorkspace();
  for (let i = 0; i < 30 && redisPortOf(`corral:{ws:${A.id}}:sbs`) !== redisPorts()[0]; i++) A = newWorkspace();
  assert.equal(redisPortOf(`corral:{ws:${A.id}}:sbs`), redisPorts()[0], 'a workspace on the first node');
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  workers.push(w.start());
  return { A, w };
}

test('Redis stopped: 503 promptly; restarted: full service with nothing lost (AOF)', async () => {
  const { A, w } = await workspaceOnFirstNode();
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { keep: 'me' } } });
  assert.equal(r.status, 201);
  stack('stop-redis');
  const t0 = Date.now();
  const down = await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member });
  assert.equal(down.status, 503);
  assert.equal(down.body.code, 503);
  assert.ok(Date.now() - t0 < 3000, 'the 503 was not prompt');
  assert.equal((await api('POST', '/v1/sandboxes', { key: A.member, body: {} })).status, 503);
  stack('start-redis');
  const back = await eventually(async () => {
    const g = await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member });
    return g.status === 200 && g;
  }, { what: 'service after Redis restart' });
  assert.equal(back.body.metadata.keep, 'me');
  assert.equal(back.body.state, 'running');
  const again = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(again.status, 201, again.raw);
});

// Issue 34: liveness is judged only on time the store could be reached. Redis
// is down for longer than a worker's lease, and the worker (as a real one in
// backoff) heartbeats only 2 s after it is back: it is still enrolled, its
// sandbox still runs. Before, corral-sched declared it dead the moment Redis
// answered again, since its lease had run out while nobody could renew it.
test('Redis down longer than a lease: no worker declared dead, no sandbox lost', async () => {
  const { A, w } = await workspaceOnFirstNode();
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(r.status, 201, r.raw);
  const lease = Number(process.env.CORRAL_LEASE_MS || 5000);
  await w.stop();
  stack('stop-redis');
  // sleep: what is tested: Redis down for longer than a lease.
  await sleep(lease + 3000);
  stack('start-redis');
  await eventually(async () => (await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member })).status === 200,
    { what: 'service after Redis restart' });
  // sleep: the worker, in backoff as a real one, heartbeats only 2 s after Redis is back.
  await sleep(2000);
  const beat = await w.pollOnce();
  assert.equal(beat.status, 200, `the worker's first heartbeat after the outage: ${beat.raw || beat.status}`);
  w.start();
  // sleep: a window, not a condition: past any grace, its heartbeats must keep it.
  await sleep(lease + 1000);
  const g = await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member });
  assert.equal(g.body.state, 'running', g.raw);
  const mine = (await api('GET', '/v1/workers', { key: A.member })).body.workers;
  assert.ok(mine.some((x) => (x.id || x.worker_id) === w.id), 'the worker is still enrolled');
});
