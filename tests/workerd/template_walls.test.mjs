// Templates' walls through a real workerd (issue 28, decision 0080): a
// build is a sandbox, so a hostile RUN reaches nothing of the host a sandbox
// could not; a step that forks hard or fills the disk stops at the
// workspace's sandbox limits; a workerd killed mid-build fails the build with a reason, tags
// nothing, and a retry on the restarted worker works.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { api, newWorkspace, eventually } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, docker, stopWorkerd, restartWorker, enrolledAs, forkBomb } from './helpers.mjs';
import { templateClient, removeWorkerImages } from './template_lib.mjs';

const BUILD_MS = 300_000;
let ws, worker, e2b, newTemplate, startBuild, waitBuild, createFrom;

before(async () => {
  ws = newWorkspace();
  worker = await stackWorker(ws);
  ({ e2b, newTemplate, startBuild, waitBuild, createFrom } = templateClient(ws, BUILD_MS));
});

after(async () => {
  const wid = worker?.id;
  await cleanupWorkers();
  if (wid) await removeWorkerImages(wid);
});

// Every address of this host: its interfaces' and its Docker bridges' gateways.
async function hostAddresses() {
  const own = Object.values(networkInterfaces()).flat().filter((a) => a.family === 'IPv4').map((a) => a.address);
  const nets = (await docker('GET', '/networks')).body || [];
  const gws = nets.flatMap((n) => (n.IPAM?.Config || []).map((c) => c.Gateway)).filter(Boolean);
  return [...new Set([...own, ...gws])];
}

test('a hostile build step reaches nothing a sandbox could not: the host\'s Redis, nginx, registry and data port', async () => {
  const port = Number(process.env.CORRAL_PORT), redis = Number(process.env.CORRAL_REDIS_PORT);
  const ports = [redis, port, port + 1, port + 3, Number(process.env.CORRAL_WORKERD_DATA_PORT || 7001)];
  const targets = (await hostAddresses()).flatMap((h) => ports.map((p) => `${h}:${p}`));
  // The probe's control: a listener of the step itself answers.
  const probe = `python3 -m http.server 9999 >/dev/null 2>&1 & srv=$!; sleep 1; pids=; for t in 127.0.0.1:9999 ${targets.join(' ')}; do
    h=\${t%:*}; p=\${t#*:}; ( if timeout 2 bash -c "echo > /dev/tcp/$h/$p" 2>/dev/null; then echo "REACHED $t"; else echo "walled $t"; fi ) & pids="$pids $!"; done; wait $pids; kill $srv`;
  const tpl = await newTemplate(`tpl-hostile-${Date.now().toString(16)}`);
  await startBuild(tpl, { fromTemplate: 'base', steps: [{ type: 'RUN', args: [probe, 'root'], force: true }] });
  const done = await waitBuild(tpl);
  assert.equal(done.status, 'ready', JSON.stringify(done.reason));
  const lines = done.messages.join('\n');
  assert.match(lines, /REACHED 127\.0\.0\.1:9999/, `the probe works:\n${lines}`);
  const reached = done.messages.filter((m) => /^REACHED /.test(m) && !m.includes(':9999'));
  assert.deepEqual(reached, [], `a build step reached the host:\n${lines}`);
  assert.equal(done.messages.filter((m) => /^walled /.test(m)).length, targets.length);
});

test('workerd killed mid-build: the build fails with a reason, nothing is tagged, a retry works', async () => {
  const name = `tpl-killed-${Date.now().toString(16)}`;
  const tpl = await newTemplate(name);
  await startBuild(tpl, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['echo long-step-began; sleep 300'], force: true }] });
  await eventually(async () => {
    const r = await e2b('GET', `/templates/${tpl.templateID}/builds/${tpl.buildID}/status`);
    return r.body.logEntries.some((e) => /long-step-began/.test(e.message));
  }, { timeout: BUILD_MS, what: 'the long step running' });
  await stopWorkerd(worker.wd, 'SIGKILL');
  const done = await waitBuild(tpl);
  assert.equal(done.status, 'error');
  assert.match(done.reason.message, /sandbox|worker/, JSON.stringify(done.reason));
  const none = await createFrom(name);
  assert.equal(none.status, 409, `nothing was made of it: ${none.raw}`);
  const tags = await e2b('GET', `/templates/${tpl.templateID}/tags`);
  assert.deepEqual(tags.body, []);

  const seen = enrolledAs(worker.files.log).length;
  restartWorker(worker);
  await eventually(() => enrolledAs(worker.files.log).length > seen, { timeout: 30_000, what: 'workerd enrolled again' });
  const again = await newTemplate(name);
  assert.equal(again.templateID, tpl.templateID, 'the same template, a new build');
  await startBuild(again, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['echo retried'], force: true }] });
  assert.equal((await waitBuild(again)).status, 'ready');
  const ok = await createFrom(name);
  assert.equal(ok.status, 201, ok.raw);
  await api('DELETE', `/sandboxes/${ok.body.sandboxID}`, { key: ws.member });
});

test('a build step that forks hard or fills the disk stops at the workspace\'s sandbox limits', async () => {
  const PIDS = 128, DISK_MB = 300;
  const set = (body) => api('PATCH', '/v1/workspace', { key: ws.owner, body });
  const was = (await api('GET', '/v1/workspace', { key: ws.owner })).body;
  assert.equal((await set({ sandbox_pids_limit: PIDS, sandbox_disk_mb: DISK_MB })).status, 200);
  try {
    const tpl = await newTemplate(`tpl-limits-${Date.now().toString(16)}`);
    await startBuild(tpl, { fromTemplate: 'base', steps: [
      { type: 'RUN', args: [`${forkBomb(' >/tmp/forked')}\necho "forked $(cat /tmp/forked)"`, 'root'], force: true },
      { type: 'RUN', args: [`dd if=/dev/zero of=/fill bs=1M count=${DISK_MB * 3}`, 'root'], force: true },
    ] });
    const done = await waitBuild(tpl);
    const lines = done.messages.join('\n');
    const m = lines.match(/forked (\d+) (.*)/);
    assert.ok(m, `the fork step ran:\n${lines}`);
    assert.ok(Number(m[1]) > 10 && Number(m[1]) < PIDS, `forked ${m[1]} before: ${m[2]}`);
    assert.match(m[2], /Resource temporarily unavailable/);
    assert.equal(done.status, 'error', 'the disk filler fails its step');
    assert.equal(String(done.reason.step), '2', JSON.stringify(done.reason));
    assert.match(`${done.reason.message}\n${lines}`, /Disk quota exceeded|No space left/);
    const none = await createFrom(tpl.templateID);
    assert.equal(none.status, 409, `nothing was made of it: ${none.raw}`);
  } finally {
    await set({ sandbox_pids_limit: was.sandbox_pids_limit, sandbox_disk_mb: was.sandbox_disk_mb });
  }
});
