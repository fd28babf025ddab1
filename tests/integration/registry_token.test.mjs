// POST /v1/worker/registry-token through the real stack (decision 0079), as
// an attacker would try it: a scoped worker gets pull on its workspace's and
// the fleet's repositories and nothing of another workspace's; the unscoped
// fleet pulls every workspace's; a push outside a build in progress is
// refused; only an enrolled worker gets anything; the token works on the
// stack's own registry (its key and certificate agree) and never reaches a
// log. tests/registry/run.sh tries forged tokens on a registry of its own.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { api, assertError, newWorkspace, RUN } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const registry = readFileSync(`${RUN}/corral.conf`, 'utf8').match(/^registry = (.+)$/m)?.[1];
const ask = (w, body, headers = w.headers()) => api('POST', '/v1/worker/registry-token', { body, headers });
const repo = (ws, tpl = 'tpl-0123456789abcdef0123') => (ws ? `corral/w${ws.id}/${tpl}` : `corral/fleet/${tpl}`);

// The registry's answer to a catalogue read of repo with token.
async function registryStatus(token, name) {
  const r = await fetch(`http://${registry}/v2/${name}/tags/list`, { headers: { Authorization: `Bearer ${token}` } });
  await r.arrayBuffer();
  return r.status;
}

test('the stack names a registry in corral.conf', () => {
  assert.ok(registry, 'conf/stack.sh wrote no "registry = " line');
});

test('a scoped worker pulls its own workspace\'s and the fleet\'s templates, never another\'s', async () => {
  const a = newWorkspace();
  const b = newWorkspace();
  const w = await enrolWorker(workers, a, { slots: 1 });
  const own = await ask(w, { repository: repo(a) });
  assert.equal(own.status, 200, own.raw);
  assert.equal(own.body.expires_in, 300);
  assert.match(own.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  // The stack's registry accepts it: authorized, the repository just absent.
  assert.equal(await registryStatus(own.body.token, repo(a)), 404);
  assert.ok([401, 403].includes(await registryStatus(own.body.token, repo(b))));
  assert.equal((await ask(w, { repository: repo(null, 'base'), push: false })).status, 200);
  assertError(await ask(w, { repository: repo(b) }), 403, /another workspace's templates/);
  assertError(await ask(w, { repository: repo(b), push: true }), 403, /another workspace's templates/);
});

test('the unscoped fleet pulls every workspace\'s templates', async () => {
  const a = newWorkspace();
  const w = await enrolWorker(workers, null, { slots: 1 });
  const r = await ask(w, { repository: repo(a) });
  assert.equal(r.status, 200, r.raw);
  assert.equal(await registryStatus(r.body.token, repo(a)), 404);
});

test('a push outside a build in progress on this worker is refused', async () => {
  const a = newWorkspace();
  const w = await enrolWorker(workers, a, { slots: 1 });
  assertError(await ask(w, { repository: repo(a), push: true }), 403, /push only to the target of a build/);
  assertError(await ask(w, { repository: repo(null, 'base'), push: true }), 403, /push only/);
});

test('only an enrolled worker, with a well-formed body, gets a token', async () => {
  const a = newWorkspace();
  const w = await enrolWorker(workers, a, { slots: 1 });
  assertError(await ask(w, { repository: repo(a) }, { ...w.headers(), 'X-Worker-Secret': 'f'.repeat(64) }), 403);
  assertError(await ask(w, { repository: repo(a) }, { Authorization: w.headers().Authorization }), 403);
  const byKey = await api('POST', '/v1/worker/registry-token', { key: a.member, body: { repository: repo(a) } });
  assert.ok([401, 403].includes(byKey.status), byKey.raw);
  assertError(await ask(w, { repository: 'library/ubuntu' }), 400, /repository: must be a template's repository/);
  assertError(await ask(w, { repository: `${repo(a)}/../../w${'0'.repeat(16)}/x` }), 400, /repository/);
  assertError(await ask(w, { repository: repo(a), push: 'yes' }), 400, /push: must be a boolean/);
});

test('no token reaches a log of the stack', async () => {
  const a = newWorkspace();
  const w = await enrolWorker(workers, a, { slots: 1 });
  const r = await ask(w, { repository: repo(a) });
  assert.equal(r.status, 200, r.raw);
  const signature = r.body.token.split('.')[2];
  for (const f of readdirSync(`${RUN}/log`)) {
    assert.ok(!readFileSync(`${RUN}/log/${f}`, 'utf8').includes(signature), `the token is in log/${f}`);
  }
});
