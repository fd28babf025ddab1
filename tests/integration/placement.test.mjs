// The tenant rule and capabilities, driven through the real worker routes.
// A sandbox of A lands on A's worker or the unscoped fleet, never on B's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, eventually } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
import { TestWorker, enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
const worker = (ws, opts) => enrolWorker(workers, ws, opts);
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

async function create(ws, body = {}) {
  return api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', ...body } });
}

test('A->A: lands on A\'s own worker; the representation carries the tier', async () => {
  const A = newWorkspace();
  const wa = await worker(A);
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.state, 'running');
  assert.equal(r.body.worker_id, wa.id);
  assert.equal(r.body.isolation, 'CONTAINER');
  assert.ok(wa.running.has(r.body.sandbox_id));
  const got = await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member });
  assert.equal(got.body.isolation, 'CONTAINER');
});

test('A->B never: with only B\'s worker, A\'s create fails and B\'s worker receives nothing', async () => {
  const A = newWorkspace();
  const B = newWorkspace();
  const wb = await worker(B);
  const r = await create(A);
  assertError(r, 503, /no worker/);
  assert.equal(wb.received.length, 0);
  assert.equal((await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length, 0);
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 0);
});

test('A->"": the unscoped fleet takes A\'s sandboxes and B\'s, each stays with its tenant', async () => {
  const A = newWorkspace();
  const B = newWorkspace();
  const fleet = await worker(null, { slots: 50 });
  const wb = await worker(B, { slots: 50 });
  const ra = await create(A);
  assert.equal(ra.status, 201, ra.raw);
  assert.notEqual(ra.body.worker_id, wb.id);
  const fleetWorker = workers.find((w) => w.id === ra.body.worker_id);
  assert.ok(fleetWorker, 'placed on a worker this test knows');
  assert.equal(fleetWorker.workspace, '', 'placed on the unscoped fleet');
  // A cannot see B's sandbox, by id: byte-for-byte a missing one.
  const rb = await create(B);
  assert.equal(rb.status, 201);
  const foreign = await api('GET', `/v1/sandboxes/${rb.body.sandbox_id}`, { key: A.member });
  const missing = await api('GET', '/v1/sandboxes/00000000000000000000', { key: A.member });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.raw, missing.raw);
  assert.equal((await api('DELETE', `/v1/sandboxes/${rb.body.sandbox_id}`, { key: A.owner })).raw, missing.raw);
  assert.equal((await api('GET', `/v1/sandboxes/${rb.body.sandbox_id}`, { key: B.member })).status, 200);
  // Retire the fleet worker so that the tests below see only their own workers.
  await fleet.stop();
  await eventually(async () => (await api('GET', '/v1/workers', { key: A.member })).body.fleet.workers === 0,
    { what: 'the fleet worker to be declared dead' });
});


test('egress policy without an egress-capable eligible worker: 409, nothing created', async () => {
  const A = newWorkspace();
  const wa = await worker(A, { egress: false });
  const r = await create(A, { allowed_domains: ['example.com'] });
  assertError(r, 409, /worker capability unavailable/);
  assert.equal(wa.received.length, 0);
  const wa2 = await worker(A, { egress: true });
  const ok = await create(A, { allowed_domains: ['example.com'] });
  assert.equal(ok.status, 201, ok.raw);
  assert.equal(ok.body.worker_id, wa2.id);
});

test('require_isolation no eligible worker meets: 409, nothing created; met: lands on that runtime', async () => {
  const A = newWorkspace();
  const plain = await worker(A);
  const r = await create(A, { require_isolation: 'GVISOR' });
  assertError(r, 409, /require_isolation: no eligible worker offers isolation GVISOR/);
  assert.equal(plain.received.length, 0);
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 0);
  // An unverified runtime (UNKNOWN) satisfies no requirement, not even NONE,
  // but takes sandboxes that ask for none.
  const C = newWorkspace();
  await worker(C, { runtimes: [{ name: 'mystery', tier: 'UNKNOWN' }] });
  assertError(await create(C, { require_isolation: 'NONE' }), 409);
  const any = await create(C);
  assert.equal(any.status, 201, any.raw);
  assert.equal(any.body.isolation, 'UNKNOWN');
  const g = await worker(A, { runtimes: [{ name: 'runc', tier: 'CONTAINER' }, { name: 'runsc', tier: 'GVISOR' }] });
  const ok = await create(A, { require_isolation: 'GVISOR' });
  assert.equal(ok.status, 201, ok.raw);
  assert.equal(ok.body.worker_id, g.id);
  assert.equal(ok.body.isolation, 'GVISOR');
  assert.equal(ok.body.runtime, 'runsc');
  assert.equal(g.running.get(ok.body.sandbox_id).runtime, 'runsc');
});

test('least loaded first: creates spread over two equal workers', async () => {
  const A = newWorkspace();
  const w1 = await worker(A, { slots: 4 });
  const w2 = await worker(A, { slots: 4 });
  for (let i = 0; i < 4; i++) assert.equal((await create(A)).status, 201);
  assert.equal(w1.running.size, 2);
  assert.equal(w2.running.size, 2);
});

test('a worker that fails a create: 502 with its reason, nothing half-created', async () => {
  const A = newWorkspace();
  const w = await worker(A, { failCreates: true });
  const r = await create(A);
  assertError(r, 502, /test worker refuses/);
  assert.equal((await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length, 0);
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 0);
  const list = await api('GET', '/v1/workers', { key: A.member });
  assert.equal(list.body.workers.find((x) => x.worker_id === w.id).used_slots, 0);
});

test('redelivery: a worker that stops heartbeating loses its pending create to an eligible worker, never to another tenant', async () => {
  const A = newWorkspace();
  const B = newWorkspace();
  // A silent worker of A takes the create but never answers.
  const silent = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { slots: 1 });
  await silent.handshake();
  const wb = await worker(B, { slots: 10 });
  const creating = create(A, {});
  // Then A gets a second, live worker: after the silent one's lease runs out
  // (4 s in the test profile) the create must move there.
  // (the create is placed, on the silent worker, once its sandbox is listed)
  await until(async () => (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes?.length === 1,
    { timeoutMs: 5000 });
  const wa = await worker(A, { slots: 10 });
  const r = await creating;
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.worker_id, wa.id);
  assert.equal(wb.received.length, 0, "B's worker never saw A's create");
  assert.equal((await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length, 1);
});

test('redelivery with no eligible worker left: the create fails with a clear error, never lands on B', async () => {
  const A = newWorkspace();
  const B = newWorkspace();
  const silent = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await silent.handshake();
  // Keep the fleet out of it: fill nothing, just make A's only other option B.
  const wb = await worker(B);
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'base', require_isolation: 'CONTAINER', env: { ONLY: 'A' } } });
  assert.ok([201, 502, 503, 504].includes(r.status), r.raw);
  if (r.status === 201) assert.notEqual(r.body.worker_id, wb.id);
  assert.ok(!wb.received.some((c) => c.type === 'create'), "B's worker got A's create");
});

test('a running sandbox of a dead worker becomes lost and frees its admission place', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  w.start();
  const r = await create(A);
  assert.equal(r.status, 201);
  await w.stop();
  const lost = await eventually(async () => {
    const g = await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member });
    return g.body.state === 'lost' && g.body;
  }, { what: 'state lost' });
  assert.equal(lost.reason, 'worker lost');
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 0);
  // The dead worker is told so, and may handshake again as itself.
  assert.equal((await api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: {} })).status, 410);
  await w.handshake();
  assert.equal((await api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: { resume: true } })).status, 200);
});

// Test worker w tells ready warm sandboxes of base in its heartbeats, and
// GET /v1/workers shows it.
async function tellWarm(ws, w, ready) {
  w.warm = [{ template: 'base', runtime: 'runc', size: 2, ready }];
  await eventually(async () => {
    const v = (await api('GET', '/v1/workers', { key: ws.member })).body.workers.find((x) => x.worker_id === w.id);
    return v?.warm_pools?.[0]?.ready === ready;
  }, { what: `worker ${w.id} to tell ${ready} warm sandbox(es)` });
}

// Decision 0082: a create a warm sandbox can serve goes to a worker whose last
// heartbeat said it holds one of the template and runtime, even a more loaded
// one; a create no warm sandbox can serve (an egress policy), and any create
// once that pool is empty, go to the least loaded.
test('placement prefers a worker holding a warm sandbox of the template; policy creates and an empty pool go by load', async () => {
  const A = newWorkspace();
  const ww = await worker(A, { egress: true, warm: [{ template: 'base', runtime: 'runc', size: 2, ready: 1 }] });
  for (let i = 0; i < 3; i++) assert.equal((await create(A)).body.worker_id, ww.id, 'only ww is there yet');
  const wa = await worker(A, { egress: true });
  const warmCreate = await create(A);
  assert.equal(warmCreate.status, 201, warmCreate.raw);
  assert.equal(warmCreate.body.worker_id, ww.id, 'the worker with a warm sandbox, though 3 of its 10 slots are used and none of wa\'s');
  const policy = await create(A, { allowed_domains: ['example.com'] });
  assert.equal(policy.status, 201, policy.raw);
  assert.equal(policy.body.worker_id, wa.id, 'a policy create is made cold: the least loaded worker');
  await tellWarm(A, ww, 0);
  const cold = await create(A);
  assert.equal(cold.status, 201, cold.raw);
  assert.equal(cold.body.worker_id, wa.id, 'with the pool empty: the least loaded worker');
});

// Decision 0082: a warm sandbox of the unscoped fleet does not draw a create
// away from the workspace's own idle worker (an agent-mode laptop, say); the
// own pool's warm one wins over a less loaded fleet worker.
test('a warm sandbox of the fleet never draws a create away from the workspace\'s own workers', async () => {
  const A = newWorkspace();
  const fleet = await worker(null, { slots: 50, warm: [{ template: 'base', runtime: 'runc', size: 2, ready: 2 }] });
  try {
    const own = await worker(A, { slots: 10 });
    const r = await create(A);
    assert.equal(r.status, 201, r.raw);
    assert.equal(r.body.worker_id, own.id, 'its own idle worker, not the fleet\'s warm sandbox');
    const other = newWorkspace(); // the control: with no worker of its own, the fleet takes it
    const f = await create(other);
    assert.equal(f.status, 201, f.raw);
    assert.equal(f.body.worker_id, fleet.id);
    await tellWarm(A, own, 1);
    const warmOwn = await create(A);
    assert.equal(warmOwn.body.worker_id, own.id, 'its own warm sandbox, though 1 of its 10 slots is used and 1 of the fleet\'s 50');
  } finally {
    await fleet.stop();
    await eventually(async () => (await api('GET', '/v1/workers', { key: A.member })).body.fleet.workers === 0,
      { what: 'the fleet worker to be declared dead' });
  }
});
