// The E2B control-plane surface over raw HTTPS, in the shapes of E2B's spec,
// through the same scheduler as the native API. (The real e2b SDK runs in
// tests/e2b once the data plane is up.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, RUN } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';

const A = newWorkspace();
const B = newWorkspace();
let w;
before(async () => {
  w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { slots: 50 });
  await w.handshake();
  w.start();
});
after(async () => w.stop());

const e2b = (m, p, body, key = A.member) => api(m, p, { body, headers: { 'X-API-KEY': key } });
const gateway = readFileSync(`${RUN}/gateway-secret`, 'utf8').trim();
const token = (kind, id) => createHmac('sha256', gateway).update(`${kind}:${id}`).digest('hex');

test('POST /v2/sandboxes: 201 in the Sandbox shape, through the scheduler', async () => {
  const r = await e2b('POST', '/v2/sandboxes', { templateID: 'base', timeout: 120, metadata: { app: 'x' }, envVars: { K: 'v' }, secure: false });
  assert.equal(r.status, 201, r.raw);
  assert.match(r.body.sandboxID, /^[0-9a-f]{20}$/);
  assert.equal(r.body.templateID, 'base');
  assert.equal(r.body.envdVersion, '0.6.4');
  assert.equal(typeof r.body.clientID, 'string');
  assert.equal(r.body.envdAccessToken, undefined, 'no token for a non-secure sandbox');
  assert.equal(w.running.get(r.body.sandboxID).env.K, 'v');
  const native = await api('GET', `/v1/sandboxes/${r.body.sandboxID}`, { key: A.member });
  assert.equal(native.body.state, 'running');
});

test('secure (the default) and private sandboxes get their derived tokens; the worker gets the envd token', async () => {
  const r = await e2b('POST', '/v2/sandboxes', { templateID: 'base', network: { allowPublicTraffic: false } });
  assert.equal(r.status, 201, r.raw);
  const id = r.body.sandboxID;
  assert.equal(r.body.envdAccessToken, token('envd', id));
  assert.equal(r.body.trafficAccessToken, token('traffic', id));
  assert.equal(w.running.get(id).envd_access_token, token('envd', id));
  const info = await e2b('GET', `/sandboxes/${id}`);
  assert.equal(info.body.envdAccessToken, token('envd', id));
  assert.equal(info.body.network.allowPublicTraffic, false);
});

test('GET /sandboxes/{id} is a SandboxDetail; another tenant gets the bytes of a missing one', async () => {
  const r = await e2b('POST', '/v2/sandboxes', { templateID: 'base', metadata: { who: 'a' } });
  const id = r.body.sandboxID;
  const d = await e2b('GET', `/sandboxes/${id}`);
  assert.equal(d.status, 200);
  for (const k of ['templateID', 'sandboxID', 'clientID', 'startedAt', 'endAt', 'cpuCount', 'memoryMB', 'diskSizeMB', 'state', 'envdVersion']) {
    assert.ok(k in d.body, `missing ${k}`);
  }
  assert.equal(d.body.state, 'running');
  assert.deepEqual(d.body.metadata, { who: 'a' });
  const foreign = await e2b('GET', `/sandboxes/${id}`, undefined, B.member);
  const missing = await e2b('GET', '/sandboxes/00000000000000000000', undefined, B.member);
  assert.equal(foreign.status, 404);
  assert.equal(foreign.raw, missing.raw);
  assert.equal((await e2b('DELETE', `/sandboxes/${id}`, undefined, B.member)).raw, missing.raw);
  assert.equal((await e2b('POST', `/v2/sandboxes/${id}/connect`, { timeout: 10 }, B.member)).status, 404);
  assert.equal((await e2b('GET', `/sandboxes/${id}`)).status, 200, 'still there for its owner');
});

test('GET /v2/sandboxes filters by metadata and paginates with x-next-token', async () => {
  const tag = `t${Date.now()}`;
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await e2b('POST', '/v2/sandboxes', { templateID: 'base', metadata: { tag } })).body.sandboxID);
  const q = encodeURIComponent(`tag=${tag}`);
  const p1 = await e2b('GET', `/v2/sandboxes?metadata=${q}&limit=2&state=running`);
  assert.equal(p1.status, 200);
  assert.equal(p1.body.length, 2);
  const next = p1.headers.get('x-next-token');
  assert.ok(next);
  const p2 = await e2b('GET', `/v2/sandboxes?metadata=${q}&limit=2&nextToken=${next}`);
  assert.equal(p2.body.length, 1);
  assert.equal(p2.headers.get('x-next-token'), null);
  assert.deepEqual([...p1.body, ...p2.body].map((s) => s.sandboxID).sort(), ids.sort());
  assert.equal((await e2b('GET', `/v2/sandboxes?metadata=${q}&state=paused`)).body.length, 0);
  assertError(await e2b('GET', '/v2/sandboxes?state=sleeping'), 400, /state/);
  assert.equal((await e2b('GET', `/v2/sandboxes?metadata=${q}`, undefined, B.member)).body.length, 0);
});

test('timeout and connect move the deadline; kill then answers 404', async () => {
  const id = (await e2b('POST', '/v2/sandboxes', { templateID: 'base', timeout: 60 })).body.sandboxID;
  const end0 = Date.parse((await e2b('GET', `/sandboxes/${id}`)).body.endAt);
  assert.equal((await e2b('POST', `/sandboxes/${id}/timeout`, { timeout: 600 })).status, 204);
  const end1 = Date.parse((await e2b('GET', `/sandboxes/${id}`)).body.endAt);
  assert.ok(end1 - end0 > 500 * 1000);
  const c = await e2b('POST', `/v2/sandboxes/${id}/connect`, { timeout: 30 });
  assert.equal(c.status, 200);
  assert.equal(c.body.sandboxID, id);
  assert.equal(Date.parse((await e2b('GET', `/sandboxes/${id}`)).body.endAt), end1, 'connect never shortens');
  assertError(await e2b('POST', `/sandboxes/${id}/timeout`, { timeout: 'long' }), 400, /timeout/);
  assert.equal((await e2b('DELETE', `/sandboxes/${id}`)).status, 204);
  assert.equal((await e2b('DELETE', `/sandboxes/${id}`)).status, 404);
  assert.equal((await e2b('GET', `/sandboxes/${id}`)).status, 404);
});

test('E2B create errors name the E2B field', async () => {
  assertError(await e2b('POST', '/v2/sandboxes', {}), 400, /templateID/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'nope' }), 404, /template/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', envVars: { 'A B': 'x' } }), 400, /^envVars/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', secure: 'yes' }), 400, /^secure/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', metadata: { 'corral.require_isolation': 'GVISOR' } }), 409, /GVISOR/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', allow_internet_access: false }), 409, /worker capability unavailable/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', network: { denyOut: ['0.0.0.0/0'] } }), 409, /worker capability unavailable/);
  // Rules need the proxy: a worker without one cannot take them (decision 0091).
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', network: { rules: { 'a.com': [{}] } } }), 409, /worker capability unavailable/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', network: { rules: { '*': [{}] } } }), 400, /^network\.rules\[\*\]/);
});

test('GET /templates lists what the tenant\'s workers offer; /health is 204', async () => {
  const t = await e2b('GET', '/templates');
  assert.equal(t.status, 200);
  assert.ok(t.body.some((x) => x.templateID === 'base'));
  assert.equal((await api('GET', '/health')).status, 204);
});

test('the data-plane lookup route is not reachable from outside', async () => {
  const id = (await e2b('POST', '/v2/sandboxes', { templateID: 'base' })).body.sandboxID;
  const r = await api('GET', `/v1/internal/route/${id}`, { key: A.owner });
  const none = await api('GET', '/v1/no/such/route', { key: A.owner });
  assert.equal(r.status, 404);
  assert.equal(r.body.message.replace(/\S+$/, ''), none.body.message.replace(/\S+$/, ''));
  const spoof = await api('GET', `/v1/internal/route/${id}`, { headers: { 'Corral-Gateway-Key': gateway, 'X-Corral-Gateway-Key': gateway } });
  assert.equal(spoof.status, 404);
});
