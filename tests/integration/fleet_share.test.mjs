// Fleet fairness (decision 0034): on the unscoped fleet a workspace holds at
// most fleet_share % of the live workers' slots (the test profile renders 50);
// its own workers are not limited by it. The operator's ceiling on
// max_concurrent_sandboxes is ceilings.test.mjs's (decision 0063).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, assertError, newWorkspace, setLimit, eventually, RUN } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const conf = Object.fromEntries(readFileSync(`${RUN}/corral.conf`, 'utf8').split('\n')
  .map((l) => l.split(/\s*=\s*/)).filter((kv) => kv.length === 2));
const SHARE = Number(conf.fleet_share);

const workers = [];
const worker = (ws, opts) => enrolWorker(workers, ws, opts);

const create = (ws) => api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', timeout: 600 } });
const fleetWorkers = async (ws) => (await api('GET', '/v1/workers', { key: ws.member })).body.fleet.workers;

// The fleet is the stack's: start and end with none of it alive, so the share
// is of these tests' workers only, and tests after these find it empty.
async function retireFleet(ws) {
  await Promise.all(workers.filter((w) => w.workspace === '' && !w.stopped).map((w) => w.stop()));
  await eventually(async () => (await fleetWorkers(ws)) === 0, { what: 'the fleet to be empty' });
}

before(() => {
  // The stack must be configured for a share, or these tests would prove nothing.
  assert.ok(SHARE >= 1 && SHARE < 100, `fleet_share in ${RUN}/corral.conf is ${conf.fleet_share}`);
});
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

test('A gets its share of the fleet, then a clear 429 that creates nothing; B still gets its share', async () => {
  const A = newWorkspace();
  const B = newWorkspace();
  await retireFleet(A);
  await setLimit(A, 100);
  await setLimit(B, 100);
  const f1 = await worker(null, { slots: 4 });
  const f2 = await worker(null, { slots: 4 });
  const share = Math.max(1, Math.floor((8 * SHARE) / 100));
  for (let i = 0; i < share; i++) {
    const r = await create(A);
    assert.equal(r.status, 201, r.raw);
  }
  const refused = await create(A);
  assertError(refused, 429, new RegExp(`fleet_share: this workspace holds ${share} sandboxes on the shared fleet, its share of ${share} \\(fleet_share = ${SHARE}% of 8 slots\\)`));
  // The E2B surface passes the same scheduler: the SDK reads 429 as "try again later".
  assertError(await api('POST', '/sandboxes', { key: A.member, body: { templateID: 'base' } }), 429, /fleet_share/);
  const held = (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes;
  assert.equal(held.length, share, 'the refused create left no record');
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, share,
    'its admission reservation was given back');
  assert.equal(f1.running.size + f2.running.size, share, 'no worker received the refused create');
  // The fleet still has room, and it is B's.
  for (let i = 0; i < share; i++) {
    const r = await create(B);
    assert.equal(r.status, 201, `B's create ${i + 1} of ${share}: ${r.raw}`);
  }
  assertError(await create(B), 429, /fleet_share/);
  // A sandbox of A ends: A may take one more, and only one.
  assert.equal((await api('DELETE', `/v1/sandboxes/${held[0].sandbox_id}`, { key: A.member })).status, 204);
  assert.equal((await create(A)).status, 201);
  assertError(await create(A), 429, /fleet_share/);
  await retireFleet(A);
});

test('concurrent creates never overshoot the share', async () => {
  const A = newWorkspace();
  await retireFleet(A);
  await setLimit(A, 100); // above the 60 creates, at the test stack's ceiling
  await worker(null, { slots: 20 });
  await worker(null, { slots: 20 });
  const share = Math.max(1, Math.floor((40 * SHARE) / 100));
  const rs = await Promise.all(Array.from({ length: 60 }, () => create(A)));
  const ok = rs.filter((r) => r.status === 201);
  const other = rs.filter((r) => r.status !== 201 && r.status !== 429);
  assert.deepEqual(other.map((r) => r.raw), [], 'every refusal is the share');
  assert.equal(ok.length, share, `admitted ${ok.length}, share ${share}`);
  assert.equal((await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length, share);
  const used = (await api('GET', '/v1/workers', { key: A.member })).body.fleet.free_slots;
  assert.equal(used, 40 - share, 'slots held are exactly the admitted sandboxes');
  await retireFleet(A);
});

test("A's own workers are not limited by the share; the fleet still is", async () => {
  const A = newWorkspace();
  await retireFleet(A);
  await setLimit(A, 100);
  const fleet = await worker(null, { slots: 2 });
  const own = await worker(A, { slots: 10 });
  // Fill A's own worker first: placement prefers the less loaded, so go by counts.
  const rs = [];
  for (let i = 0; i < 11; i++) rs.push(await create(A));
  assert.deepEqual(rs.map((r) => r.status), Array(11).fill(201), rs.map((r) => r.raw).join('\n'));
  const onFleet = rs.filter((r) => r.body.worker_id === fleet.id).length;
  const onOwn = rs.filter((r) => r.body.worker_id === own.id).length;
  assert.equal(onOwn, 10, 'all ten slots of its own worker are used: the share does not apply there');
  assert.equal(onFleet, 1, 'one on the fleet: its share of 2 slots');
  assertError(await create(A), 429, /fleet_share.*its share of 1 /);
  await retireFleet(A);
});
