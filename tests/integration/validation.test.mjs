// Bad input gets a 4xx that names the problem, in the {code, message} shape,
// and changes nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const A = newWorkspace();
let worker;

before(async () => {
  worker = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token);
  await worker.handshake();
  worker.start();
});
after(async () => worker.stop());

async function sandboxCount() {
  return (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes.length;
}

const cases = [
  ['malformed JSON', '{"template": ', /malformed JSON/],
  ['not an object', '[1,2]', /JSON object/],
  ['template wrong type', { template: 7 }, /^template/],
  ['timeout wrong type', { timeout: '60' }, /^timeout/],
  ['timeout out of range', { timeout: 0 }, /^timeout/],
  ['metadata wrong type', { metadata: [] }, /^metadata/],
  ['metadata value wrong type', { metadata: { a: 1 } }, /^metadata\.a/],
  ['env wrong type', { env: 'X=1' }, /^env/],
  ['env bad name', { env: { '1X': 'v' } }, /^env/],
  ['cpu_cores wrong type', { cpu_cores: 'two' }, /^cpu_cores/],
  ['cpu_cores negative', { cpu_cores: -1 }, /^cpu_cores/],
  ['memory_mb float', { memory_mb: 1.5 }, /^memory_mb/],
  ['allowed_domains wrong type', { allowed_domains: 'example.com' }, /^allowed_domains/],
  ['allowed_domains bad host', { allowed_domains: ['exa mple.com'] }, /^allowed_domains\[0\]/],
  ['require_isolation unknown value', { require_isolation: 'SUPER' }, /^require_isolation/],
  ['require_isolation=UNKNOWN', { require_isolation: 'UNKNOWN' }, /^require_isolation: UNKNOWN/],
  ['unknown field', { templat: 'base' }, /^templat: unknown field/],
];

for (const [name, body, msg] of cases) {
  test(`create with ${name}: 400 naming the field, nothing created`, async () => {
    const before = await sandboxCount();
    const r = await api('POST', '/v1/sandboxes', typeof body === 'string'
      ? { key: A.member, rawBody: body, headers: { 'Content-Type': 'application/json' } }
      : { key: A.member, body });
    assertError(r, 400, msg);
    assert.equal(await sandboxCount(), before);
  });
}

test('unknown template: 404 naming it, nothing created', async () => {
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'no-such-template' } });
  assertError(r, 404, /template: 'no-such-template' not found/);
  assert.equal(await sandboxCount(), 0);
});

test('a body over the limit is 413 (corral-api limit and the gateway limit)', async () => {
  const big = JSON.stringify({ template: 'base', metadata: { pad: 'x'.repeat(1100 * 1024) } });
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, rawBody: big, headers: { 'Content-Type': 'application/json' } }), 413, /limit/);
  const huge = 'x'.repeat(3 * 1024 * 1024);
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, rawBody: huge }), 413, /limit/);
});

test('unknown route is 404, wrong method is 405, both JSON', async () => {
  assertError(await api('GET', '/v1/nope', { key: A.member }), 404, /no route/);
  assertError(await api('GET', '/elsewhere', { key: A.member }), 404);
  assertError(await api('PUT', '/v1/sandboxes', { key: A.member, body: {} }), 405, /PUT/);
  assertError(await api('POST', '/v1/workspace', { key: A.member, body: {} }), 405);
});

test('E2B routes not served yet answer 501 naming the route', async () => {
  const sb = '0123456789abcdef0123';
  assertError(await api('GET', '/teams', { key: A.member }), 501, /^GET \/teams is not served by Corral$/);
  // Served since decision 0091: a malformed iam is a 400 naming it.
  assertError(await api('POST', '/v2/sandboxes', { key: A.member, body: { templateID: 'base', iam: { tokens: [] } } }), 400, /^iam\.tokens/);
  // mcp is carried, not refused (the SDK starts the gateway itself: decision 0069), but must be an object.
  assertError(await api('POST', '/v2/sandboxes', { key: A.member, body: { templateID: 'base', mcp: 'github' } }), 400,
    /^mcp: must be an object$/);
  // Served since decision 0047: an unknown sandbox is a 404 there.
  assertError(await api('GET', `/sandboxes/${sb}/metrics`, { key: A.member }), 404, /sandbox not found/);
});

test('PATCH /v1/workspace validates its field', async () => {
  assertError(await api('PATCH', '/v1/workspace', { key: A.owner, body: { max_concurrent_sandboxes: 'ten' } }), 400, /max_concurrent_sandboxes/);
  assertError(await api('PATCH', '/v1/workspace', { key: A.owner, body: { name: 'x' } }), 400, /^name/);
});

test('requests carry a request id', async () => {
  const r = await api('GET', '/health');
  assert.equal(r.status, 204);
  assert.match(r.headers.get('x-request-id'), /^[0-9a-f]{32}$/);
});

// The per-key rate limit (429 in the JSON shape, Retry-After): ratelimit.test.mjs.

test('owner routes validate their bodies: key role, join-token ttl, unknown fields', async () => {
  assertError(await api('POST', '/v1/keys', { key: A.owner, body: { role: 'admin' } }), 400, /^role/);
  assertError(await api('POST', '/v1/keys', { key: A.owner, body: { role: 'member', scope: 'x' } }), 400, /^scope: unknown field/);
  assertError(await api('POST', '/v1/join-tokens', { key: A.owner, body: { ttl_seconds: 5 } }), 400, /^ttl_seconds/);
  assertError(await api('POST', '/v1/join-tokens', { key: A.owner, body: { ttl_seconds: '1h' } }), 400, /^ttl_seconds/);
});

test('worker routes validate their bodies, naming the field, and change nothing', async () => {
  const jt = corralctl('join-token', 'create', '--workspace', A.id).token;
  const auth = { Authorization: `Bearer ${jt}` };
  const good = { runtimes: [{ name: 'runc', tier: 'CONTAINER' }], cpu_cores: 1, memory_mb: 1, slots: 1,
    data_addr: '127.0.0.1:7001', templates: ['base'] };
  const before = (await api('GET', '/v1/workers', { key: A.member })).body.workers.length;
  const bad = [
    [{ ...good, slots: 0 }, /^slots/], [{ ...good, runtimes: [{ name: 'runc', tier: 'SUPER' }] }, /^runtimes\[0\]/],
    [{ ...good, runtimes: [] }, /^runtimes/], [{ ...good, data_addr: '' }, /^data_addr/],
    [{ ...good, data_addr: 'localhost:7001' }, /^data_addr: must be an IP address and a port/],
    [{ ...good, data_addr: '169.254.169.254:80' }, /^data_addr: 169\.254\.169\.254 is link-local/],
    [{ ...good, data_addr: '127.0.0.1:80' }, /^data_addr: 127\.0\.0\.1:80 is on loopback and not a listed/],
    [{ ...good, data_addr: '10.9.9.9:7001' }, /^data_addr: 10\.9\.9\.9 is outside the networks/],
    [{ ...good, templates: ['../x'] }, /^templates\[0\]/], [{ ...good, egress: 'yes' }, /^egress/],
    [{ ...good, cpu_cores: -1 }, /^cpu_cores/],
  ];
  for (const [body, msg] of bad) assertError(await api('POST', '/v1/worker/handshake', { headers: auth, body }), 400, msg);
  assert.equal((await api('GET', '/v1/workers', { key: A.member })).body.workers.length, before, 'no worker enrolled');
  const hs = worker;
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: hs.headers(), body: { acks: ['nope'] } }), 400, /^acks\[0\]/);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: hs.headers(), body: { sandboxes: [{ id: 'zz', state: 'running' }] } }), 400, /^sandboxes\[0\]/);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: hs.headers(), body: { sandboxes: [{ id: '0123456789abcdef0123', state: 'asleep' }] } }), 400, /^sandboxes\[0\]/);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: hs.headers(), body: { snapshots: [{ id: 'snap-x', workspace: A.id, state: 'ready' }] } }), 400, /^snapshots\[0\]/);
  assertError(await api('POST', '/v1/worker/heartbeat', { headers: hs.headers(), body: { snapshots: [{ id: 'snap-0123456789abcdef0123', workspace: A.id, state: 'done' }] } }), 400, /^snapshots\[0\]/);
  // A worker's own health report: a string of at most 255 bytes, and a refused one changes nothing.
  for (const problem of [7, 'x'.repeat(256)]) {
    assertError(await api('POST', '/v1/worker/heartbeat', { headers: hs.headers(), body: { wait: false, problem } }), 400, /^problem/);
  }
  const view = (await api('GET', '/v1/workers', { key: A.member })).body.workers.find((w) => w.worker_id === hs.id);
  assert.equal(view.healthy, true, JSON.stringify(view));
});

test('corralctl refuses what it must, with a message and a non-zero exit', async () => {
  const { spawnSync } = await import('node:child_process');
  const run = (...args) => spawnSync(`${process.env.CORRAL_BUILD}/corralctl`, ['-c', `${process.env.CORRAL_RUN}/corral.conf`, ...args], { encoding: 'utf8' });
  let r = run('key', 'create', '--workspace', '00000000deadbeef', '--role', 'member');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /no such workspace/);
  r = run('key', 'create', '--workspace', A.id, '--role', 'admin');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--role/);
  r = run('join-token', 'revoke', 'ffffffffffffffff');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /no such join token/);
  r = run('frobnicate');
  assert.equal(r.status, 2);
});
