// No sandbox credential in Redis (issue 25, decision 0067): an attacker with
// a copy of Redis's data (a backup, a replica, its AOF or RDB files, an
// operator's redis-cli) must not find any sandbox's envd access token or
// traffic token there. Sandboxes are made in every way that hands a worker a
// token (native and E2B creates, with an Idempotency-Key, E2B resume and
// connect, a create from a snapshot, a fork, a redelivery after a restart, a
// placement again after the worker died); then every key of every node, and
// every file of their data dirs, is searched for each token the API answered.
// The worker still receives, in its create, the token envd needs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { api, corralctl, eventually, newWorkspace, redis, redisPorts, setLimit, RUN } from '../lib/corral.mjs';
import { adminBatch, aofText, dataDirText, everyValue } from '../lib/redis_dump.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

// Templates only this file's workers have: no other file's worker takes these.
const TEMPLATE = 'tokentest';
const MOVED = 'tokenmove';
const gateway = readFileSync(`${RUN}/gateway-secret`, 'utf8').trim();
const token = (kind, id) => createHmac('sha256', gateway).update(`${kind}:${id}`).digest('hex');

let A;
const workers = [];
const made = new Map(); // sandbox id -> the tokens the API answered for it

async function worker(templates, { start = true, ...opts } = {}) {
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { templates, ...opts });
  await w.handshake();
  workers.push(w);
  if (start) w.start();
  return w;
}

before(async () => {
  A = newWorkspace();
  await setLimit(A, 30);
});
after(async () => { for (const w of workers) if (!w.stopped) await w.stop(); });

const e2b = (m, p, body, headers = {}) => api(m, p, { body, headers: { 'X-API-KEY': A.member, ...headers } });
const native = (m, p, body, headers = {}) => api(m, p, { key: A.member, body, headers });

// Records what the API answered (native or E2B spelling) and checks it is
// the derived token; returns the sandbox id.
function keep(body) {
  const id = body.sandbox_id || body.sandboxID;
  const envd = body.envd_access_token || body.envdAccessToken;
  const traffic = body.traffic_access_token || body.trafficAccessToken;
  assert.equal(envd, token('envd', id), `${id}: the answer carries its envd token`);
  if (traffic) assert.equal(traffic, token('traffic', id));
  const had = made.get(id) || [];
  made.set(id, [...new Set([...had, envd, ...(traffic ? [traffic] : [])])]);
  return id;
}

// The create command w received for id carries the sandbox's envd token,
// and nothing that says how it was delivered.
function assertDelivered(w, id) {
  const creates = w.received.filter((c) => c.type === 'create' && c.sandbox.id === id);
  assert.ok(creates.length > 0, `${id}: no create reached the worker`);
  for (const c of creates) {
    assert.equal(c.sandbox.envd_access_token, token('envd', id), `${id}: the worker gets envd's token`);
    assert.deepEqual(Object.keys(c.sandbox).filter((k) => /due|sealed/.test(k)), [], 'no stored-form field reaches the worker');
  }
  return creates;
}

test('every way a sandbox is made hands the worker its envd token, and no token of any sandbox is in Redis or its files', async () => {
  const w = await worker([TEMPLATE], { slots: 30 });

  // Native and E2B creates, private (a traffic token) or not.
  const n1 = keep((await native('POST', '/v1/sandboxes', { template: TEMPLATE })).body);
  const e1 = await e2b('POST', '/v2/sandboxes', { templateID: TEMPLATE, network: { allowPublicTraffic: false } });
  assert.equal(e1.status, 201, e1.raw);
  assert.ok(e1.body.trafficAccessToken, 'a private sandbox has a traffic token');
  const e2b1 = keep(e1.body);

  // With an Idempotency-Key, and its retry: the same sandbox, the same answer.
  for (const [call, body] of [[native, { template: TEMPLATE, metadata: { n: 'idem' } }],
    [(m, p, b, h) => e2b(m, '/v2/sandboxes', b, h), { templateID: TEMPLATE, network: { allowPublicTraffic: false } }]]) {
    const headers = { 'Idempotency-Key': `i25-${Math.random().toString(16).slice(2)}` };
    const first = await call('POST', '/v1/sandboxes', body, headers);
    assert.equal(first.status, 201, first.raw);
    const again = await call('POST', '/v1/sandboxes', body, headers);
    assert.equal(keep(again.body), keep(first.body), 'the retry answers the same sandbox');
  }

  // E2B pause, then resume and connect: each answers the token again.
  assert.equal((await e2b('POST', `/sandboxes/${e2b1}/pause`)).status, 204);
  const resumed = await e2b('POST', `/sandboxes/${e2b1}/resume`, { timeout: 300 });
  assert.equal(resumed.status, 201, resumed.raw);
  keep(resumed.body);
  const connected = await e2b('POST', `/v2/sandboxes/${n1}/connect`, { timeout: 300 });
  assert.ok([200, 201].includes(connected.status), connected.raw);
  keep(connected.body);

  // A snapshot, a create from it, and a fork of two.
  const snap = await native('POST', `/v1/sandboxes/${n1}/snapshots`, { name: 'i25' });
  assert.equal(snap.status, 201, snap.raw);
  const child = await native('POST', '/v1/sandboxes', { template: snap.body.snapshot_id });
  assert.equal(child.status, 201, child.raw);
  keep(child.body);
  const forks = await e2b('POST', `/sandboxes/${n1}/fork`, { count: 2 });
  assert.equal(forks.status, 201, forks.raw);
  assert.equal(forks.body.length, 2, forks.raw);
  for (const f of forks.body) keep(f.sandbox);

  // A redelivery: the worker takes a create, restarts before acknowledging
  // it, and gets it again on its first poll after the handshake.
  w.autoAck = false;
  const redo = keep((await native('POST', '/v1/sandboxes', { template: TEMPLATE })).body);
  await w.stop();
  // Taken, not acknowledged: the create waits on the worker's stream.
  const stream = everyValue();
  assert.ok(stream.includes(`"id":"${redo}"`), 'the pending create is on the stream');
  assert.ok(!stream.includes(token('envd', redo)), 'a pending create holds its envd token in clear');
  w.autoAck = true;
  await w.handshake();
  w.start();
  await eventually(() => w.received.filter((c) => c.type === 'create' && c.sandbox.id === redo).length >= 2,
    { what: 'the create delivered again after the restart' });

  for (const id of made.keys()) assertDelivered(w, id);
  assert.equal(made.size, 8, [...made.keys()].join(' '));
});

test('a create placed again after its worker died reaches the new worker with its token, never through Redis in clear', async () => {
  // The first worker handshakes (so placement picks it) but never polls:
  // its lease lapses, corral-sched places the create again on the second.
  const dead = await worker([MOVED], { start: false });
  const pending = native('POST', '/v1/sandboxes', { template: MOVED });
  const placed = `corral:{ws:${dead.workspace}}:worker:${dead.id}:cmds`;
  await eventually(() => Number(redis('XLEN', placed)) >= 1, { what: 'the create placed on the worker that never polls' });
  const next = await worker([MOVED]);
  const r = await pending;
  assert.equal(r.status, 201, r.raw);
  const id = keep(r.body);
  assert.equal(r.body.worker_id, next.id, 'placed again on the live worker');
  assertDelivered(next, id);
});

// The heartbeat derives tokens, so it must not be an oracle: a create that
// anyone who may write Redis puts on their own worker's stream, naming a
// sandbox placed elsewhere, draws no token and is not delivered.
test('a forged create on a worker\'s stream draws no token of a sandbox placed elsewhere', async () => {
  const victim = [...made.keys()][0];
  const thief = await worker(['nothing'], { start: false });
  const stream = `corral:{ws:${thief.workspace}}:worker:${thief.id}:cmds`;
  redis('XADD', stream, '*', 'type', 'create', 'sandbox',
    JSON.stringify({ id: victim, workspace: A.id, template: TEMPLATE, envd_token_due: true }));
  await thief.pollOnce();
  assert.ok(!thief.received.some((c) => c.type === 'create'), JSON.stringify(thief.received));
  assert.equal(redis('XLEN', stream), '0', 'the forged create was dropped');
});

test('an attacker with Redis finds no sandbox token: not in any key of any node, not in the AOF or any data file', async () => {
  assert.ok(made.size >= 9, 'the tests above made the sandboxes');
  const ids = [...made.keys()];
  const all = everyValue();
  for (const id of ids) assert.ok(all.includes(id), `the scan saw ${id}`);
  for (const [id, tokens] of made) {
    for (const t of tokens) assert.ok(!all.includes(t), `${id}: a token sits in Redis in clear`);
  }
  // The AOF (appendfsync everysec): once it holds every sandbox, no token.
  const aof = await eventually(() => { const t = aofText(); return ids.every((id) => t.includes(id)) && t; },
    { what: 'the AOF to hold every create' });
  for (const [id, tokens] of made) {
    for (const t of tokens) assert.ok(!aof.includes(t), `${id}: a token sits in the AOF in clear`);
  }
  const files = dataDirText();
  for (const [id, tokens] of made) {
    for (const t of tokens) assert.ok(!files.includes(t), `${id}: a token sits in Redis's files in clear`);
  }
});

// The stack's logs (corral-api, corral-sched, nginx): a token logged would
// be in every log shipper's hands.
test('no log of the stack holds a token either', () => {
  const dir = `${RUN}/log`;
  const logs = readdirSync(dir).filter((f) => f.endsWith('.log')).map((f) => readFileSync(`${dir}/${f}`, 'latin1')).join('\n');
  for (const [id, tokens] of made) {
    for (const t of tokens) assert.ok(!logs.includes(t), `${id}: a token sits in a log`);
  }
});

// Volume tokens are MACs under the server secret of "volume-token:<ws>:<id>:
// <expires>". An Idempotency-Key is the caller's choice, and its MAC is a
// Redis key name: had it the same secret and no label of its own, a tenant
// with a copy of Redis would send that message as its key, read the MAC back
// and hold a token for any workspace's volume.
test('an Idempotency-Key chosen as a volume token\'s message leaves no volume token\'s MAC in Redis', async () => {
  const B = newWorkspace();
  await setLimit(B, 5);
  const wb = new TestWorker(corralctl('join-token', 'create', '--workspace', B.id).token, {});
  await wb.handshake();
  workers.push(wb);
  wb.start();
  const v = await api('POST', '/volumes', { headers: { 'X-API-KEY': B.member }, body: { name: 'victim' } });
  assert.equal(v.status, 201, v.raw);
  const [, ws, id, expires, mac] = v.body.token.split('.');
  assert.equal(ws, B.id);
  await worker([TEMPLATE]);
  const r = await e2b('POST', '/sandboxes', { templateID: TEMPLATE, timeout: 60 },
    { 'Idempotency-Key': `volume-token:${ws}:${id}:${expires}` });
  assert.equal(r.status, 201, r.raw);
  keep(r.body);
  const names = redisPorts().flatMap((port) => adminBatch([`SCAN 0 MATCH corral:{ws:${A.id}}:idem:* COUNT 1000000`], port)
    .split('\n').slice(1).filter(Boolean));
  assert.ok(names.length >= 1, 'the create recorded its Idempotency-Key');
  for (const n of names) assert.ok(!n.includes(mac), `${n}: the volume token's MAC is a key name`);
  assert.ok(!everyValue().includes(mac), 'the volume token\'s MAC sits in Redis');
});
