// The control channel's delivery guarantees and its long-poll budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, corralctl, newWorkspace, sleep } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

// A worker that applies commands but never acknowledges them, and a sandbox
// created on it.
async function createOnForgetfulWorker() {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { autoAck: false });
  await w.handshake();
  w.start();
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(r.status, 201);
  return { w, r };
}

test('an unacknowledged command is delivered again after the worker re-handshakes as itself', async () => {
  const { w, r } = await createOnForgetfulWorker();
  await w.stop();
  const first = w.received.filter((c) => c.type === 'create');
  assert.equal(first.length, 1);
  // "Crash": forget everything but identity, handshake again, resume.
  const again = new TestWorker(w.joinToken, { autoAck: true });
  again.id = w.id;
  again.secret = w.secret;
  await again.handshake();
  assert.equal(again.id, w.id, 'same worker identity');
  await again.pollOnce();
  const redelivered = again.received.filter((c) => c.type === 'create');
  assert.equal(redelivered.length, 1);
  assert.equal(redelivered[0].id, first[0].id);
  assert.equal(redelivered[0].sandbox.id, r.body.sandbox_id);
  // Acknowledged now: a further resume delivers nothing.
  await again.pollOnce();
  const third = new TestWorker(w.joinToken);
  Object.assign(third, { id: w.id, secret: w.secret });
  await third.handshake();
  third.resume = true;
  const p = await api('POST', '/v1/worker/heartbeat', { headers: third.headers(), body: { resume: true } });
  assert.equal(p.status, 200);
  assert.equal(p.body.commands.length, 0);
});

test('an unacknowledged command is delivered again to a later poll served by any handler after 10 s', async () => {
  const { w, r } = await createOnForgetfulWorker();
  const end = Date.now() + 16000;
  while (Date.now() < end && w.received.filter((c) => c.type === 'create').length < 2) await sleep(200);
  await w.stop();
  const creates = w.received.filter((c) => c.type === 'create');
  assert.ok(creates.length >= 2, 'not delivered again');
  assert.equal(creates[0].id, creates[1].id);
  assert.equal(w.running.size, 1, 'applied once (idempotent by sandbox id)');
});

test('long-polls cannot starve the API: over the budget a poll answers at once, other requests stay fast', async () => {
  const A = newWorkspace();
  const jt = corralctl('join-token', 'create', '--workspace', A.id).token;
  // 2 processes x longpoll_max 16 = 32 blocking polls at most; open 40.
  const ws = [];
  for (let i = 0; i < 40; i++) { const w = new TestWorker(jt); await w.handshake(); ws.push(w); }
  const t0 = Date.now();
  const polls = ws.map((w) => api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: {} }).then((r) => ({ r, ms: Date.now() - t0 })));
  await sleep(300);
  const s = Date.now();
  for (let i = 0; i < 20; i++) assert.equal((await api('GET', '/v1/workspace', { key: A.member })).status, 200);
  const apiMs = (Date.now() - s) / 20;
  const done = await Promise.all(polls);
  const immediate = done.filter(({ r }) => r.body.retry_after_ms);
  assert.ok(done.every(({ r }) => r.status === 200));
  assert.ok(immediate.length >= 8, `${immediate.length} polls over the budget answered at once`);
  assert.ok(immediate.every(({ ms }) => ms < 1500), 'over-budget polls were not held');
  assert.ok(apiMs < 500, `API requests took ${apiMs} ms each while polls were held`);
});
