// Agent-mode workers through the real control plane (decision 0054): the
// handshake refuses an agent with an unscoped join token, POST
// /v1/worker/audit writes gate decisions only into the worker's own
// workspace and only about sandboxes placed on it (tried as an attacker
// would), and an agent's sandbox cannot be paused or snapshotted.
// tests/e2b/agent.test.mjs drives a real agent-mode workerd.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, redis } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const AGENT = [{ name: 'agent', tier: 'NONE' }];
const caps = { hostname: 'pc', runtimes: AGENT, egress: false, cpu_cores: 4, memory_mb: 8192, slots: 4,
  data_addr: '127.0.0.1:7001', templates: ['base'] };
const handshake = (token, body) =>
  api('POST', '/v1/worker/handshake', { body: { ...caps, ...body }, headers: { Authorization: `Bearer ${token}` } });

async function running(ws, w) {
  const r = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base' } });
  assert.equal(r.status, 201, r.raw);
  const rec = await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: ws.member });
  if (w) assert.equal(rec.body.worker_id, w.id);
  return r.body.sandbox_id;
}

const line = (sandbox, extra = {}) => JSON.stringify({ time: new Date().toISOString(), sandbox, op: 'exec',
  command: 'cat /home/p/.aws/credentials', branch: 'policy', answer: 'deny', by: 'gate', ...extra });
const post = (w, lines, headers = w.headers()) => api('POST', '/v1/worker/audit', { headers, body: { lines } });
const gateEvents = async (ws) => {
  const r = await api('GET', '/v1/audit?event=gate_denied', { key: ws.owner });
  assert.equal(r.status, 200, r.raw);
  return r.body.events;
};

test('an agent with an unscoped join token is refused at handshake and nothing is registered', async () => {
  const token = corralctl('join-token', 'create').token;
  const before = redis('ZCARD', 'corral:{ws:}:workers');
  assertError(await handshake(token, { mode: 'agent' }), 403, /agent-mode worker needs a workspace-scoped join token/);
  assert.equal(redis('ZCARD', 'corral:{ws:}:workers'), before);
  assertError(await handshake(token, { mode: 'vm' }), 400, /mode: must be "docker" or "agent"/);
  assertError(await handshake(token, { mode: 7 }), 400, /mode/);
  // An agent of a workspace is welcome (a fleet one that never polls would
  // take creates of later tests until its lease ran out: not tried here).
  const ws = newWorkspace();
  const r = await handshake(corralctl('join-token', 'create', '--workspace', ws.id).token, { mode: 'agent' });
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.workspace, ws.id);
});

test('gate decisions land in the worker\'s own workspace, only about sandboxes placed on it', async () => {
  const ws = newWorkspace();
  const victim = newWorkspace();
  const a = await enrolWorker(workers, ws, { runtimes: AGENT, slots: 1 });
  const b = await enrolWorker(workers, ws, { runtimes: AGENT, slots: 1 });
  const v = await enrolWorker(workers, victim, { runtimes: AGENT, slots: 1 });
  const first = await running(ws);
  const firstOn = (await api('GET', `/v1/sandboxes/${first}`, { key: ws.member })).body.worker_id;
  const [mine, neighbour] = firstOn === a.id ? [a, b] : [b, a];
  const onNeighbour = await running(ws, neighbour);
  const theirs = await running(victim, v);

  const ok = await post(mine, [line(first)]);
  assert.equal(ok.status, 200, ok.raw);
  assert.deepEqual(ok.body, { accepted: 1, refused: [] });
  const [ev] = await gateEvents(ws);
  assert.equal(ev.actor, `worker:${mine.id}`);
  assert.equal(ev.sandbox_id, first);
  assert.equal(ev.isolation, 'NONE');
  assert.equal(JSON.parse(ev.reason).command, 'cat /home/p/.aws/credentials');

  // Another workspace's sandbox, the neighbour's, one that does not exist:
  // refused by index, nothing written anywhere.
  const forged = await post(mine, [line(theirs), line(onNeighbour), line('0123456789abcdef0123'), line(first)]);
  assert.deepEqual(forged.body, { accepted: 1, refused: [0, 1, 2] });
  assert.deepEqual(await gateEvents(victim), []);
  assert.equal((await gateEvents(ws)).length, 2);

  // A malformed line: 400 naming it, and the good line before it not written.
  for (const bad of [line(first, { op: 'chmod' }), line(first, { answer: 'maybe' }), '{"sandbox":1}', 'not json', 5]) {
    assertError(await post(mine, [line(first), bad]), 400, /lines\[1\]/);
  }
  assertError(await api('POST', '/v1/worker/audit', { headers: mine.headers(), body: { lines: 'x' } }), 400, /lines/);
  assert.equal((await gateEvents(ws)).length, 2);

  // Someone else's secret, or a worker of the fleet.
  assertError(await post(mine, [line(first)], { ...mine.headers(), 'X-Worker-Secret': 'f'.repeat(48) }), 403);
  // Its template is nobody's: later test files' creates must not land on it
  // while its lease runs out.
  const fleet = await enrolWorker(workers, null, { slots: 1, templates: ['agent-audit-probe'] });
  assertError(await post(fleet, [line(first)]), 403, /workspace-scoped worker/);
  assert.equal((await gateEvents(ws)).length, 2);
});

test('an agent\'s sandbox cannot be paused, snapshotted or forked: 409 naming why, nothing changes', async () => {
  const ws = newWorkspace();
  const w = await enrolWorker(workers, ws, { runtimes: AGENT });
  const id = await running(ws, w);
  assertError(await api('POST', `/v1/sandboxes/${id}/pause`, { key: ws.member }), 409, /agent mode.*cannot be paused/);
  assertError(await api('POST', `/sandboxes/${id}/pause`, { key: ws.member }), 409, /agent mode/);
  assertError(await api('POST', `/sandboxes/${id}/snapshots`, { key: ws.member, body: {} }), 409,
    /cannot be snapshotted/);
  assertError(await api('POST', `/v1/sandboxes/${id}/snapshots`, { key: ws.member, body: {} }), 409);
  assert.equal((await api('GET', `/v1/sandboxes/${id}`, { key: ws.member })).body.state, 'running');
  assert.ok(!w.received.some((c) => c.type === 'pause' || c.type === 'snapshot'), 'nothing sent to the worker');
});

// Decision 0062: a sandbox on an agent (a person's machine) is private unless
// that worker says public traffic is allowed, whatever the caller asked; the
// caller gets the traffic token, the worker is told (and refuses otherwise).
test('an agent\'s sandboxes are private unless the agent allows public traffic', async () => {
  const e2bCreate = (ws, body = {}) => api('POST', '/sandboxes', { key: ws.member, body: { templateID: 'base', ...body } });
  const detail = async (ws, id) => (await api('GET', `/sandboxes/${id}`, { key: ws.member })).body.network.allowPublicTraffic;
  const created = (w, id) => w.received.find((c) => c.type === 'create' && c.sandbox.id === id).sandbox;

  const ws = newWorkspace();
  const w = await enrolWorker(workers, ws, { runtimes: AGENT, handshakeExtra: { mode: 'agent' } });
  for (const body of [{}, { network: { allowPublicTraffic: true } }]) {
    const r = await e2bCreate(ws, body);
    assert.equal(r.status, 201, r.raw);
    assert.match(r.body.trafficAccessToken, /^[0-9a-f]{64}$/, 'the caller can reach its ports');
    assert.equal(await detail(ws, r.body.sandboxID), false);
    assert.equal(created(w, r.body.sandboxID).public, false, 'the worker is told it is private');
  }
  const native = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base' } });
  assert.equal(native.status, 201, native.raw);
  assert.match(native.body.traffic_access_token, /^[0-9a-f]{64}$/);
  assert.equal(created(w, native.body.sandbox_id).public, false);

  // The person allowed it: E2B's default (public) and the caller's choice hold.
  const open = newWorkspace();
  const p = await enrolWorker(workers, open, { runtimes: AGENT, handshakeExtra: { mode: 'agent', public_traffic: true } });
  const pub = await e2bCreate(open);
  assert.equal(pub.status, 201, pub.raw);
  assert.equal(pub.body.trafficAccessToken, undefined);
  assert.equal(created(p, pub.body.sandboxID).public, true);
  const priv = await e2bCreate(open, { network: { allowPublicTraffic: false } });
  assert.ok(priv.body.trafficAccessToken);

  // Any other worker stays as it was: public unless asked otherwise.
  const dockerWs = newWorkspace();
  const d = await enrolWorker(workers, dockerWs);
  const plain = await e2bCreate(dockerWs);
  assert.equal(plain.body.trafficAccessToken, undefined);
  assert.equal(created(d, plain.body.sandboxID).public, true);
  assert.equal((await api('POST', '/v1/sandboxes', { key: dockerWs.member, body: { template: 'base' } }))
    .body.traffic_access_token, undefined);

  const token = corralctl('join-token', 'create', '--workspace', ws.id).token;
  assertError(await handshake(token, { mode: 'agent', public_traffic: 'yes' }), 400, /public_traffic: must be true or false/);
});

test("a volume never goes to an agent, even the workspace's own: a Docker worker holds it, or it is refused", async () => {
  const ws = newWorkspace();
  const agent = await enrolWorker(workers, ws, { runtimes: AGENT, handshakeExtra: { mode: 'agent' } });
  // Only the agent in the workspace's pool and no fleet worker to fall back on
  // is not something this shared stack can arrange; the workspace's own
  // Docker worker is: placement prefers the pool, and must pass the agent over.
  const docker = await enrolWorker(workers, ws);
  for (let i = 0; i < 6; i++) {
    const v = await api('POST', '/v1/volumes', { key: ws.member, body: { name: `v${i}` } });
    assert.equal(v.status, 201, v.raw);
    assert.notEqual(v.body.worker_id, agent.id, `volume v${i} was placed on the agent`);
    assert.equal(v.body.worker_id, docker.id);
  }
});
