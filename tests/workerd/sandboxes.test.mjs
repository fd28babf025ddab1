// workerd against real dockerd: create, idempotent create, kill, death reports,
// tiers. The control plane is tests/workerd/fake_cp.mjs over real HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { makeTls, FakeControlPlane } from './fake_cp.mjs';
import { workerdFiles, startWorkerd, stopWorkerd, requireDocker, containersLabelled, inspect,
  removeLabelled, waitFor, sleep } from './helpers.mjs';

let cp, files, wd, w;

before(async () => {
  await requireDocker();
  cp = await new FakeControlPlane(makeTls()).listen();
  files = workerdFiles({ url: cp.url, ca: cp.tls.ca, token: cp.joinToken('ab12') });
  wd = startWorkerd(files);
  w = await waitFor('handshake', () => cp.worker(), 60000);
  await waitFor('first heartbeat', () => w.beats.length > 0, 20000);
});

after(async () => {
  if (wd) await stopWorkerd(wd, 'SIGKILL');
  if (w) await removeLabelled(`corral.worker=${w.id}`);
  await cp.close();
});

const running = (sbid) => waitFor(`${sbid} reported running`, () => w.states.get(sbid)?.state === 'running' && w.states.get(sbid));
const mine = (sbid) => containersLabelled(`corral.worker=${w.id}`, `corral.sandbox=${sbid}`);

test('handshake reports capacity, egress false, templates and verified tiers', () => {
  const h = w.hello;
  assert.equal(h.slots, 8);
  assert.equal(h.cpu_cores, 4);
  assert.equal(h.memory_mb, 4096);
  assert.equal(h.egress, false);
  assert.equal(h.data_addr, '127.0.0.1:7001');
  assert.deepEqual(h.templates.sort(), ['base', 'exit3', 'oom']);
  const tiers = Object.fromEntries(h.runtimes.map((r) => [r.name, r.tier]));
  assert.equal(tiers.runc, 'CONTAINER');
  assert.equal(tiers.runsc, 'GVISOR', 'runsc must be verified by the probe');
  assert.equal(w.beats[0].resume, true);
  assert.equal(w.beats[0].full, true);
  assert.equal(JSON.stringify(h).includes('jn_'), false);
});

test('create makes one running container with labels, env, NanoCpus, Memory', async () => {
  const sb = cp.create(w, { env: { FOO: 'bar', E2B: 'x=y' }, cpu_cores: 1.5, memory_mb: 300 });
  await running(sb.id);
  const list = await mine(sb.id);
  assert.equal(list.length, 1);
  const c = await inspect(list[0].Id);
  assert.equal(c.State.Status, 'running');
  assert.equal(c.Name, `/corral-${sb.id}-${w.id}`);
  assert.deepEqual(
    { sb: c.Config.Labels['corral.sandbox'], ws: c.Config.Labels['corral.workspace'],
      wk: c.Config.Labels['corral.worker'], tier: c.Config.Labels['corral.tier'] },
    { sb: sb.id, ws: 'ab12', wk: w.id, tier: 'CONTAINER' });
  assert.ok(c.Config.Env.includes('FOO=bar'));
  assert.ok(c.Config.Env.includes('E2B=x=y'));
  assert.equal(c.HostConfig.NanoCpus, 1.5e9);
  assert.equal(c.HostConfig.Memory, 300 * 1024 * 1024);
  assert.equal(c.HostConfig.Runtime, 'runc');
  assert.deepEqual(c.Config.Cmd, ['sleep', 'infinity']);
  const log = readFileSync(files.log, 'utf8');
  assert.match(log, new RegExp(`sandbox ${sb.id} tier CONTAINER: create`));
});

test('a create delivered twice makes one container; both are acknowledged', async () => {
  const sb = cp.create(w, {});
  await running(sb.id);
  const id2 = cp.enqueue(w, { type: 'create', sandbox: { ...sb } });
  await waitFor('second create acked', () => cp.acked(w, id2));
  assert.equal((await mine(sb.id)).length, 1);
});

test('kill removes the container; a kill of a gone sandbox succeeds', async () => {
  const sb = cp.create(w, {});
  await running(sb.id);
  const k1 = cp.kill(w, sb.id);
  await waitFor('kill acked', () => cp.acked(w, k1));
  assert.equal((await mine(sb.id)).length, 0);
  const k2 = cp.kill(w, sb.id);
  await waitFor('second kill acked', () => cp.acked(w, k2));
  const k3 = cp.kill(w, 'sbneverexisted0000');
  await waitFor('kill of unknown acked', () => cp.acked(w, k3));
});

test('a container that exits is reported exited with its exit code', async () => {
  const sb = cp.create(w, { template: 'exit3' });
  const t0 = Date.now();
  const st = await waitFor('exit reported', () => w.states.get(sb.id)?.state === 'exited' && w.states.get(sb.id));
  assert.equal(st.reason, 'exit code 3');
  assert.ok(Date.now() - t0 < 10000, 'reported promptly (events wake the poll)');
});

test('an OOM-killed container is reported with reason OOMKilled', async () => {
  const sb = cp.create(w, { template: 'oom', memory_mb: 64 });
  const st = await waitFor('OOM reported', () => w.states.get(sb.id)?.state === 'exited' && w.states.get(sb.id), 40000);
  assert.equal(st.reason, 'OOMKilled');
});

test('unknown template and missing image are reported failed and acknowledged', async () => {
  const sb = cp.create(w, { template: 'nope' });
  const st = await waitFor('failed reported', () => w.states.get(sb.id)?.state === 'failed' && w.states.get(sb.id));
  assert.match(st.reason, /unknown template nope/);
  assert.equal((await mine(sb.id)).length, 0);
});

test('require GVISOR: a runsc create runs under runsc', async () => {
  const sb = cp.create(w, { runtime: 'runsc', tier: 'GVISOR' });
  await running(sb.id);
  const [c] = await mine(sb.id);
  const info = await inspect(c.Id);
  assert.equal(info.HostConfig.Runtime, 'runsc');
  assert.equal(info.Config.Labels['corral.tier'], 'GVISOR');
  assert.match(readFileSync(files.log, 'utf8'), new RegExp(`sandbox ${sb.id} tier GVISOR: create \\(runsc\\)`));
});

test('slots are a backstop: creates beyond them are refused', async () => {
  const before = (await containersLabelled(`corral.worker=${w.id}`)).filter((c) => c.State === 'running').length;
  const sbs = [];
  for (let i = 0; i < 8 - before + 2; i++) sbs.push(cp.create(w, {}));
  await waitFor('all answered', () => sbs.every((s) => w.states.get(s.id)), 60000);
  const failed = sbs.filter((s) => w.states.get(s.id).state === 'failed');
  assert.equal(failed.length, 2);
  assert.match(w.states.get(failed[0].id).reason, /no free slot/);
  for (const s of sbs) cp.kill(w, s.id);
  await waitFor('killed', async () => (await containersLabelled(`corral.worker=${w.id}`))
    .filter((c) => c.State === 'running').length <= before, 60000);
  await sleep(10);
});
