// The control channel's delivery guarantees and its long-poll budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { api, corralctl, eventually, newWorkspace, redis, sleep } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
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
  await until(() => w.received.filter((c) => c.type === 'create').length >= 2, { timeoutMs: 16000, everyMs: 200 });
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
  let answered = 0;
  const polls = ws.map((w) => api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: {} })
    .then((r) => { answered++; return { r, ms: Date.now() - t0 }; }));
  await until(() => answered >= 8, { timeoutMs: 5000 }); // the budget is full: the other 32 are held
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

// w's lease as Redis holds it. A heartbeat that reaches its handler renews it
// first, then (nothing to take) blocks in Redis, never looking at its client:
// a lease other than `before` says a poll sent since is in its handler.
const leaseOf = (w) => redis('HGET', `corral:{ws:${w.workspace}}:worker:${w.id}`, 'lease_until');
const renewedSince = (w, before, what) => eventually(() => leaseOf(w) !== before, { every: 10, what });

// A long-poll whose client is gone: the request is sent, then its connection
// dropped while the handler waits in Redis (what a worker killed with -9 leaves).
async function abandonedPoll(w) {
  const ac = new AbortController();
  const before = leaseOf(w);
  const p = fetch(`${process.env.CORRAL_URL}/v1/worker/heartbeat`, {
    method: 'POST', signal: ac.signal, headers: { ...w.headers(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ acks: [], sandboxes: [], wait: true }),
  }).catch(() => {});
  await renewedSince(w, before, 'the poll to be abandoned to reach its handler');
  ac.abort();
  return p;
}

test('a poll abandoned by a restarted worker takes no command: the next create reaches the new poll at once', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  const first = await w.handshake();
  await abandonedPoll(w); // its handler still blocks for up to poll_ms
  const again = await w.handshake(); // the restarted worker, as itself
  assert.equal(again.previous_data_key, first.data_key, 'the previous data key is handed back');
  assert.ok(again.previous_valid_ms >= 2000, 'valid at least as long as a gateway caches a route');
  const t0 = Date.now();
  const before = leaseOf(w);
  const poll = w.pollOnce();
  await renewedSince(w, before, 'the live poll to reach its handler');
  const create = api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  await poll; // resume poll: answers at once with nothing pending, or with the create
  let got = w.received.find((c) => c.type === 'create');
  if (!got) { await w.pollOnce(); got = w.received.find((c) => c.type === 'create'); }
  assert.ok(got, 'the create reached the live poll, not the abandoned one');
  assert.ok(Date.now() - t0 < 1500, `the create waited ${Date.now() - t0} ms (the abandoned poll took it)`);
  w.start();
  const r = await create;
  assert.equal(r.status, 201, r.raw);
  await w.stop();
});

test('a report-only heartbeat (a death beside the long-poll) records states and takes no command', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  w.start();
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(r.status, 201, r.raw);
  await w.stop();
  const sbid = r.body.sandbox_id;
  const other = api('POST', '/v1/sandboxes', { key: A.member, body: {} }); // queued for the worker
  await until(async () => (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes?.length === 2,
    { timeoutMs: 5000 });
  const rep = await api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: {
    acks: [], wait: false, report_only: true, sandboxes: [{ id: sbid, state: 'exited', reason: 'exit code 137' }] } });
  assert.equal(rep.status, 200, rep.raw);
  assert.deepEqual(rep.body.commands, [], 'a report takes no command');
  const g = await api('GET', `/v1/sandboxes/${sbid}`, { key: A.member });
  assert.equal(g.body.state, 'exited');
  w.start(); // the queued create is still there for the long-poll
  assert.equal((await other).status, 201);
  await w.stop();
});

// A full report (workerd's after a break in contact) lists every sandbox the
// worker holds. A slot younger than a create's wait (create_timeout_ms, 12 s in
// this suite) may be a create the worker has not been given yet: placed while
// the report was on its way, its record not even written (the Redis failover
// in tests/e2b/scaleout.check.mjs caught a create killed so, between the slot
// and the record). Such a slot is spared; an omission older than that is a
// loss: the sandbox has ended.
test('a full report omits a create not yet delivered: spared; an older omission ends the sandbox', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  await w.pollOnce({ full: true });
  const pending = api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  const listed = async () => (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes;
  assert.ok(await until(async () => (await listed()).length === 1, { timeoutMs: 5000 }), 'the create placed');
  const sbid = (await listed())[0].sandbox_id;
  // The create waits in the worker's stream: a full report of nothing
  // arrives first, then the same poll brings the create.
  assert.equal((await w.pollOnce({ full: true })).status, 200);
  assert.deepEqual(w.received.map((c) => [c.type, c.sandbox?.id ?? c.sandbox_id]), [['create', sbid]]);
  await w.pollOnce();
  const r = await pending;
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.sandbox_id, sbid);
  // Gone from the worker without a word (its state lost), then a full report
  // once the slot is older than the create's wait: ended, the slot given back.
  // (It polls meanwhile, within its lease.)
  w.running.delete(sbid);
  w.start();
  // sleep: what is tested: the slot grows older than a create's wait (12 s).
  await sleep(12200);
  await w.stop();
  await w.pollOnce({ full: true });
  const g = await api('GET', `/v1/sandboxes/${sbid}`, { key: A.member });
  assert.equal(g.body.state, 'exited', g.raw);
  assert.match(g.body.reason, /not found on the worker/);
  assert.ok(await until(async () => (await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes === 0,
    { timeoutMs: 5000 }), 'the slot and the admission given back');
});

// workerd's long-poll runs on a thread of its own (decision 0084), beside the
// main thread's short heartbeats. A stray container the main thread reports
// gets a kill queued on the stream, which the long-poll in flight may take;
// a create that poll brought before would then be applied ahead of it and
// refused for the slot the stray holds (seen in tests/workerd/restart under
// load). So the report's own answer carries the kill, first, exactly once.
test('a stray reported beside a long-poll gets its kill in the report\'s own answer, first', async () => {
  const A = newWorkspace();
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await w.handshake();
  await w.pollOnce(); // the resume poll, answered at once
  const key = `corral:{ws:${w.workspace}}:worker:${w.id}`;
  for (let round = 0; round < 3; round++) {
    const seq = redis('HGET', key, 'poll_seq');
    const poll = api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: { acks: [], sandboxes: [], wait: true } });
    await eventually(() => redis('HGET', key, 'poll_seq') !== seq, { every: 5, what: 'the long-poll waiting' });
    const stray = randomBytes(10).toString('hex');
    const beat = await api('POST', '/v1/worker/heartbeat', { headers: w.headers(),
      body: { acks: [], wait: false, sandboxes: [{ id: stray, state: 'running' }] } });
    assert.equal(beat.status, 200, beat.raw);
    const kills = beat.body.commands.filter((c) => c.type === 'kill' && c.sandbox_id === stray);
    assert.equal(kills.length, 1, `round ${round}: ${beat.raw}`);
    assert.equal(beat.body.commands[0], kills[0], 'ahead of anything else in the answer');
    const polled = await poll; // the stream's own kill, if this poll took it, acknowledged as any
    assert.equal(polled.status, 200, polled.raw);
    const acks = [...beat.body.commands, ...polled.body.commands].map((c) => c.id).filter(Boolean);
    await api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: { acks, sandboxes: [], wait: false } });
  }
});
