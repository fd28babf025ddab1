// API keys in the e2b_ spelling (issue 9 point 5, decision 0038). E2B SDKs
// (JS 2.45.0) refuse, before any request, every key not matching
// ^e2b_[0-9a-f]+$. Corral now issues e2b_1<LL><ws><LL><id><secret>; keys issued
// before, ck_<ws>_<id>_<secret>, name the same record and keep working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { api, assertError, ckSpelling, corralctl, e2bSpelling, keyParts, newWorkspace, RUN } from '../lib/corral.mjs';

const SDK_CHECK = /^e2b_[0-9a-f]+$/; // API_KEY_PATTERN in e2b@2.45.0 dist/index.mjs
const A = newWorkspace();

test('every route that issues a key issues one the E2B SDK accepts', async () => {
  assert.match(A.owner, SDK_CHECK, 'corralctl workspace create');
  assert.match(A.member, SDK_CHECK, 'corralctl key create');
  const r = await api('POST', '/v1/keys', { key: A.owner, body: { role: 'member' } });
  assert.equal(r.status, 201, r.raw);
  assert.match(r.body.key, SDK_CHECK, 'POST /v1/keys');
  assert.deepEqual([keyParts(r.body.key).ws, keyParts(r.body.key).id], [A.id, r.body.id]);
});

test('a new key works on the control plane and the E2B API', async () => {
  const ws = await api('GET', '/v1/workspace', { key: A.member });
  assert.equal(ws.status, 200, ws.raw);
  assert.deepEqual([ws.body.id, ws.body.role], [A.id, 'member']);
  const list = await api('GET', '/v2/sandboxes', { key: A.member });
  assert.equal(list.status, 200, list.raw);
  const bearer = await api('GET', '/v1/workspace', { headers: { Authorization: `Bearer ${A.owner}` } });
  assert.equal(bearer.body.role, 'owner');
});

test('a ck_ key names the same record: it works, and dies with its e2b_ twin', async () => {
  const k = await api('POST', '/v1/keys', { key: A.owner, body: { role: 'owner' } });
  const old = ckSpelling(k.body.key); // exactly what Corral issued before decision 0038
  assert.match(old, /^ck_[0-9a-f]+_[0-9a-f]+_[0-9a-f]+$/);
  for (const key of [old, k.body.key]) {
    const r = await api('GET', '/v1/workspace', { key });
    assert.equal(r.status, 200, r.raw);
    assert.deepEqual([r.body.id, r.body.role], [A.id, 'owner']);
  }
  assert.equal((await api('DELETE', `/v1/keys/${k.body.id}`, { key: old })).status, 204);
  for (const key of [old, k.body.key]) assertError(await api('GET', '/v1/workspace', { key }), 401, /invalid API key/);
});

test('a malformed or forged e2b_ key is 401 like any bad key', async () => {
  const { ws, id, secret } = keyParts(A.member);
  const flip = (s) => s.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  const bad = [
    'e2b_', 'e2b_1', `e2b_2${A.member.slice(5)}`, // unknown spelling version
    A.member.slice(0, 5 + 2 + ws.length + 2 + id.length), // no secret
    A.member.toUpperCase().replace('E2B_', 'e2b_'), // uppercase hex
    `e2b_1${'21'}${ws}${A.member.slice(7 + ws.length)}`, // workspace length 33
    `${A.member}_`, `e2b_${ws}_${id}_${secret}`, // ck_ layout under e2b_
    e2bSpelling(ws, id, flip(secret)), // forged secret
    e2bSpelling(ws, id, `${secret}00`), // secret with extra digits
    e2bSpelling(ws.slice(1), id, secret), // a neighbouring workspace id
  ];
  for (const key of bad) {
    assertError(await api('GET', '/v1/workspace', { key }), 401, /invalid API key/);
    assertError(await api('GET', '/v2/sandboxes', { key }), 401);
  }
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).status, 200, 'the real key still works');
});

test('no log holds a key secret, in either spelling', async () => {
  const { secret } = keyParts(A.member);
  await api('GET', '/v1/workspace', { key: A.member });
  await api('GET', '/v1/workspace', { key: ckSpelling(A.member) });
  await api('GET', '/v1/workspace', { key: e2bSpelling(A.id, keyParts(A.member).id, `${secret}0`) });
  const dir = `${RUN}/log`;
  for (const f of readdirSync(dir)) {
    const text = readFileSync(`${dir}/${f}`, 'utf8');
    assert.ok(!text.includes(secret), `${f} holds a key secret`);
  }
});

test('corralctl key create prints the e2b_ spelling', () => {
  const k = corralctl('key', 'create', '--workspace', A.id, '--role', 'member');
  assert.match(k.key, SDK_CHECK);
  assert.equal(keyParts(k.key).ws, A.id);
});
