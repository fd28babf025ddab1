// The operator's ceilings (decision 0063): every workspace limit an owner may
// PATCH has a ceiling in corral.conf. At the ceiling a PATCH is applied; one
// above is 400 naming the ceiling and its key, and changes nothing, not even
// the other fields of that PATCH; a member may set none of them; GET shows the
// ceilings; a limit stored above a ceiling (before the operator lowered it) is
// capped, in GET and in what a create gets. And the corral.conf `make up`
// writes has decision 0034's fleet share.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { api, assertError, newWorkspace, redis, RUN } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
const confOf = (text) => Object.fromEntries(text.split('\n')
  .map((l) => l.split(/\s*=\s*/)).filter((kv) => kv.length === 2));
const conf = confOf(readFileSync(`${RUN}/corral.conf`, 'utf8'));

// Each limit: its corral.conf ceiling key, corral.conf's default for it, the
// limit's own range, and a valid value other than its default (to carry in a
// PATCH that must not be applied).
const LIMITS = {
  max_concurrent_sandboxes: { key: 'ceiling_max_concurrent_sandboxes', dflt: 100, max: 100000, other: 3 },
  sandbox_pids_limit: { key: 'ceiling_sandbox_pids_limit', dflt: 4096, max: 65536, other: 512 },
  sandbox_disk_mb: { key: 'ceiling_sandbox_disk_mb', dflt: 20480, max: 1048576, other: 2048 },
  sandbox_timeout_s: { key: 'sandbox_max_timeout_s', dflt: 86400, max: 86400, other: 60 },
};
const ceilingOf = (name) => Number(conf[LIMITS[name].key] ?? LIMITS[name].dflt);
const limitsOf = (ws) => Object.fromEntries(Object.keys(LIMITS).map((n) => [n, ws[n]]));
const get = async (key) => {
  const r = await api('GET', '/v1/workspace', { key });
  assert.equal(r.status, 200, r.raw);
  return r.body;
};
const patch = (key, body) => api('PATCH', '/v1/workspace', { key, body });

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

before(() => {
  // Ceiling + 1 must be a ceiling's refusal, not the range's.
  for (const name of Object.keys(LIMITS)) {
    assert.ok(ceilingOf(name) < LIMITS[name].max, `run with ${LIMITS[name].key} below ${LIMITS[name].max}`);
  }
});

test('GET /v1/workspace shows the ceilings the server runs with', async () => {
  const A = newWorkspace();
  const ws = await get(A.member);
  assert.deepEqual(ws.ceilings, Object.fromEntries(Object.keys(LIMITS).map((n) => [n, ceilingOf(n)])));
});

for (const name of Object.keys(LIMITS)) {
  test(`${name}: the ceiling is accepted, one above is 400 naming it and changes nothing`, async () => {
    const A = newWorkspace();
    const c = ceilingOf(name);
    const before = limitsOf(await get(A.member));
    const others = Object.keys(LIMITS).filter((n) => n !== name);
    const message = new RegExp(`^${name}: ${c + 1} is above this installation's ceiling of ${c} ` +
      `\\(corral\\.conf ${LIMITS[name].key}\\)$`);
    // Alone, with valid fields before it, and with valid fields after it.
    const alone = { [name]: c + 1 };
    const first = Object.fromEntries([...others.map((n) => [n, LIMITS[n].other]), [name, c + 1]]);
    const last = Object.fromEntries([[name, c + 1], ...others.map((n) => [n, LIMITS[n].other])]);
    for (const body of [alone, first, last]) {
      assertError(await patch(A.owner, body), 400, message);
      assert.deepEqual(limitsOf(await get(A.member)), before, `${JSON.stringify(body)} changed nothing`);
    }
    // A member is refused whatever the value: the owner's setting.
    assert.deepEqual((await patch(A.member, { [name]: c })).body, { code: 403, message: 'owner_required' });
    assert.deepEqual(limitsOf(await get(A.member)), before, 'the member PATCH changed nothing');
    const at = await patch(A.owner, { [name]: c });
    assert.equal(at.status, 200, at.raw);
    assert.equal(at.body[name], c);
    assert.deepEqual(limitsOf(await get(A.member)), { ...before, [name]: c }, 'only that field changed');
  });
}

test('limits stored above the ceilings (set before the operator lowered them) are capped in GET and in a create', async () => {
  const A = newWorkspace();
  // What a workspace holds after an older server let its owner set more.
  redis('HSET', `corral:{ws:${A.id}}:info`, 'max_concurrent', '100000', 'pids_limit', '65536',
    'disk_mb', '1048576', 'timeout_s', '86400');
  const ws = await get(A.member);
  assert.deepEqual(limitsOf(ws), ws.ceilings);
  await enrolWorker(workers, A);
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.pids_limit, ceilingOf('sandbox_pids_limit'));
  assert.equal(r.body.disk_mb, ceilingOf('sandbox_disk_mb'));
  assert.equal(r.body.timeout, ceilingOf('sandbox_timeout_s'));
  assert.equal((await api('DELETE', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member })).status, 204);
});

// `make up` runs conf/stack.sh up with no profile: what it writes is `conf/stack.sh
// conf` in an environment of nothing else (this suite's CORRAL_* must not leak in).
function stackConf(env = {}) {
  const dir = mkdtempSync(`${tmpdir()}/corral-conf-`);
  try {
    const text = execFileSync('bash', [`${ROOT}conf/stack.sh`, 'conf'],
      { encoding: 'utf8', env: { PATH: process.env.PATH, CORRAL_RUN: dir, ...env } });
    assert.deepEqual(readdirSync(dir), [], 'printing the config wrote nothing');
    return confOf(text);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the corral.conf make up writes: fleet_share 50 and the production ceilings (decisions 0034, 0063)', () => {
  const dev = stackConf();
  assert.equal(dev.fleet_share, '50');
  assert.equal(dev.ceiling_max_concurrent_sandboxes, String(LIMITS.max_concurrent_sandboxes.dflt));
  for (const k of ['ceiling_sandbox_pids_limit', 'ceiling_sandbox_disk_mb']) {
    assert.equal(dev[k], undefined, `${k}: corral.conf's default`);
  }
  assert.equal(dev.workspace_max_concurrent_ceiling, undefined, 'the old key is no longer written');
  assert.equal(stackConf({ CORRAL_PROFILE: 'test' }).fleet_share, '50');
  // bench measures one tenant on the whole fleet; a developer may ask for it too.
  assert.equal(stackConf({ CORRAL_PROFILE: 'bench' }).fleet_share, '100');
  const own = stackConf({ CORRAL_FLEET_SHARE: '100', CORRAL_CEILING_MAX_CONCURRENT: '500' });
  assert.equal(own.fleet_share, '100');
  assert.equal(own.ceiling_max_concurrent_sandboxes, '500');
});
