// The admission gate: a workspace's concurrent sandbox limit holds across
// handler processes, and a reservation that never completes is released.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, setLimit, eventually, redis } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

async function worker(ws, opts) {
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', ws.id).token, opts);
  await w.handshake();
  workers.push(w.start());
  return w;
}

test('200 concurrent creates against a limit of 5: exactly 5 admitted, the rest 403; back to 0 after deletes', async () => {
  const A = newWorkspace();
  await setLimit(A, 5);
  await worker(A, { slots: 100 });
  await worker(A, { slots: 100 });
  const results = await Promise.all(Array.from({ length: 200 }, () =>
    api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'base', timeout: 600 } })));
  const created = results.filter((r) => r.status === 201);
  const refused = results.filter((r) => r.status === 403);
  // A handler takes at most create_wait_max creates at once (corral_conf.c,
  // so that heartbeats always find a thread): past it, a create is shed with
  // "503, retry" before admission, which 200 at once on a loaded machine may
  // reach. Shed or refused, none of the others is admitted.
  const shed = results.filter((r) => r.status === 503 && /too many creates in flight/.test(r.body.message));
  const other = results.filter((r) => ![201, 403].includes(r.status) && !shed.includes(r));
  assert.deepEqual(other.map((r) => r.status + r.raw), [], 'answers other than 201, 403 and 503 shed');
  assert.equal(created.length, 5, `admitted ${created.length}`);
  assert.equal(refused.length + shed.length, 195);
  assert.ok(refused.length >= 100, `${refused.length} refused by admission, ${shed.length} shed`);
  assertError(refused[0], 403, /limit of 5 concurrent sandboxes/);
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 5);
  for (const c of created) {
    assert.equal((await api('DELETE', `/v1/sandboxes/${c.body.sandbox_id}`, { key: A.member })).status, 204);
  }
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 0);
  assert.equal((await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length, 0);
  const list = await api('GET', '/v1/workers', { key: A.member });
  assert.deepEqual(list.body.workers.map((w) => w.used_slots), [0, 0]);
});

test('a create no worker starts: 5xx, its reservation and slot are released', async () => {
  const A = newWorkspace();
  await setLimit(A, 1);
  // Enrolled but never polls: takes the create and never reports.
  const mute = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await mute.handshake();
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'base' } });
  assert.ok([502, 503, 504].includes(r.status), r.raw);
  assert.equal(r.body.code, r.status);
  await eventually(async () => (await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes === 0,
    { what: 'reservation released' });
  assert.equal((await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length, 0);
});

test('an abandoned reservation (no handler finished the create) lapses by itself', async () => {
  const A = newWorkspace();
  await setLimit(A, 1);
  // What a handler killed right after admission leaves behind: a reservation
  // with a deadline and nothing else.
  redis('ZADD', `corral:{ws:${A.id}}:active`, String(Date.now() + 1500), 'ffffffffffffffffffff');
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes, 1);
  await worker(A);
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, body: {} }), 403);
  await eventually(async () => (await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes === 0,
    { what: 'the reservation to lapse' });
  assert.equal((await api('POST', '/v1/sandboxes', { key: A.member, body: {} })).status, 201);
});

test('sandbox timeout: corral-sched kills it and tells its worker', async () => {
  const A = newWorkspace();
  const w = await worker(A);
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { timeout: 1 } });
  assert.equal(r.status, 201);
  await eventually(async () => (await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member })).status === 404,
    { what: 'timeout kill' });
  await eventually(() => !w.running.has(r.body.sandbox_id), { what: 'kill delivered' });
  assert.ok(w.received.some((c) => c.type === 'kill' && c.sandbox_id === r.body.sandbox_id));
});

test('list filters by state and metadata', async () => {
  const A = newWorkspace();
  await worker(A);
  const a = await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { team: 'red', n: '1' } } });
  await api('POST', '/v1/sandboxes', { key: A.member, body: { metadata: { team: 'blue' } } });
  const q = encodeURIComponent('team=red&n=1');
  const l = await api('GET', `/v1/sandboxes?metadata=${q}&state=running`, { key: A.member });
  assert.deepEqual(l.body.sandboxes.map((s) => s.sandbox_id), [a.body.sandbox_id]);
  assert.equal((await api('GET', '/v1/sandboxes?state=sleeping', { key: A.member })).status, 400);
  assert.deepEqual((await api('GET', '/v1/sandboxes?state=paused', { key: A.member })).body.sandboxes, []);
  assert.ok(!JSON.stringify(l.body).includes('"env"'), 'env vars are never shown');
});
