// Secrets and workload identity (decision 0090), through the real stack:
// E2B's /secrets as a client calls them (tests/e2b/secrets.test.mjs drives
// them with the e2b SDK's Secret class), a workspace's public OpenID
// discovery and JWKS, the owner's rotation, and a worker's
// POST /v1/worker/egress-resolve as a test worker calls it: values never come
// back through a route, the audit or Redis in clear; another workspace's
// secrets, keys and sandboxes are out of reach; a minted token verifies with
// node's crypto against the published JWKS and only there.
//
// The token definitions live in the sandbox's egress policy ("iam":
// {"tokens"}). Until a create carries them, the test writes them into the
// record's egress field through redis-cli as the operator.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, createVerify } from 'node:crypto';
import { api, assertError, newWorkspace, redis, URL_BASE } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const A = newWorkspace();
const B = newWorkspace();
const workers = [];
let wa, wa2, wb;
before(async () => {
  wa = await enrolWorker(workers, A, { slots: 20 });
  wa2 = await enrolWorker(workers, A, { slots: 20 });
  wb = await enrolWorker(workers, B, { slots: 20 });
});
// The test worker a sandbox was placed on (the create answered: it runs there).
const runner = (id) => workers.find((w) => w.running.has(id));
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const VALUE = `v4lue-${Math.random().toString(16).slice(2)}`;
const seen = []; // every value written: none may come back
const e2b = (method, path, body, key = A.member) => api(method, path, { key, body });
const resolve = (w, body, headers = w.headers()) => api('POST', '/v1/worker/egress-resolve', { body, headers });
// A short value could turn up inside sealed base64 by chance: only the long
// ones (every value the tests look for is VALUE-derived) are looked for.
const noValue = (raw) => {
  for (const v of seen.filter((x) => x.length >= 16)) assert.ok(!raw.includes(v), 'a secret value came back');
};

async function secret(name, value, ws = A, metadata) {
  seen.push(value);
  const r = await e2b('POST', '/secrets', { name, value, ...(metadata ? { metadata } : {}) }, ws.member);
  assert.equal(r.status, 201, r.raw);
  return r.body;
}

test('create, get by id and by name, update, list, delete: metadata out, never the value', async () => {
  const s = await secret('Db-Pass', VALUE, A, { team: 'a' });
  assert.match(s.secretID, /^sec_[0-9a-f]{20}$/);
  assert.equal(s.name, 'db-pass', 'names are lower-cased');
  assert.equal(s.currentVersion, 1);
  assert.deepEqual(s.metadata, { team: 'a' });
  assert.ok(!Number.isNaN(Date.parse(s.createdAt)) && s.createdAt === s.updatedAt);
  assert.deepEqual(Object.keys(s).sort(), ['createdAt', 'currentVersion', 'metadata', 'name', 'secretID', 'updatedAt']);
  for (const ref of [s.secretID, 'db-pass', 'DB-PASS']) {
    const g = await e2b('GET', `/secrets/${ref}`);
    assert.equal(g.status, 200, g.raw);
    assert.equal(g.body.secretID, s.secretID);
    noValue(g.raw);
  }
  seen.push(`${VALUE}-2`);
  const u = await e2b('POST', '/secrets/db-pass', { value: `${VALUE}-2` });
  assert.equal(u.status, 200, u.raw);
  assert.equal(u.body.currentVersion, 2);
  assert.deepEqual(u.body.metadata, { team: 'a' }, 'metadata kept when not given');
  const m = await e2b('POST', `/secrets/${s.secretID}`, { value: `${VALUE}-2`, metadata: {} });
  assert.equal(m.body.currentVersion, 3);
  assert.deepEqual(m.body.metadata, {}, 'metadata replaced when given');
  noValue(u.raw + m.raw);
  assertError(await e2b('POST', '/secrets', { name: 'db-pass', value: 'x' }), 409, /already exists/);
  const d = await e2b('DELETE', '/secrets/db-pass');
  assert.equal(d.status, 204);
  assertError(await e2b('GET', `/secrets/${s.secretID}`), 404, /^secret not found$/);
  assertError(await e2b('DELETE', '/secrets/db-pass'), 404);
  assertError(await e2b('POST', '/secrets/db-pass', { value: 'x' }), 404);
  const again = await secret('db-pass', `x2-${VALUE}`);
  assert.notEqual(again.secretID, s.secretID, 'the name is free again after a delete');
});

test('bodies and names are checked, nothing written: 400 naming the field, never quoting the value', async () => {
  const before = (await e2b('GET', '/secrets')).body.length;
  const cases = [
    [{ name: 'sec_x', value: 'x' }, /^name: /], [{ name: '', value: 'x' }, /^name: /],
    [{ name: 'a b', value: 'x' }, /^name: /], [{ name: 'a'.repeat(65), value: 'x' }, /^name: /],
    [{ name: 'ok', value: '' }, /^value: /], [{ name: 'ok', value: 7 }, /^value: /],
    [{ name: 'ok', value: 'v'.repeat(65537) }, /^value: /],
    [{ name: 'ok', value: 'x', metadata: { k: 1 } }, /^metadata: /],
    [{ name: 'ok', value: 'x', metadata: Object.fromEntries([...Array(33).keys()].map((i) => [`k${i}`, 'v'])) }, /^metadata: /],
    [{ name: 'ok', value: 'x', metadata: { ['k'.repeat(129)]: 'v' } }, /^metadata: /],
    [{ name: 'ok', value: 'x', metadata: { k: 'v'.repeat(1025) } }, /^metadata: /],
    [{ name: 'ok', value: 'x', metadata: Object.fromEntries([...Array(9).keys()].map((i) => [`k${i}`, 'v'.repeat(1000)])) }, /^metadata: /],
  ];
  for (const [body, msg] of cases) {
    const r = await e2b('POST', '/secrets', body);
    assertError(r, 400, msg);
    assert.ok(typeof body.value !== 'string' || body.value.length < 8 || !r.raw.includes(body.value));
  }
  assert.equal((await e2b('GET', '/secrets')).body.length, before);
  assertError(await e2b('GET', '/secrets?limit=0'), 400, /^limit: /);
  assertError(await e2b('GET', '/secrets?nextToken=nope'), 400, /^nextToken: /);
});

test('the list pages oldest first with X-Next-Token', async () => {
  const W = newWorkspace();
  const made = [];
  for (let i = 0; i < 5; i++) made.push((await secret(`p${i}`, `pv${i}-${VALUE}`, W)).secretID);
  const got = [];
  let token = '';
  for (let pages = 0; pages < 10; pages++) {
    const r = await e2b('GET', `/secrets?limit=2${token ? `&nextToken=${token}` : ''}`, undefined, W.member);
    assert.equal(r.status, 200, r.raw);
    noValue(r.raw);
    got.push(...r.body.map((s) => s.secretID));
    token = r.headers.get('x-next-token');
    if (!token) break;
  }
  assert.deepEqual(got, made);
});

test("another workspace's secret answers exactly as a missing one", async () => {
  const s = await secret('shared-name', `a-${VALUE}`);
  for (const ref of [s.secretID, 'shared-name']) {
    const missing = await e2b('GET', `/secrets/${ref === s.secretID ? 'sec_00000000000000000000' : 'no-such'}`, undefined, B.member);
    const theirs = await e2b('GET', `/secrets/${ref}`, undefined, B.member);
    assert.equal(theirs.status, 404);
    assert.deepEqual(theirs.body, missing.body);
    assertError(await e2b('POST', `/secrets/${ref}`, { value: 'hijack' }, B.member), 404);
    assertError(await e2b('DELETE', `/secrets/${ref}`, undefined, B.member), 404);
  }
  assert.ok(!(await e2b('GET', '/secrets', undefined, B.member)).body.some((x) => x.secretID === s.secretID));
  assert.equal((await e2b('GET', `/secrets/${s.secretID}`)).body.currentVersion, 1, "A's secret untouched");
  // B may have a secret of the same name: names are per workspace.
  await secret('shared-name', `b-${VALUE}`, B);
});

test('at rest: only sealed, at most 10 versions kept', async () => {
  const s = await secret('rotating', `r0-${VALUE}`);
  for (let i = 1; i <= 12; i++) {
    seen.push(`r${i}-${VALUE}`);
    assert.equal((await e2b('POST', '/secrets/rotating', { value: `r${i}-${VALUE}` })).body.currentVersion, i + 1);
  }
  const hash = redis('HGETALL', `corral:{ws:${A.id}}:secret:${s.secretID}`);
  noValue(hash);
  const versions = hash.split('\n').filter((l) => /^v:\d+$/.test(l));
  assert.equal(versions.length, 10, hash);
  assert.ok(versions.includes('v:13') && !versions.includes('v:3'));
});

// ---- Workload identity ----

const jwks = async (ws) => {
  const r = await api('GET', `/identity/${ws.id}/jwks.json`);
  assert.equal(r.status, 200, r.raw);
  return r.body.keys;
};
const parts = (jwt) => jwt.split('.').map((p, i) => (i < 2 ? JSON.parse(Buffer.from(p, 'base64url')) : p));
// Verifies jwt against keys as a relying party does: the key its kid names.
function verifies(jwt, keys) {
  const [header] = parts(jwt);
  const jwk = keys.find((k) => k.kid === header.kid);
  if (!jwk || header.alg !== 'ES256') return false;
  const [h, c, sig] = jwt.split('.');
  return createVerify('SHA256').update(`${h}.${c}`)
    .verify({ key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url'));
}
const host = new URL(URL_BASE).host;
const issuer = (ws) => `https://${host}/identity/${ws.id}`;

test('discovery and JWKS are public; an unknown workspace is 404', async () => {
  const d = await api('GET', `/identity/${A.id}/.well-known/openid-configuration`);
  assert.equal(d.status, 200, d.raw);
  assert.deepEqual(d.body, {
    issuer: issuer(A), jwks_uri: `${issuer(A)}/jwks.json`, id_token_signing_alg_values_supported: ['ES256'],
    response_types_supported: ['id_token'], subject_types_supported: ['public'],
  });
  const fresh = newWorkspace();
  assert.deepEqual(await jwks(fresh), [], 'no key before the first use');
  assertError(await api('GET', '/identity/0123456789abcdef0123456789abcdef/jwks.json'), 404, /^workspace not found$/);
  assertError(await api('GET', '/identity/0123456789abcdef0123456789abcdef/.well-known/openid-configuration'), 404);
  assertError(await api('GET', '/identity/x.y/jwks.json'), 404);
});

const AWS = { aws: { audience: 'sts.amazonaws.com', tokenType: 'JWT-SVID' }, gcp: { audience: '//iam.googleapis.com/x', tokenType: 'JWT-SVID' } };
// A running sandbox of ws on w whose egress policy defines tokens.
async function sandbox(ws, tokens = AWS) {
  const r = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base' } });
  assert.equal(r.status, 201, r.raw);
  const id = r.body.sandbox_id;
  redis('HSET', `corral:{ws:${ws.id}}:sb:${id}`, 'egress', JSON.stringify({ allow: [], deny: [], iam: { tokens } }));
  return id;
}

test('a worker resolves its running sandbox\'s secrets and tokens; the token verifies against the JWKS', async () => {
  await secret('api-key', `k-${VALUE}`);
  const id = await sandbox(A);
  const t0 = Math.floor(Date.now() / 1000);
  const r = await resolve(runner(id), { sandbox: id, host: 'API.Example.com', secrets: ['api-key', 'API-KEY'], tokens: ['aws', 'gcp'] });
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(r.body.secrets, { 'api-key': `k-${VALUE}` });
  assert.deepEqual(Object.keys(r.body.tokens).sort(), ['aws', 'gcp']);
  const keys = await jwks(A);
  assert.equal(keys.length, 1);
  assert.deepEqual(Object.keys(keys[0]).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  assert.equal(keys[0].d, undefined, 'no private part');
  const [header, claims] = parts(r.body.tokens.aws);
  assert.deepEqual(header, { alg: 'ES256', typ: 'JWT', kid: keys[0].kid });
  assert.equal(claims.iss, issuer(A));
  assert.equal(claims.aud, 'sts.amazonaws.com');
  assert.equal(claims.sub, `spiffe://localhost/workspace/${A.id}/sandbox/${id}`);
  assert.ok(claims.iat >= t0 - 1 && claims.iat <= t0 + 5);
  assert.equal(claims.exp, claims.iat + 300);
  assert.match(claims.jti, /^[0-9a-f]{32}$/);
  assert.notEqual(parts(r.body.tokens.gcp)[1].jti, claims.jti);
  assert.equal(parts(r.body.tokens.gcp)[1].aud, '//iam.googleapis.com/x');
  assert.ok(verifies(r.body.tokens.aws, keys) && verifies(r.body.tokens.gcp, keys));
  // Altered, it no longer verifies.
  const [h, , s] = r.body.tokens.aws.split('.');
  const forged = Buffer.from(JSON.stringify({ ...claims, aud: 'other' })).toString('base64url');
  assert.ok(!verifies(`${h}.${forged}.${s}`, keys));
  // B's JWKS (B has a key once it rotated) does not verify A's token.
  assert.equal((await api('POST', '/v1/workspace/identity-keys/rotate', { key: B.owner })).status, 200);
  assert.ok(!verifies(r.body.tokens.aws, (await jwks(B)).map((k) => ({ ...k, kid: keys[0].kid }))));
});

test('resolve refuses names the sandbox does not have: 422 naming them, nothing answered', async () => {
  const id = await sandbox(A, { aws: AWS.aws, bad: { audience: 'x', tokenType: 'OIDC' } });
  await secret('only-in-b', `b-only-${VALUE}`, B);
  for (const [body, msg] of [
    [{ tokens: ['nope'] }, /^tokens: 'nope' is not defined in the sandbox's iam\.tokens$/],
    [{ tokens: ['bad'] }, /^tokens: 'bad' is not defined/],
    [{ secrets: ['no-such'] }, /^secrets: 'no-such' is not a secret of the sandbox's workspace$/],
    [{ secrets: ['api-key', 'only-in-b'], tokens: ['aws'] }, /^secrets: 'only-in-b' is not/],
  ]) {
    const r = await resolve(runner(id), { sandbox: id, host: 'h', ...body });
    assertError(r, 422, msg);
    noValue(r.raw);
    assert.ok(!r.raw.includes('eyJ'), 'no token in a refusal');
  }
  assertError(await resolve(runner(id), { sandbox: id, host: 'h', secrets: Array.from({ length: 17 }, (_, i) => `s${i}`) }), 400, /^secrets: at most 16/);
  assertError(await resolve(wa, { sandbox: id, host: '' }), 400, /^host: /);
  // A name no secret can have is refused as an unknown one.
  assertError(await resolve(runner(id), { sandbox: id, secrets: ['sec_00000000000000000000'] }), 422,
    /^secrets: 'sec_00000000000000000000' is not a secret/);
});

test('a worker reaches only sandboxes running on it: every other one is the same 404', async () => {
  const id = await sandbox(A);
  const w = runner(id);
  const body = { sandbox: id, host: 'h', secrets: ['api-key'], tokens: ['aws'] };
  const notFound = await resolve(w, { ...body, sandbox: '0123456789abcdef0123' });
  assertError(notFound, 404, /^sandbox not found$/);
  // Another worker of the same pool, a worker of another workspace's pool.
  for (const other of [w === wa ? wa2 : wa, wb]) {
    const r = await resolve(other, body);
    assert.equal(r.status, 404, `worker ${other.id}: ${r.raw}`);
    assert.deepEqual(r.body, notFound.body);
  }
  // A join token alone, a wrong worker secret, an API key: refused before any lookup.
  assertError(await resolve(w, body, { Authorization: `Bearer ${w.joinToken}` }), 403);
  assertError(await resolve(w, body, { ...w.headers(), 'X-Worker-Secret': 'f'.repeat(64) }), 403);
  assertError(await api('POST', '/v1/worker/egress-resolve', { key: A.member, body }), 403);
  assert.equal((await resolve(w, body)).status, 200);
  // Killed: minting stops with it.
  assert.equal((await api('DELETE', `/v1/sandboxes/${id}`, { key: A.member })).status, 204);
  assertError(await resolve(w, body), 404, /^sandbox not found$/);
});

test('rotation: a new signing key, the old one stays in the JWKS for a token\'s life', async () => {
  const id = await sandbox(A);
  const old = (await resolve(runner(id), { sandbox: id, host: 'h', tokens: ['aws'] })).body.tokens.aws;
  assertError(await api('POST', '/v1/workspace/identity-keys/rotate', { key: A.member }), 403);
  const r = await api('POST', '/v1/workspace/identity-keys/rotate', { key: A.owner });
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.previous_kid, parts(old)[0].kid);
  assert.ok(Date.parse(r.body.previous_published_until) > Date.now() + 290_000);
  const keys = await jwks(A);
  assert.deepEqual(keys.map((k) => k.kid), [r.body.kid, r.body.previous_kid]);
  const fresh = (await resolve(runner(id), { sandbox: id, host: 'h', tokens: ['aws'] })).body.tokens.aws;
  assert.equal(parts(fresh)[0].kid, r.body.kid);
  assert.ok(verifies(old, keys) && verifies(fresh, keys));
  // A retired key past its time leaves the JWKS at the next rotation.
  redis('ZADD', `corral:{ws:${A.id}}:idkeyold`, '1', r.body.previous_kid);
  assert.deepEqual((await jwks(A)).map((k) => k.kid), [r.body.kid]);
  const r2 = await api('POST', '/v1/workspace/identity-keys/rotate', { key: A.owner });
  assert.equal(redis('HEXISTS', `corral:{ws:${A.id}}:idkeys`, r.body.previous_kid), '0');
  assert.deepEqual((await jwks(A)).map((k) => k.kid), [r2.body.kid, r.body.kid]);
  await api('DELETE', `/v1/sandboxes/${id}`, { key: A.member });
});

test('the audit names secrets, versions, keys and resolves, never a value; Redis holds no key in clear', async () => {
  const r = await api('GET', '/v1/audit?limit=1000', { key: A.owner });
  assert.equal(r.status, 200, r.raw);
  noValue(r.raw);
  const ev = (name) => r.body.events.filter((e) => e.event === name);
  const created = ev('secret_create').map((e) => JSON.parse(e.reason));
  assert.ok(created.some((x) => x.secret === 'db-pass' && x.version === 1 && /^sec_/.test(x.id)));
  assert.ok(ev('secret_update').some((e) => JSON.parse(e.reason).version === 3));
  assert.ok(ev('secret_delete').some((e) => JSON.parse(e.reason).secret === 'db-pass'));
  assert.ok(ev('identity_key_rotate').length >= 2);
  const res = ev('egress_resolve');
  assert.ok(res.length >= 3);
  const one = res.find((e) => JSON.parse(e.reason).tokens.length === 2);
  assert.deepEqual(JSON.parse(one.reason), { host: 'api.example.com', secrets: ['api-key'], tokens: ['aws', 'gcp'] });
  assert.ok([wa.id, wa2.id].includes(one.worker_id));
  assert.equal(one.actor, `worker:${one.worker_id}`);
  assert.ok(one.sandbox_id);
  assert.ok(!r.raw.includes('eyJ'), 'no token in the audit');
  const keys = redis('HGETALL', `corral:{ws:${A.id}}:idkeys`);
  assert.ok(!keys.includes('PRIVATE KEY'), 'the private keys are sealed');
  assert.match(keys, /"sealed":"v1\./);
});
