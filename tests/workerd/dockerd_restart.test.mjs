// dockerd restarted (without live-restore: every container dies) under a
// workerd that keeps egress proxies ready (issue 34): afterwards every create
// with an allow-list gets a proxy that runs and reaches the allowed stand-in,
// and nothing dead is left behind: no exited container, no network without a
// running container of its own, no config directory without its sandbox.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, copyFileSync } from 'node:fs';
import { newWorkspace, eventually } from '../lib/corral.mjs';
import { startStandins, egressHostsConf, PORT } from '../lib/standins.mjs';
import { isReadyProxy } from '../lib/engine.mjs';
import { stackWorker, cleanupWorkers, createSb, getSb, deleteSb, ctrsOf, envdOf, envdRun, docker, ROOT,
  logOf } from './helpers.mjs';

let A, w, standins;
const ALLOWED = { allowed_domains: ['api.allowed.test'] };

// An HTTP GET through the sandbox's proxy (urllib reads HTTP_PROXY).
const FETCH = (url) => `
import urllib.request
try: print(urllib.request.urlopen('${url}', timeout=5).read().decode().strip())
except Exception as e: print(type(e).__name__, str(e)[:120])`;

async function reachesAllowed(sbid) {
  const envd = await envdOf(w.id, sbid);
  const out = await envdRun(envd, `python3 - <<'PY'\n${FETCH(`http://api.allowed.test:${PORT}/`)}\nPY`);
  return out.stdout.trim();
}

// A create right after dockerd's return may find the worker still saying
// "dockerd unreachable" (its next heartbeat clears it): 503, which a client
// retries. Retried here for at most 30 s; any other answer is final.
async function createAfterReturn(body) {
  let r;
  await eventually(async () => (r = await createSb(A, body)).status !== 503,
    { timeout: 30000, every: 500, what: 'the worker taking creates again after dockerd returned' });
  return r;
}

const readyProxies = async () => (await ctrsOf(w.id)).filter((c) => isReadyProxy(c) && c.State === 'running');

before(async () => {
  standins = await startStandins();
  A = newWorkspace();
  w = await stackWorker(A, { extra: `${egressHostsConf()}\negress_pool = 3\ncpu_cores = 64\nmemory_mb = 65536\nslots = 16` });
});

after(async () => {
  // Kept for a failure's reading: cleanup removes the worker's directory.
  if (w) copyFileSync(w.files.log, `${process.env.CORRAL_RUN}/log/workerd-dockerd-restart.log`);
  await cleanupWorkers();
  standins?.stop();
});

test('after a dockerd restart: every allow-list create gets a running proxy that reaches the allowed host; nothing dead is left', async () => {
  const before = await createSb(A, ALLOWED);
  assert.equal(before.status, 201, before.raw);
  assert.equal(await reachesAllowed(before.body.sandbox_id), 'public stand-in', 'the control, before the restart');
  await eventually(async () => (await readyProxies()).length >= 2, { timeout: 60000, what: 'ready proxies in the pool' });

  execFileSync('bash', [`${ROOT}tests/lib/docker.sh`, 'restart'], { stdio: 'inherit' });
  await eventually(async () => (await getSb(A, before.body.sandbox_id)).body.state === 'exited',
    { timeout: 15000, what: 'the sandbox that died with dockerd reported' });

  // Right away: the pool held proxies that died with dockerd.
  for (let i = 0; i < 3; i++) {
    const r = await createAfterReturn(ALLOWED);
    assert.equal(r.status, 201, r.raw);
    assert.equal(await reachesAllowed(r.body.sandbox_id), 'public stand-in', `create ${i + 1} after the restart`);
    const del = await deleteSb(A, r.body.sandbox_id);
    assert.equal(del.status, 204, del.raw);
  }
  // Nothing dead left: containers all running, every network in use, no stray directory.
  await eventually(async () => {
    const ctrs = await ctrsOf(w.id);
    const dead = ctrs.filter((c) => c.State !== 'running').map((c) => `${c.Names[0]} ${c.State}`);
    const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${w.id}`] }));
    const nets = (await docker('GET', `/networks?filters=${f}`)).body || [];
    const used = new Set(ctrs.flatMap((c) => Object.values(c.NetworkSettings?.Networks || {}).map((n) => n.NetworkID)));
    const idle = nets.filter((n) => !used.has(n.Id)).map((n) => n.Name);
    const dirs = readdirSync(`${w.files.dir}/state/egress`).filter((d) => !d.startsWith('p-'));
    return dead.length === 0 && idle.length === 0 && dirs.length === 0 ? true
      : (console.log({ dead, idle, dirs }), false);
  }, { timeout: 60000, every: 1000, what: 'no dead container, idle network or stray proxy directory' });
  assert.match(logOf(w), /dockerd answers again/);
});

// A network whose removal dockerd refuses at a kill (here: a container that
// is not the sandbox's still on it, as a half-restored endpoint after a
// restart would be) is not left for good: once it can go, the worker's
// sweep removes it (decision 0085).
test('a sandbox network whose removal dockerd refused is swept once it can go', async () => {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const net = `corral-${sbid}-${w.id}`;
  const c = await docker('POST', '/containers/create', { Image: 'corral/base', Cmd: ['sleep', 'infinity'], HostConfig: { NetworkMode: net } });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  try {
    assert.equal((await docker('POST', `/containers/${c.body.Id}/start`)).status, 204);
    assert.equal((await deleteSb(A, sbid)).status, 204);
    await eventually(() => new RegExp(`network \\S+ of ${sbid} not removed`).test(logOf(w)),
      { timeout: 20000, what: 'the removal of the sandbox network refused' });
    assert.equal((await docker('GET', `/networks/${net}`)).status, 200, 'still there while something is on it');
  } finally {
    await docker('DELETE', `/containers/${c.body.Id}?force=1`);
  }
  // Its line comes once the sweep's other removals are done too.
  await eventually(async () => (await docker('GET', `/networks/${net}`)).status === 404 &&
    new RegExp(`"sandbox":"${sbid}".*its network outlived it: removed`).test(logOf(w)),
  { timeout: 20000, what: 'the network swept, and said so' });
});
