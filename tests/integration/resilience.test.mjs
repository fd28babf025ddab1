// Faults: a handler process killed mid-create, Redis stopped and restarted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, corralctl, newWorkspace, setLimit, stack, sleep, eventually } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

test('kill -9 of a corral-api process mid-creates: no leaked reservation, no sandbox in two places, the other keeps serving', async () => {
  const A = newWorkspace();
  await setLimit(A, 40);
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { slots: 100 });
  await w.handshake();
  workers.push(w.start());
  const creates = Array.from({ length: 30 }, (_, i) => sleep(i * 20).then(() =>
    api('POST', '/v1/sandboxes', { key: A.member, body: {} })));
  await sleep(150);
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

test('Redis stopped: 503 promptly; restarted: full service with nothing lost (AOF)', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  workers.push(w.start());
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
