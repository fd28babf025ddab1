// Restarts and breaks: adoption, identity kept, kill -9 between delivery and
// ack, SIGTERM, control plane outage, and never touching another worker id.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, readFileSync } from 'node:fs';
import { makeTls, FakeControlPlane } from './fake_cp.mjs';
import { workerdFiles, startWorkerd, stopWorkerd, requireDocker, containersLabelled, docker,
  removeLabelled, waitFor, sleep } from './helpers.mjs';

let cp, files, wd, w;
const OTHER = 'wk_someoneelse0001';

before(async () => {
  await requireDocker();
  cp = await new FakeControlPlane(makeTls()).listen();
  files = workerdFiles({ url: cp.url, ca: cp.tls.ca, token: cp.joinToken('cd34') });
  // A container of another worker id on the same dockerd: must never be touched.
  const r = await docker('POST', `/containers/create?name=corral-sbother-${OTHER}`, {
    Image: 'corral/base', Cmd: ['sleep', 'infinity'],
    Labels: { 'corral.worker': OTHER, 'corral.sandbox': 'sbother', 'corral.tier': 'CONTAINER' } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal((await docker('POST', `/containers/${r.body.Id}/start`)).status, 204);
  wd = startWorkerd(files);
  w = await waitFor('handshake', () => cp.worker(), 60000);
});

after(async () => {
  if (wd) await stopWorkerd(wd, 'SIGKILL');
  if (w) await removeLabelled(`corral.worker=${w.id}`);
  await removeLabelled(`corral.worker=${OTHER}`);
  await cp.close();
});

const mine = (sbid) => containersLabelled(`corral.worker=${w.id}`, `corral.sandbox=${sbid}`);
const runningOn = (sbid) => waitFor(`${sbid} running`, () => w.states.get(sbid)?.state === 'running');

test('identity is saved 0600 and reused after SIGTERM; running sandboxes are adopted', async () => {
  const sb = cp.create(w, {});
  await runningOn(sb.id);
  const st = statSync(`${files.dir}/state/worker`);
  assert.equal(st.mode & 0o777, 0o600);
  assert.doesNotMatch(readFileSync(files.log, 'utf8'), new RegExp(w.secret));
  const t0 = Date.now();
  const ex = await stopWorkerd(wd, 'SIGTERM');
  assert.equal(ex.code, 0);
  assert.ok(Date.now() - t0 < cp.pollMs + 3000, 'SIGTERM ends after the poll in flight');
  assert.equal((await mine(sb.id))[0].State, 'running', 'SIGTERM leaves sandboxes running');
  const beats = w.beats.length;
  wd = startWorkerd(files);
  await waitFor('re-enrolled and polling', () => w.beats.length > beats);
  assert.equal(cp.workers.size, 1, 'the same worker, not a new one');
  assert.equal(cp.handshakes.at(-1).worker_id, w.id);
  const first = w.beats[beats];
  assert.equal(first.resume, true);
  assert.equal(first.full, true);
  assert.deepEqual(first.sandboxes.filter((s) => s.id === sb.id), [{ id: sb.id, state: 'running' }]);
  assert.ok(!first.sandboxes.some((s) => s.id === 'sbother'), 'another worker\'s container is not reported');
});

test('a reported sandbox the control plane does not know is killed; other worker ids untouched', async () => {
  const r = await docker('POST', `/containers/create?name=corral-sbstray-${w.id}`, {
    Image: 'corral/base', Cmd: ['sleep', 'infinity'],
    Labels: { 'corral.worker': w.id, 'corral.sandbox': 'sbstray', 'corral.tier': 'CONTAINER' } });
  assert.equal(r.status, 201);
  await docker('POST', `/containers/${r.body.Id}/start`);
  // Restart so that the startup listing finds it (as after a crash).
  await stopWorkerd(wd, 'SIGKILL');
  wd = startWorkerd(files);
  await waitFor('stray removed', async () => (await mine('sbstray')).length === 0, 30000);
  const other = await containersLabelled(`corral.worker=${OTHER}`);
  assert.equal(other.length, 1);
  assert.equal(other[0].State, 'running');
});

test('kill -9 after a create is delivered and before its ack: one container after restart', async () => {
  let killed = false;
  cp.onDeliver = (wk, cmds) => {
    if (!killed && cmds.some((c) => c.type === 'create')) { killed = true; wd.proc.kill('SIGKILL'); }
  };
  const sb = cp.create(w, {});
  await waitFor('delivered and killed', () => killed);
  await wd.exited;
  cp.onDeliver = null;
  const q = w.queue.find((x) => x.cmd.sandbox?.id === sb.id);
  assert.equal(q.acked, false, 'not acknowledged before the crash');
  wd = startWorkerd(files);
  await waitFor('create acked after restart', () => q.acked, 30000);
  await runningOn(sb.id);
  const list = await mine(sb.id);
  assert.equal(list.length, 1);
  assert.equal(list[0].State, 'running');
});

test('control plane outage: backoff, then a full report of true states', async () => {
  const sb = cp.create(w, { template: 'exit3' });
  await waitFor('running or exited', () => w.states.get(sb.id));
  const port = cp.port;
  await cp.close();
  await sleep(3000); // exit3 dies during the outage
  const beats = w.beats.length;
  await cp.listen(port);
  await waitFor('heartbeat after outage', () => w.beats.length > beats, 20000);
  const b = w.beats[beats];
  assert.equal(b.full, true);
  assert.deepEqual(b.sandboxes.find((s) => s.id === sb.id), { id: sb.id, state: 'exited', reason: 'exit code 3' });
  assert.match(readFileSync(files.log, 'utf8'), /heartbeat: POST \/v1\/worker\/heartbeat: /);
});

test('410: the worker handshakes again as itself', async () => {
  w.dead = true;
  const hs = cp.handshakes.length;
  await waitFor('re-handshake', () => cp.handshakes.length > hs, 20000);
  w.dead = false;
  assert.equal(cp.handshakes.at(-1).worker_id, w.id);
  const beats = w.beats.length;
  await waitFor('polling again', () => w.beats.length > beats);
  assert.equal(w.beats[beats].resume, true);
});
