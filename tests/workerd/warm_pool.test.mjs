// Warm sandboxes (decision 0082): a worker keeps `warm_pool` sandboxes
// started, nobody's, walled, serving nothing; a create claims one (its
// token, env vars and limits given at the claim), the pool refills, and a
// claimed one is a sandbox like any other: killed, adopted after a crash,
// resumed after a pause without memory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, corralctl, newWorkspace, eventually, setLimit } from '../lib/corral.mjs';
import {
  stackWorker, cleanupWorkers, createSb, deleteSb, getSb, envdOf, envdRun, inspect, docker,
  containersLabelled, stopWorkerd, restartWorker, enrolledAs, sleep, envdUnary, workerView, sandboxLog,
} from './helpers.mjs';

const POOL = 2;
// The memory, pids and cpu quota (per 100 ms) its cgroup enforces, read
// inside: cgroup v2's files, or v1's per-controller ones (this host's).
const LIMITS = `if [ -f /sys/fs/cgroup/memory.max ]; then cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max;
  cut -d' ' -f1 /sys/fs/cgroup/cpu.max; else cat /sys/fs/cgroup/memory/memory.limit_in_bytes
  /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us; fi`.replace(/\n\s*/g, ' ');
let ws, w;

const warmOnes = async () => (await containersLabelled(`corral.worker=${w.id}`, 'corral.role=warm'))
  .filter((c) => (c.Names?.[0] ?? '').startsWith('/corral-warm_') && c.State === 'running');
const fullPool = () => eventually(async () => {
  const got = await warmOnes();
  return got.length === POOL && got;
}, { timeout: 60_000, what: `${POOL} warm sandboxes` });

before(async () => {
  ws = newWorkspace();
  await setLimit(ws, 40);
  w = await stackWorker(ws, { extra: `warm_pool = base=${POOL}\nslots = 40\ncpu_cores = 64\nmemory_mb = 65536` });
});
after(cleanupWorkers);

test('a warm sandbox serves nothing, is nobody\'s and is listed nowhere', async () => {
  const [c] = await fullPool();
  const info = await inspect(c.Id);
  assert.equal(info.Config.Labels['corral.workspace'], '', 'no workspace');
  assert.ok(!info.Config.Env.some((e) => e.startsWith('CORRAL_ENVD_ACCESS_TOKEN=')), 'no access token');
  const ip = Object.values(info.NetworkSettings.Networks)[0].IPAddress;
  const envd = { base: `http://${ip}:49983`, token: '' };
  const r = await envdUnary(envd, 'process.Process/List', {});
  assert.equal(r.status, 503, 'envd serves nothing before the claim');
  const forged = await fetch(`${envd.base}/init`, { method: 'POST', headers: { 'X-Corral-Init': 'guess' }, body: '{}' });
  assert.equal(forged.status, 401);
  const warmId = info.Config.Labels['corral.sandbox'];
  assert.equal((await getSb(ws, warmId)).status, 404, 'not a sandbox of the API');
  const list = await api('GET', '/v1/sandboxes', { key: ws.member });
  assert.ok(!JSON.stringify(list.body).includes(warmId));
  await eventually(async () => {
    const pools = (await workerView(ws, w.id))?.warm_pools;
    return pools?.[0]?.ready === POOL && pools;
  }, { timeout: 15_000, what: 'GET /v1/workers shows the pool' });
  const [pool] = (await workerView(ws, w.id)).warm_pools;
  assert.deepEqual(pool, { template: 'base', runtime: 'runc', size: POOL, ready: POOL });
  const listed = corralctl('workers', '--workspace', ws.id).find((x) => x.worker_id === w.id);
  assert.deepEqual(listed?.warm_pools, [pool], 'corralctl workers shows the pool too');
});

test('a create claims one: its token, env vars and limits; a second gets another; the pool refills', async () => {
  const before = new Set((await fullPool()).map((c) => c.Id));
  const made = [];
  for (const n of [1, 2]) {
    const r = await createSb(ws, { env: { WARM_VAR: `v${n}` }, memory_mb: 256 * n, cpu_cores: n });
    assert.equal(r.status, 201, r.raw);
    made.push(r.body);
  }
  const ids = [];
  for (const [i, sb] of made.entries()) {
    const envd = await envdOf(w.id, sb.sandbox_id, sb.envd_access_token);
    ids.push(envd.info.Id);
    assert.ok(before.has(envd.info.Id), 'the container was a warm one');
    const out = await envdRun(envd, `echo "$WARM_VAR"; ${LIMITS}`);
    const [v, mem, pids, cpu] = out.stdout.trim().split('\n');
    assert.ok(out.stdout.split('\n').length >= 4, `the limits read inside: ${JSON.stringify(out)}`);
    assert.equal(v, `v${i + 1}`);
    assert.equal(Number(mem), 256 * (i + 1) * 1048576);
    assert.equal(Number(pids), 1024);
    assert.equal(Number(cpu), 100000 * (i + 1), 'cpu quota per 100 ms period');
    const wrong = await envdUnary(envd, 'process.Process/List', {}, { token: 'not-it' });
    assert.equal(wrong.status, 401, 'its token is required');
    const none = await envdUnary(envd, 'process.Process/List', {}, { token: '' });
    assert.equal(none.status, 401);
    assert.equal((await envdUnary(envd, 'process.Process/List', {})).status, 200);
    const again = await fetch(`${envd.base}/init`, { method: 'POST', body: '{}' });
    assert.equal(again.status, 409, 'no second claim');
  }
  assert.notEqual(ids[0], ids[1]);
  const refilled = await fullPool();
  assert.ok(refilled.every((c) => !ids.includes(c.Id)), 'a claimed sandbox never returns to the pool');
  for (const sb of made) assert.equal((await deleteSb(ws, sb.sandbox_id)).status, 204);
  for (const id of ids) await eventually(async () => (await inspect(id)) === null, { timeout: 20_000, what: 'the claimed container gone' });
});

// A container update (the claim's limits) was 40-50 ms of a 68 ms claim in
// make bench: warm sandboxes are made with the limits the last claim asked
// for, a claim that asks the same takes one of those and skips the update,
// and one that asks others still gets its own.
test('the pool learns the limits claims ask for: a claim that asks the same needs no update; another gets its own', async () => {
  const MiB = 1048576;
  const claim = async (memory_mb) => {
    const r = await createSb(ws, { memory_mb, cpu_cores: 1 });
    assert.equal(r.status, 201, r.raw);
    const envd = await envdOf(w.id, r.body.sandbox_id, r.body.envd_access_token);
    const [mem, , cpu] = (await envdRun(envd, LIMITS)).stdout.trim().split('\n');
    assert.equal(Number(mem), memory_mb * MiB, `memory limit of a claim asking ${memory_mb} MB`);
    assert.equal(Number(cpu), 100000, 'cpu quota');
    return { sb: r.body, made: envd.info.Config.Labels['corral.role'] === 'warm', line: sandboxLog(w, r.body.sandbox_id, 'CONTAINER') };
  };
  await fullPool();
  const first = await claim(384);
  assert.ok(first.made, 'claimed from the pool');
  // Made, and ready: its envd answered and the worker told so (a running
  // container may still be waiting for its envd, and is not handed out yet).
  await eventually(async () => {
    let learned = false;
    for (const c of await warmOnes()) learned ||= (await inspect(c.Id))?.HostConfig.Memory === 384 * MiB;
    return learned && (await workerView(ws, w.id))?.warm_pools?.[0]?.ready === POOL;
  }, { timeout: 60_000, what: 'a warm sandbox made with the limits the last claim asked for, ready' });
  const same = await claim(384);
  assert.ok(same.made, 'claimed from the pool');
  assert.match(same.line, /claimed warm sandbox warm_[0-9a-f]+ \(made with its limits\)/);
  const other = await claim(640);
  assert.ok(other.made, 'claimed from the pool');
  assert.match(other.line, /claimed warm sandbox warm_[0-9a-f]+$/m, 'a claim asking other limits gets them by an update');
  for (const x of [first, same, other]) assert.equal((await deleteSb(ws, x.sb.sandbox_id)).status, 204);
});

test('a create the pool cannot serve is cold: an egress policy, another disk size', async () => {
  const warm = new Set((await fullPool()).map((c) => c.Id));
  const r = await createSb(ws, { allowed_domains: ['example.com'] });
  assert.equal(r.status, 201, r.raw);
  const envd = await envdOf(w.id, r.body.sandbox_id, r.body.envd_access_token);
  assert.ok(!warm.has(envd.info.Id), 'a policy sandbox is made cold');
  assert.equal(envd.info.Config.Labels['corral.role'], 'sandbox');
  assert.equal((await warmOnes()).length, POOL, 'the pool untouched');
  await deleteSb(ws, r.body.sandbox_id);
  // A disk size of its own: fixed when a container is made, so never warm.
  const set = (body) => api('PATCH', '/v1/workspace', { key: ws.owner, body });
  const was = (await api('GET', '/v1/workspace', { key: ws.owner })).body.sandbox_disk_mb;
  assert.equal((await set({ sandbox_disk_mb: 2048 })).status, 200);
  try {
    const d = await createSb(ws, {});
    assert.equal(d.status, 201, d.raw);
    const e = await envdOf(w.id, d.body.sandbox_id, d.body.envd_access_token);
    assert.ok(!warm.has(e.info.Id) && e.info.Config.Labels['corral.role'] === 'sandbox', 'another disk size is made cold');
    assert.equal(e.info.Config.Labels['corral.disk_mb'], '2048');
    await deleteSb(ws, d.body.sandbox_id);
  } finally {
    await set({ sandbox_disk_mb: was });
  }
});

test('30 creates against a pool of 2 all succeed: the rest are cold', async () => {
  const all = await Promise.all(Array.from({ length: 30 }, () => createSb(ws, {})));
  const ids = all.map((r) => r.body?.sandbox_id).filter(Boolean);
  try {
    assert.deepEqual([...new Set(all.map((r) => r.status))], [201], all.map((r) => r.raw).find((x) => !x.includes('sandbox_id')));
    assert.equal(new Set(ids).size, 30);
    const ctrs = new Set();
    for (const sb of all) ctrs.add((await envdOf(w.id, sb.body.sandbox_id, sb.body.envd_access_token)).info.Id);
    assert.equal(ctrs.size, 30, 'no container serves two sandboxes');
  } finally { // the next tests count this worker's containers and networks
    await Promise.all(ids.map((id) => deleteSb(ws, id)));
  }
});

test('sandboxes killed the moment their claim is answered leave no container behind', async () => {
  // The kill races the claim's rename; dockerd once left such a container
  // "Removal In Progress" for good, without a name.
  for (let i = 0; i < 4; i++) {
    await fullPool();
    const r = await createSb(ws, {});
    assert.equal(r.status, 201, r.raw);
    assert.equal((await deleteSb(ws, r.body.sandbox_id)).status, 204);
  }
  let stuck = [];
  await eventually(async () => {
    stuck = (await containersLabelled(`corral.worker=${w.id}`))
      .filter((c) => c.Labels['corral.role'] !== 'egress-pool' && !(c.Names?.[0] ?? '').startsWith('/corral-warm_'));
    return stuck.length === 0;
  }, { timeout: 30_000, what: 'the killed sandboxes\' containers gone' }).catch(() => {});
  assert.deepEqual(stuck.map((c) => `${c.Names?.[0]} ${c.State}`), [], 'every killed sandbox\'s container removed');
});

test('kill -9 of workerd: claimed sandboxes adopted, warm ones replaced, none handed out twice', async () => {
  const warm = (await fullPool()).map((c) => c.Id);
  const r = await createSb(ws, { env: { KEEP: 'me' } });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const claimed = (await envdOf(w.id, sbid, r.body.envd_access_token)).info.Id;
  assert.ok(warm.includes(claimed));
  const warmNets = async () => (await docker('GET', `/networks?filters=${encodeURIComponent(
    JSON.stringify({ label: [`corral.worker=${w.id}`] }))}`)).body.map((n) => n.Name).filter((n) => n.includes('warm_'));
  const oldNets = await warmNets();
  assert.ok(oldNets.length >= 2, `the control: the warm networks are found (${oldNets})`);
  const seen = enrolledAs(w.files.log).length;
  await stopWorkerd(w.wd, 'SIGKILL');
  // Every unclaimed one of the last run, the refill it had begun included
  // (the one not claimed above may have been replaced meanwhile: a member
  // made before the pool learned limits is).
  const old = (await warmOnes()).map((c) => c.Id).filter((id) => id !== claimed);
  assert.ok(old.length >= 1, 'the control: the last run\'s unclaimed ones are listed');
  restartWorker(w);
  await eventually(() => enrolledAs(w.files.log).length > seen, { timeout: 30_000, what: 'workerd enrolled again' });
  await eventually(async () => {
    const got = await warmOnes();
    return got.length === POOL && got.every((c) => !old.includes(c.Id));
  }, { timeout: 60_000, what: `${POOL} warm sandboxes of the new run` });
  for (const id of old) assert.equal(await inspect(id), null, 'warm ones of the last run are removed, not reused');
  const envd = await envdOf(w.id, sbid, r.body.envd_access_token);
  assert.equal(envd.info.Id, claimed, 'the claimed one is its sandbox still');
  assert.equal((await envdRun(envd, 'echo $KEEP')).stdout.trim(), 'me');
  // sleep: a heartbeat or two, so that the control plane heard the full listing
  await sleep(1500);
  assert.equal((await getSb(ws, sbid)).body.state, 'running');
  assert.equal((await deleteSb(ws, sbid)).status, 204);
  await eventually(async () => (await inspect(claimed)) === null, { timeout: 20_000, what: 'killed after adoption' });
  // None of the old run's warm networks is left without its container (the
  // claimed one's goes with its kill, just after its container). A network
  // the new run's pool is making at this moment has no container yet: only
  // the old ones count. And every warm network has its container soon
  // (orphans never do).
  let left = [], orphans = [];
  await eventually(async () => {
    const now = await warmNets();
    const held = new Set((await containersLabelled(`corral.worker=${w.id}`, 'corral.role=warm'))
      .map((c) => `corral-${c.Labels['corral.sandbox']}-${w.id}`));
    left = oldNets.filter((n) => now.includes(n) && !held.has(n));
    orphans = now.filter((n) => !held.has(n));
    return left.length === 0 && orphans.length === 0;
  }, { timeout: 20_000, what: "the old run's warm networks to go" }).catch(() => {});
  assert.deepEqual(left, [], "the old run's warm networks are removed");
  assert.deepEqual(orphans, [], 'no warm network without its container');
});

test('a claim that workerd died before renaming is found by its record, adopted and renamed', async () => {
  await fullPool();
  const r = await createSb(ws, { env: { KEEP: 'named' } });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const { info } = await envdOf(w.id, sbid, r.body.envd_access_token);
  const warmName = `corral-${info.Config.Labels['corral.sandbox']}-${w.id}`;
  const seen = enrolledAs(w.files.log).length;
  await stopWorkerd(w.wd, 'SIGKILL');
  // As if workerd had died between the claim's answer and its rename.
  const back = await docker('POST', `/containers/${info.Id}/rename?name=${warmName}`);
  assert.equal(back.status, 204, JSON.stringify(back.body));
  restartWorker(w);
  await eventually(() => enrolledAs(w.files.log).length > seen, { timeout: 30_000, what: 'workerd enrolled again' });
  const envd = await envdOf(w.id, sbid, r.body.envd_access_token);
  assert.equal(envd.info.Id, info.Id, 'the same container, named for its sandbox again, not removed as an unclaimed one');
  assert.equal((await envdRun(envd, 'echo $KEEP')).stdout.trim(), 'named');
  // sleep: a heartbeat or two, so that the control plane heard the full listing
  await sleep(1500);
  assert.equal((await getSb(ws, sbid)).body.state, 'running');
  assert.equal((await deleteSb(ws, sbid)).status, 204);
  await eventually(async () => (await inspect(info.Id)) === null, { timeout: 20_000, what: 'killed after adoption' });
});

test('a claimed sandbox paused without memory and resumed is told its token and env again', async () => {
  await fullPool();
  const r = await createSb(ws, { env: { BACK: 'again' } });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  assert.equal((await api('POST', `/v1/sandboxes/${sbid}/pause`, { key: ws.member, body: { keep_memory: false } })).status, 200);
  await eventually(async () => (await getSb(ws, sbid)).body.state === 'paused', { timeout: 30_000, what: 'paused' });
  assert.equal((await api('POST', `/v1/sandboxes/${sbid}/resume`, { key: ws.member, body: {} })).status, 200);
  await eventually(async () => (await getSb(ws, sbid)).body.state === 'running', { timeout: 30_000, what: 'running again' });
  const envd = await envdOf(w.id, sbid, r.body.envd_access_token);
  assert.equal((await envdRun(envd, 'echo $BACK')).stdout.trim(), 'again');
  assert.equal((await envdUnary(envd, 'process.Process/List', {}, { token: '' })).status, 401);
  await deleteSb(ws, sbid);
});

test('a snapshot of a claimed sandbox keeps its files and env vars, never its init secret', async () => {
  await fullPool();
  const r = await createSb(ws, { env: { SNAP_VAR: 'kept' } });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const envd = await envdOf(w.id, sbid, r.body.envd_access_token);
  assert.equal(envd.info.Config.Labels['corral.role'], 'warm', 'it was claimed');
  await envdRun(envd, 'echo hi > /home/user/f.txt');
  const snap = await api('POST', `/v1/sandboxes/${sbid}/snapshots`, { key: ws.member, body: {} });
  assert.equal(snap.status, 201, snap.raw);
  const again = await createSb(ws, { template: snap.body.snapshot_id });
  assert.equal(again.status, 201, again.raw);
  const e2 = await envdOf(w.id, again.body.sandbox_id, again.body.envd_access_token);
  const out = await envdRun(e2, 'echo "$SNAP_VAR"; cat /home/user/f.txt; echo "[${CORRAL_ENVD_INIT_TOKEN-unset}]"');
  assert.deepEqual(out.stdout.trim().split('\n'), ['kept', 'hi', '[unset]']);
  for (const id of [sbid, again.body.sandbox_id]) await deleteSb(ws, id);
});

test('from a claimed sandbox, as root, the warm ones are out of reach', async () => {
  await fullPool();
  const r = await createSb(ws, {});
  assert.equal(r.status, 201, r.raw);
  const envd = await envdOf(w.id, r.body.sandbox_id, r.body.envd_access_token);
  const others = [];
  for (const c of await warmOnes()) {
    const info = await inspect(c.Id);
    others.push(Object.values(info.NetworkSettings.Networks)[0].IPAddress);
  }
  assert.ok(others.length > 0, 'warm ones to try');
  const tryPort = (ip) => `timeout 3 bash -c 'echo > /dev/tcp/${ip}/49983' 2>/dev/null && echo open || echo closed`;
  const own = await envdRun(envd, tryPort('127.0.0.1'), { user: 'root' });
  assert.equal(own.stdout.trim(), 'open', 'the probe works: its own envd');
  for (const ip of others) {
    const out = await envdRun(envd, tryPort(ip), { user: 'root' });
    assert.equal(out.stdout.trim(), 'closed', `warm sandbox ${ip} reached`);
  }
  await deleteSb(ws, r.body.sandbox_id);
});
