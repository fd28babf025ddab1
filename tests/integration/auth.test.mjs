// Who may call what: an attacker's view of credentials and tenancy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, e2bSpelling, keyParts, newWorkspace, redis } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const A = newWorkspace();
const B = newWorkspace();

test('no credential, a malformed one, and a forged one are 401', async () => {
  assertError(await api('GET', '/v1/sandboxes'), 401, /credential/);
  assertError(await api('GET', '/v1/sandboxes', { key: 'hello' }), 401, /invalid API key/);
  const forged = A.member.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  assertError(await api('GET', '/v1/sandboxes', { key: forged }), 401, /invalid API key/);
  // Right secret, other workspace's id: the secret is bound to its record.
  const { id: kid, secret } = keyParts(A.member);
  assertError(await api('GET', '/v1/sandboxes', { key: `ck_${B.id}_${kid}_${secret}` }), 401);
  assertError(await api('GET', '/v1/sandboxes', { key: e2bSpelling(B.id, kid, secret) }), 401);
});

test('Authorization: Bearer works like X-API-Key', async () => {
  const r = await api('GET', '/v1/workspace', { headers: { Authorization: `Bearer ${A.member}` } });
  assert.equal(r.status, 200);
  assert.equal(r.body.id, A.id);
  assert.equal(r.body.role, 'member');
});

test('a member gets 403 owner_required for owner-only routes', async () => {
  for (const [m, p, body] of [['POST', '/v1/keys', { role: 'member' }], ['DELETE', '/v1/keys/0123456789abcdef'],
    ['POST', '/v1/join-tokens', {}], ['DELETE', '/v1/join-tokens/0123456789abcdef'],
    ['DELETE', '/v1/workers/0123456789abcdef'], ['PATCH', '/v1/workspace', { max_concurrent_sandboxes: 99 }]]) {
    const r = await api(m, p, { key: A.member, body });
    assert.equal(r.status, 403, `${m} ${p}: ${r.raw}`);
    assert.deepEqual(r.body, { code: 403, message: 'owner_required' });
  }
  const ws = await api('GET', '/v1/workspace', { key: A.member });
  assert.equal(ws.body.max_concurrent_sandboxes, 20, 'the member PATCH changed nothing');
});

test('an owner mints a key shown once; only its HMAC is stored', async () => {
  const r = await api('POST', '/v1/keys', { key: A.owner, body: { role: 'member' } });
  assert.equal(r.status, 201);
  const { secret } = keyParts(r.body.key);
  assert.equal((await api('GET', '/v1/workspace', { key: r.body.key })).status, 200);
  const dump = redis('--scan', '--pattern', `corral:{ws:${A.id}}:apikey:*`).split('\n');
  for (const k of dump) {
    const fields = redis('HGETALL', k);
    assert.ok(!fields.includes(secret), 'a key secret is stored in clear');
  }
  assert.equal((await api('DELETE', `/v1/keys/${r.body.id}`, { key: A.owner })).status, 204);
  assertError(await api('GET', '/v1/workspace', { key: r.body.key }), 401);
});

test("another tenant's key id is 404, exactly like a missing one", async () => {
  const k = await api('POST', '/v1/keys', { key: B.owner, body: {} });
  const foreign = await api('DELETE', `/v1/keys/${k.body.id}`, { key: A.owner });
  const missing = await api('DELETE', '/v1/keys/00000000deadbeef', { key: A.owner });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.raw, missing.raw);
  assert.equal((await api('GET', '/v1/workspace', { key: k.body.key })).status, 200, 'B key still works');
});

test('a tenant field in a body is refused, never used', async () => {
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'base', workspace: B.id } });
  assertError(r, 400, /workspace/);
});

test('a join token reaches only the two worker routes (403 elsewhere), an API key never reaches them', async () => {
  const jt = corralctl('join-token', 'create', '--workspace', A.id, '--ttl', '600');
  for (const [m, p] of [['GET', '/v1/sandboxes'], ['POST', '/v1/sandboxes'], ['GET', '/v1/workspace'],
    ['POST', '/v1/keys'], ['GET', '/v1/workers'], ['DELETE', '/v1/workers/0123456789abcdef'], ['GET', '/v2/sandboxes']]) {
    const r = await api(m, p, { headers: { Authorization: `Bearer ${jt.token}` }, body: m === 'POST' ? {} : undefined });
    assertError(r, 403, /join token/);
  }
  for (const p of ['/v1/worker/handshake', '/v1/worker/heartbeat']) {
    assertError(await api('POST', p, { key: A.owner, body: {} }), 403, /join token/);
  }
});

test('expired and revoked join tokens are 401 on both worker routes', async () => {
  const short = corralctl('join-token', 'create', '--workspace', A.id, '--ttl', '1');
  const w = new TestWorker(short.token);
  await w.handshake();
  // expired once the handshake says so (a 1 s ttl; before, {} is a 400)
  const expired = () => api('POST', '/v1/worker/handshake', { headers: { Authorization: `Bearer ${short.token}` }, body: {} });
  await until(async () => (await expired()).status === 401, { timeoutMs: 5000, everyMs: 100 });
  assertError(await expired(), 401);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: {} }), 401);

  const jt = corralctl('join-token', 'create', '--workspace', A.id);
  const w2 = new TestWorker(jt.token);
  await w2.handshake();
  const revoked = corralctl('join-token', 'revoke', jt.id);
  assert.equal(revoked.revoked, jt.id);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: w2.headers(), body: {} }), 401);
  assertError(await api('POST', '/v1/worker/handshake', { headers: { Authorization: `Bearer ${jt.token}` }, body: {} }), 401);
});

test('an owner revokes a join token through the API; another tenant cannot', async () => {
  const mk = await api('POST', '/v1/join-tokens', { key: A.owner, body: { ttl_seconds: 600 } });
  assert.equal(mk.status, 201);
  assert.match(mk.body.token, /^jn_/);
  assert.equal((await api('DELETE', `/v1/join-tokens/${mk.body.id}`, { key: B.owner })).status, 404);
  const w = new TestWorker(mk.body.token);
  await w.handshake();
  assert.equal((await api('DELETE', `/v1/join-tokens/${mk.body.id}`, { key: A.owner })).status, 204);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: w.headers(), body: {} }), 401);
});

test('a heartbeat for a worker the token did not enroll, or with a wrong secret, is 403', async () => {
  const jtA = corralctl('join-token', 'create', '--workspace', A.id);
  const jtB = corralctl('join-token', 'create', '--workspace', B.id);
  const wa = new TestWorker(jtA.token);
  await wa.handshake();
  // B's token claiming A's worker (even with A's secret).
  const stolen = { Authorization: `Bearer ${jtB.token}`, 'X-Worker-Id': wa.id, 'X-Worker-Secret': wa.secret };
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: stolen, body: {} }), 403);
  const wrong = { ...wa.headers(), 'X-Worker-Secret': 'f'.repeat(48) };
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: wrong, body: {} }), 403);
  // Re-enrolling as A's worker with B's token is refused too.
  const r = await api('POST', '/v1/worker/handshake', { headers: { Authorization: `Bearer ${jtB.token}` },
    body: { worker_id: wa.id, worker_secret: wa.secret, runtimes: [{ name: 'runc', tier: 'CONTAINER' }],
      cpu_cores: 1, memory_mb: 1, slots: 1, data_addr: '127.0.0.1:7001', templates: ['base'] } });
  assertError(r, 403);
});

test("workers: a tenant sees its own and only a count of the fleet; cannot delete another's", async () => {
  const jtA = corralctl('join-token', 'create', '--workspace', A.id);
  const jtB = corralctl('join-token', 'create', '--workspace', B.id);
  const wa = new TestWorker(jtA.token, { name: 'host-a' });
  const wb = new TestWorker(jtB.token, { name: 'host-b' });
  await wa.handshake();
  await wb.handshake();
  const list = await api('GET', '/v1/workers', { key: A.member });
  assert.equal(list.status, 200);
  const ids = list.body.workers.map((w) => w.worker_id);
  assert.ok(ids.includes(wa.id));
  assert.ok(!ids.includes(wb.id));
  assert.equal(typeof list.body.fleet.free_slots, 'number');
  const foreign = await api('DELETE', `/v1/workers/${wb.id}`, { key: A.owner });
  const missing = await api('DELETE', '/v1/workers/00000000deadbeef', { key: A.owner });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.raw, missing.raw);
  assert.equal((await api('DELETE', `/v1/workers/${wa.id}`, { key: A.owner })).status, 204);
  assert.equal((await api('POST', '/v1/worker/heartbeat', { headers: wa.headers(), body: {} })).status, 403);
  assert.equal((await api('POST', '/v1/worker/heartbeat', { headers: wb.headers(), body: {} })).status, 200);
});
