// Network isolation, control-plane part: every native sandbox is secure, the
// egress policy reaches the worker in the create command in one shape from
// both surfaces, a network update is recorded for the next start, and the
// per-sandbox limits come from the workspace. Real stack, real worker routes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, eventually, newWorkspace, RUN } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';

const A = newWorkspace();
const B = newWorkspace();
const gateway = readFileSync(`${RUN}/gateway-secret`, 'utf8').trim();
const envdToken = (id) => createHmac('sha256', gateway).update(`envd:${id}`).digest('hex');
const DENY_ALL = ['0.0.0.0/0', '::/0'];
const workers = [];

async function worker(ws, opts) {
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', ws.id).token, { slots: 100, ...opts });
  await w.handshake();
  workers.push(w.start());
  return w;
}
let wa;
before(async () => { wa = await worker(A, { egress: true }); await worker(B, { egress: true }); });
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const native = (body, key = A.member) => api('POST', '/v1/sandboxes', { key, body: { template: 'base', ...body } });
const e2b = (m, p, body, key = A.member) => api(m, p, { body, headers: { 'X-API-KEY': key } });
const sentTo = (w, id) => w.received.find((c) => c.type === 'create' && c.sandbox.id === id)?.sandbox;
const count = async (wsp) => (await api('GET', '/v1/sandboxes', { key: wsp.member })).body.sandboxes.length;

test('native sandboxes are secure: the envd token once in the create answer, never on GET or in lists', async () => {
  const r = await native({ secure: true });
  assert.equal(r.status, 201, r.raw);
  const id = r.body.sandbox_id;
  assert.equal(r.body.secure, true);
  assert.equal(r.body.envd_access_token, envdToken(id));
  assert.equal(sentTo(wa, id).envd_access_token, envdToken(id), 'the worker hands envd the same token');
  const got = await api('GET', `/v1/sandboxes/${id}`, { key: A.member });
  assert.equal(got.body.secure, true);
  assert.equal(got.body.envd_access_token, undefined);
  assert.ok(!got.raw.includes(envdToken(id)));
  const list = await api('GET', '/v1/sandboxes', { key: A.member });
  assert.ok(!list.raw.includes(envdToken(id)));
  assert.equal((await native({})).body.envd_access_token.length, 64, 'secure without asking');
});

test('secure: false (or not a boolean) is 400 naming the field; nothing created', async () => {
  const before = await count(A);
  assertError(await native({ secure: false }), 400, /^secure: native sandboxes always have an envd access token; /);
  assertError(await native({ secure: 'yes' }), 400, /^secure: must be true/);
  assert.equal(await count(A), before);
});

test('native allowed_domains: the worker gets {allow: list, deny: everything}; the view shows it', async () => {
  const r = await native({ allowed_domains: ['example.com', '*.example.org'] });
  assert.equal(r.status, 201, r.raw);
  const egress = { allow: ['example.com', '*.example.org'], deny: DENY_ALL };
  assert.deepEqual(sentTo(wa, r.body.sandbox_id).egress, egress);
  assert.deepEqual(r.body.egress, egress);
  assert.deepEqual(r.body.allowed_domains, ['example.com', '*.example.org']);
  assert.equal(r.body.egress_next, null);
  const none = await native({ allowed_domains: [] });
  assert.deepEqual(sentTo(wa, none.body.sandbox_id).egress, { allow: [], deny: DENY_ALL }, 'empty list: no egress at all');
  const open = await native({});
  assert.equal('egress' in sentTo(wa, open.body.sandbox_id), false, 'no policy: no egress field');
  assert.equal(open.body.egress, null);
});

const e2bCases = [
  ['allow_internet_access false', { allow_internet_access: false }, { allow: [], deny: DENY_ALL }],
  ['allowOut and denyOut 0.0.0.0/0', { network: { allowOut: ['api.example.com', '8.8.8.0/24'], denyOut: ['0.0.0.0/0'] } },
    { allow: ['api.example.com', '8.8.8.0/24'], deny: ['0.0.0.0/0'] }],
  ['denyOut only', { network: { denyOut: ['1.1.1.1', '2001:db8::/32'] } }, { allow: [], deny: ['1.1.1.1', '2001:db8::/32'] }],
  ['allowOut only (changes nothing, still a policy)', { network: { allowOut: ['*.example.com'] } }, { allow: ['*.example.com'], deny: [] }],
  ['allowOut with allow_internet_access false', { allow_internet_access: false, network: { allowOut: ['example.com'] } },
    { allow: ['example.com'], deny: DENY_ALL }],
  ['nothing', { allow_internet_access: true, network: { allowOut: [], denyOut: [] } }, undefined],
];

for (const [name, body, egress] of e2bCases) {
  test(`E2B ${name}: the worker's create command carries ${JSON.stringify(egress)}`, async () => {
    const r = await e2b('POST', '/v2/sandboxes', { templateID: 'base', ...body });
    assert.equal(r.status, 201, r.raw);
    assert.deepEqual(sentTo(wa, r.body.sandboxID).egress, egress);
    const d = await e2b('GET', `/sandboxes/${r.body.sandboxID}`);
    assert.equal(d.body.allowInternetAccess, body.allow_internet_access ?? null);
    assert.deepEqual(d.body.network.allowOut, egress?.allow);
    assert.deepEqual(d.body.network.denyOut, egress?.deny);
    const v = await api('GET', `/v1/sandboxes/${r.body.sandboxID}`, { key: A.member });
    assert.deepEqual(v.body.egress, egress ?? null);
  });
}

test('E2B secure: false stays possible; its command has no envd token', async () => {
  const r = await e2b('POST', '/v2/sandboxes', { templateID: 'base', secure: false });
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.envdAccessToken, undefined);
  assert.equal(sentTo(wa, r.body.sandboxID).envd_access_token, undefined);
});

test('a policy with only a non-egress worker: 409, nothing created, the admission slot released', async () => {
  const C = newWorkspace();
  const plain = await worker(C, { egress: false });
  await setLimit(C, 1);
  assertError(await native({ allowed_domains: ['example.com'] }, C.member), 409, /worker capability unavailable/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', network: { denyOut: ['0.0.0.0/0'] } }, C.member), 409,
    /worker capability unavailable/);
  assertError(await e2b('POST', '/v2/sandboxes', { templateID: 'base', allow_internet_access: false }, C.member), 409);
  assert.equal(plain.received.length, 0);
  assert.equal(await count(C), 0);
  assert.equal((await api('GET', '/v1/workspace', { key: C.member })).body.active_sandboxes, 0);
  const ok = await native({}, C.member);
  assert.equal(ok.status, 201, `the one slot is free again: ${ok.raw}`);
});

async function setLimit(wsp, n) {
  const r = await api('PATCH', '/v1/workspace', { key: wsp.owner, body: { max_concurrent_sandboxes: n } });
  assert.equal(r.status, 200, r.raw);
}

const bad = [
  ['native', { allowed_domains: ['exa mple.com'] }, 400, /^allowed_domains\[0\]: not a host name, IP address or CIDR/],
  ['native', { allowed_domains: ['a.com', '8.8.8.8'] }, 400, /^allowed_domains\[1\]: not a host name \(IP addresses/],
  ['native', { allowed_domains: 'a.com' }, 400, /^allowed_domains: must be an array of at most 256/],
  ['native', { allowed_domains: Array.from({ length: 257 }, (_, i) => `h${i}.com`) }, 400, /^allowed_domains: must be an array of at most 256/],
  ['e2b', { network: { allowOut: ['ok.com', 'a..b'] } }, 400, /^network\.allowOut\[1\]: not a host name, IP address or CIDR/],
  ['e2b', { network: { allowOut: ['1.2.3.4/40'] } }, 400, /^network\.allowOut\[0\]/],
  ['e2b', { network: { allowOut: 'x' } }, 400, /^network\.allowOut: must be an array/],
  ['e2b', { network: { denyOut: ['0.0.0.0/0', 'example.com'] } }, 400, /^network\.denyOut\[1\]: domain names are not supported/],
  ['e2b', { network: { denyOut: [7] } }, 400, /^network\.denyOut\[0\]/],
  ['e2b', { allow_internet_access: 'no' }, 400, /^allow_internet_access/],
  ['e2b', { network: { maskRequestHost: 'x.com\r\nX-Evil: 1' } }, 400, /^network\.maskRequestHost: want a host/],
  ['e2b', { network: { egressProxy: { address: 'p' } } }, 400, /^network\.egressProxy\.address: want host:port/],
  ['e2b', { network: { egressProxy: { address: '10.0.0.1:1080' } } }, 400, /^network\.egressProxy\.address/],
  ['e2b', { network: { rules: { 'a.com': [{ transform: { headers: { 'X-A': 'v\r\nEvil: 1' } } }] } } }, 400,
    /^network\.rules\[a\.com\]: header X-A: want a token name/],
  ['e2b', { iam: { tokens: { aws: { audience: 'x', tokenType: 'OIDC' } } } }, 400, /^iam\.tokens\.aws/],
];
const privates = ['10.0.0.0/8', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.5.0/24',
  '192.168.0.1', '::1', 'fd00::/8', 'fe80::1', '::ffff:192.168.0.1'];
for (const p of privates) bad.push(['e2b', { network: { allowOut: ['example.com', p] } }, 400,
  /^network\.allowOut\[1\]: .* is a private destination; private destinations are always closed/]);

for (const [surface, body, status, msg] of bad) {
  test(`${surface} create ${JSON.stringify(body).slice(0, 70)}: ${status} naming the field, nothing created`, async () => {
    const before = await count(A);
    const sent = wa.received.length;
    const r = surface === 'native' ? await native(body) : await e2b('POST', '/v2/sandboxes', { templateID: 'base', ...body });
    assertError(r, status, msg);
    assert.equal(await count(A), before);
    assert.equal(wa.received.length, sent);
  });
}

test('PUT /v1/sandboxes/{id}/network on a running sandbox with a proxy: in force now, sent to its worker; removing the policy waits for the next start', async () => {
  const r = await native({ allowed_domains: ['a.com'] });
  const id = r.body.sandbox_id;
  const sent = wa.received.length;
  const put = await api('PUT', `/v1/sandboxes/${id}/network`, { key: A.member, body: { allowed_domains: ['b.com'] } });
  assert.equal(put.status, 200, put.raw);
  assert.deepEqual(put.body, {
    sandbox_id: id, egress: { allow: ['b.com'], deny: DENY_ALL }, applies: 'now',
    message: 'applied: new connections follow the new policy; connections already open keep the one they were opened under',
  });
  const got = (await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).body;
  assert.deepEqual(got.egress, { allow: ['b.com'], deny: DENY_ALL }, 'the policy in force');
  assert.equal(got.egress_next, null);
  const cmd = await eventually(() => wa.received.slice(sent).find((c) => c.type === 'egress' && c.sandbox_id === id),
    { what: 'the egress command' });
  assert.deepEqual(cmd.args.egress, { allow: ['b.com'], deny: DENY_ALL });
  const rm = await api('PUT', `/v1/sandboxes/${id}/network`, { key: A.member, body: { allowed_domains: null } });
  assert.equal(rm.status, 200, rm.raw);
  assert.equal(rm.body.egress, null);
  assert.deepEqual((await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).body.egress_next, { egress: null, applies: 'next_start' });
});

test('PUT /sandboxes/{id}/network (E2B updateNetwork body): 204, recorded for the next start', async () => {
  const id = (await e2b('POST', '/v2/sandboxes', { templateID: 'base' })).body.sandboxID;
  const put = await e2b('PUT', `/sandboxes/${id}/network`, { allowOut: ['1.1.1.1'], denyOut: ['8.8.8.8'], allow_internet_access: false });
  assert.equal(put.status, 204, put.raw);
  const got = (await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).body;
  assert.equal(got.egress, null);
  assert.deepEqual(got.egress_next.egress, { allow: ['1.1.1.1'], deny: ['8.8.8.8', ...DENY_ALL] });
  assert.equal((await e2b('PUT', `/sandboxes/${id}/network`, {})).status, 204, 'omitted fields are cleared');
  assert.equal((await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).body.egress_next.egress, null);
  assert.equal((await e2b('PUT', `/sandboxes/${id}/network`, { rules: {} })).status, 204);
});

test('PUT network: another tenant\'s or an unknown sandbox is the same 404; bad bodies 400; no key 401', async () => {
  const id = (await native({})).body.sandbox_id;
  const missing = await api('GET', '/v1/sandboxes/00000000000000000000', { key: B.member });
  const routes = [[`/v1/sandboxes/${id}/network`, '/v1/sandboxes/00000000000000000000/network', { allowed_domains: [] }],
    [`/sandboxes/${id}/network`, '/sandboxes/00000000000000000000/network', { allowOut: [] }]];
  for (const [path, unknown, body] of routes) {
    const foreign = await api('PUT', path, { key: B.member, body });
    const none = await api('PUT', unknown, { key: B.member, body });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.raw, missing.raw);
    assert.equal(none.raw, missing.raw);
    assertError(await api('PUT', path, { body }), 401);
  }
  const n = (body) => api('PUT', `/v1/sandboxes/${id}/network`, { key: A.member, body });
  assertError(await n({}), 400, /^allowed_domains: required/);
  assertError(await n({ allowed_domains: 'a.com' }), 400, /^allowed_domains: must be an array/);
  assertError(await n({ allowed_domains: ['a.com', '10.0.0.1'] }), 400, /^allowed_domains\[1\]/);
  assertError(await n({ allowed_domains: [], secure: true }), 400, /^secure: unknown field/);
  assertError(await api('PUT', `/v1/sandboxes/${id}/network`, { key: A.member, rawBody: '{"allowed', headers: { 'Content-Type': 'application/json' } }), 400);
  const x = (body) => e2b('PUT', `/sandboxes/${id}/network`, body);
  assertError(await x({ denyOut: ['example.com'] }), 400, /^denyOut\[0\]: domain names are not supported/);
  assertError(await x({ allowOut: ['192.168.1.1'] }), 400, /^allowOut\[0\]: 192\.168\.1\.1 is a private destination/);
  assertError(await x({ allow_internet_access: 1 }), 400, /^allow_internet_access/);
  assertError(await x({ egressProxy: { address: 'p' } }), 400, /^egressProxy\.address: want host:port/);
  assertError(await x({ rules: { '*': [] } }), 400, /^rules\[\*\]: want a host name/);
  assertError(await x({ rules: { 'a.com': [{ transform: { headers: { A: '${e2b.identity.tokens.x}' } } }] } }), 400,
    /identity token x is not defined/);
  assertError(await x({ allowout: [] }), 400, /^allowout: unknown field/);
  assert.equal((await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).body.egress_next, null, 'bad bodies changed nothing');
});

test('PUT network on an ended sandbox: native 409, E2B 404', async () => {
  const id = (await native({})).body.sandbox_id;
  assert.equal((await api('DELETE', `/v1/sandboxes/${id}`, { key: A.member })).status, 204);
  const gone = await api('PUT', `/v1/sandboxes/${id}/network`, { key: A.member, body: { allowed_domains: [] } });
  assert.ok([404, 409].includes(gone.status), gone.raw);
  assert.equal((await e2b('PUT', `/sandboxes/${id}/network`, {})).status, 404);
});

test('workspace sandbox limits: defaults, owner-only changes, ranges, copied into each create', async () => {
  const W = newWorkspace();
  const w = await worker(W, { egress: true });
  const ws = (await api('GET', '/v1/workspace', { key: W.member })).body;
  assert.equal(ws.sandbox_pids_limit, 1024);
  assert.equal(ws.sandbox_disk_mb, 10240);
  const first = (await native({}, W.member)).body;
  assert.equal(sentTo(w, first.sandbox_id).pids_limit, 1024);
  assert.equal(sentTo(w, first.sandbox_id).disk_mb, 10240);
  assertError(await api('PATCH', '/v1/workspace', { key: W.member, body: { sandbox_pids_limit: 2048 } }), 403, /^owner_required$/);
  const patch = (body) => api('PATCH', '/v1/workspace', { key: W.owner, body });
  assertError(await patch({ sandbox_pids_limit: 63 }), 400, /^sandbox_pids_limit: must be an integer in \[64, 65536\]/);
  assertError(await patch({ sandbox_pids_limit: 65537 }), 400, /^sandbox_pids_limit/);
  assertError(await patch({ sandbox_pids_limit: 100.5 }), 400, /^sandbox_pids_limit/);
  assertError(await patch({ sandbox_disk_mb: 255 }), 400, /^sandbox_disk_mb: must be an integer in \[256, 1048576\]/);
  assertError(await patch({ sandbox_disk_mb: '1024' }), 400, /^sandbox_disk_mb/);
  assertError(await patch({ sandbox_pids_limit: 2048, sandbox_disk_mb: 1 }), 400, /^sandbox_disk_mb/);
  assertError(await patch({ sandbox_pids: 2048 }), 400, /^sandbox_pids: unknown/);
  assert.equal((await api('GET', '/v1/workspace', { key: W.member })).body.sandbox_pids_limit, 1024, 'a refused PATCH changes nothing');
  const ok = await patch({ sandbox_pids_limit: 2048, sandbox_disk_mb: 20480 });
  assert.equal(ok.status, 200, ok.raw);
  assert.equal(ok.body.sandbox_pids_limit, 2048);
  assert.equal(ok.body.sandbox_disk_mb, 20480);
  assert.equal(ok.body.max_concurrent_sandboxes, 20);
  const second = (await e2b('POST', '/v2/sandboxes', { templateID: 'base' }, W.member)).body;
  assert.equal(sentTo(w, second.sandboxID).pids_limit, 2048);
  assert.equal(sentTo(w, second.sandboxID).disk_mb, 20480);
  const kept = (await api('GET', `/v1/sandboxes/${first.sandbox_id}`, { key: W.member })).body;
  assert.equal(kept.pids_limit, 1024, 'a sandbox keeps the limits it was created with');
  assert.equal(kept.disk_mb, 10240);
});

test('redelivery is a new start: the policy recorded by PUT network is the one the new worker gets', async () => {
  const R = newWorkspace();
  // A silent worker takes the create but never polls; after its lease (4 s in
  // the test profile) the create moves to a live one.
  const silent = new TestWorker(corralctl('join-token', 'create', '--workspace', R.id).token, { slots: 1, egress: true });
  await silent.handshake();
  const creating = native({ allowed_domains: ['a.com'] }, R.member);
  const pending = await eventually(async () => (await api('GET', '/v1/sandboxes?state=pending', { key: R.member })).body.sandboxes[0],
    { what: 'the pending sandbox' });
  const put = await api('PUT', `/v1/sandboxes/${pending.sandbox_id}/network`, { key: R.member, body: { allowed_domains: ['b.com'] } });
  assert.equal(put.status, 200, put.raw);
  const live = await worker(R, { egress: true });
  const r = await creating;
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.worker_id, live.id);
  assert.deepEqual(sentTo(live, r.body.sandbox_id).egress, { allow: ['b.com'], deny: DENY_ALL });
  const got = (await api('GET', `/v1/sandboxes/${r.body.sandbox_id}`, { key: R.member })).body;
  assert.deepEqual(got.egress, { allow: ['b.com'], deny: DENY_ALL });
  assert.equal(got.egress_next, null);
});
