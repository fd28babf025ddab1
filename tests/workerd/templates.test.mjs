// Templates (issue 28, docs/templates.md) through a real workerd, the real
// stack and the real registry: a build from `base` with RUN, COPY (a folder
// with a mode, an owner and a symlink), ENV, WORKDIR and USER, then a sandbox
// of it sees every file, variable and user and runs its start command, ready
// by its ready command; a second build of the same steps reuses every layer
// (its log says CACHED for each, nothing runs); a failing step fails the
// build naming the step, its exit code and its last lines; a start command
// without a ready command runs, and a ready command that never succeeds
// fails the create naming it. The E2B routes are called as the SDK calls
// them (POST /v3/templates, GET /templates/{id}/files/{hash} and a PUT of the
// tar to the URL it answers, POST /v2/templates/{id}/builds/{bid}, GET
// .../status with logsOffset).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, newWorkspace, eventually } from '../lib/corral.mjs';
import { templateClient, tarOf, removeWorkerImages } from './template_lib.mjs';
import { stackWorker, cleanupWorkers, envdOf, envdRun, logOf } from './helpers.mjs';

let ws;
let worker;
const BUILD_MS = 300_000;

let e2b, newTemplate, upload, startBuild, waitBuild, createFrom;
before(async () => {
  ws = newWorkspace();
  worker = await stackWorker(ws);
  ({ e2b, newTemplate, upload, startBuild, waitBuild, createFrom } = templateClient(ws, BUILD_MS));
});

after(async () => {
  const wid = worker?.id;
  await cleanupWorkers();
  if (wid) await removeWorkerImages(wid);
});

function copyFiles() {
  const dir = mkdtempSync(join(tmpdir(), 'corral-tpl-'));
  mkdirSync(`${dir}/app/sub`, { recursive: true });
  writeFileSync(`${dir}/app/main.txt`, 'hello from the template\n');
  writeFileSync(`${dir}/app/sub/nested.txt`, 'nested\n');
  symlinkSync('main.txt', `${dir}/app/link.txt`);
  writeFileSync(`${dir}/single.txt`, 'single\n');
  return { dir, files: tarOf(dir, ['app', 'single.txt']) };
}

// The steps of the main template: every type, with the start and ready commands.
// This run's own: a layer left in dockerd by an earlier run (the cache is
// keyed by content) is not taken for this build's.
const RUN_ID = `${process.pid}-${Date.now().toString(36)}`;

function mainSteps(hash) {
  return [
    { type: 'ENV', args: ['GREETING', 'hi there', 'APP_MODE', 'test', 'RUN_ID', RUN_ID], force: false },
    { type: 'WORKDIR', args: ['/srv/app'], force: false },
    { type: 'RUN', args: ['echo "$GREETING" > greeting.txt && id -un > ran-as.txt && echo built-line'], force: false },
    { type: 'COPY', args: ['app', '/srv/app/files', 'user', '0750'], filesHash: hash, force: false },
    { type: 'COPY', args: ['single.txt', '/opt/one/'], filesHash: hash, force: false },
    { type: 'RUN', args: ['mkdir -p /opt/site && chown user:user /opt/site', 'root'], force: false },
    { type: 'USER', args: ['user'], force: false },
    { type: 'RUN', args: ['id -un > /opt/site/user.txt && pwd > /opt/site/pwd.txt'], force: false },
  ];
}

const START = 'cd /opt/site && echo served > index.html && python3 -m http.server 8000';
const READY = 'curl -sf http://127.0.0.1:8000/index.html';

let alias;
let hash;

test('a build with RUN, COPY, ENV, WORKDIR and USER makes a template; its sandbox has the files, env, user and a ready service', async () => {
  alias = `tpl-test-${Date.now().toString(16)}`;
  const tpl = await newTemplate(alias);
  const { dir, files } = copyFiles();
  try {
    hash = await upload(tpl, files);
    await startBuild(tpl, { fromTemplate: 'base', steps: mainSteps(hash), startCmd: START, readyCmd: READY, force: false });
    const done = await waitBuild(tpl);
    assert.equal(done.status, 'ready', `build: ${JSON.stringify(done.reason)}\n${done.messages.join('\n')}`);
    assert.ok(done.messages.includes('built-line'), `the RUN's output streamed: ${done.messages.join('\n')}`);
    assert.ok(!done.messages.some((m) => m.startsWith('CACHED')), 'a first build runs every step');
    assert.match(logOf(worker), /build bld-[0-9a-f]{20} ready: /);

    const sb = await createFrom(alias);
    assert.equal(sb.status, 201, `create from ${alias}: ${sb.status} ${sb.raw}`);
    const envd = await envdOf(worker.id, sb.body.sandboxID, sb.body.envdAccessToken);
    const run = async (cmd, user) => (await envdRun(envd, cmd, { user })).stdout.trim();
    // ENV: in every process of the sandbox.
    assert.equal(await run('echo "$GREETING/$APP_MODE"'), 'hi there/test');
    // RUN: in WORKDIR, as root (the USER then), with the ENVs so far.
    assert.equal(await run('cat /srv/app/greeting.txt /srv/app/ran-as.txt'), 'hi there\nroot');
    // COPY of a folder: its contents, owner and mode, the symlink kept.
    assert.equal(await run('cat /srv/app/files/main.txt /srv/app/files/sub/nested.txt', 'root'), 'hello from the template\nnested');
    assert.equal(await run('readlink /srv/app/files/link.txt', 'root'), 'main.txt');
    assert.equal(await run('stat -c "%U %a" /srv/app/files/main.txt /srv/app/files/sub', 'root'), 'user 750\nuser 750');
    // COPY of a file into a directory (dest ends in '/').
    assert.equal(await run('cat /opt/one/single.txt'), 'single');
    // USER: the step after it ran as user, in the WORKDIR.
    assert.equal(await run('cat /opt/site/user.txt /opt/site/pwd.txt'), 'user\n/srv/app');
    // start and ready: running only once the service answered.
    assert.equal(await run('curl -sf http://127.0.0.1:8000/index.html'), 'served');
    await api('DELETE', `/sandboxes/${sb.body.sandboxID}`, { key: ws.member });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second build of the same steps reuses every layer', async () => {
  assert.ok(hash, 'the first build ran');
  const tpl = await newTemplate(alias); // a new build of the same alias
  const t0 = Date.now();
  await startBuild(tpl, { fromTemplate: 'base', steps: mainSteps(hash), startCmd: START, readyCmd: READY, force: false });
  const done = await waitBuild(tpl);
  assert.equal(done.status, 'ready', `build: ${JSON.stringify(done.reason)}`);
  const cached = done.messages.filter((m) => m.startsWith('CACHED '));
  assert.equal(cached.length, mainSteps(hash).length, `every step cached:\n${done.messages.join('\n')}`);
  assert.ok(!done.messages.includes('built-line'), 'no RUN ran again');
  console.log(`cached build: ${Date.now() - t0} ms`);
});

test('a failing step fails the build naming the step, its exit code and its last lines', async () => {
  const tpl = await newTemplate(`tpl-fail-${Date.now().toString(16)}`);
  await startBuild(tpl, {
    fromTemplate: 'base',
    steps: [
      { type: 'RUN', args: ['echo fine'], force: false },
      { type: 'RUN', args: ['echo first-words; echo last-words >&2; exit 7'], force: false },
      { type: 'RUN', args: ['echo never'], force: false },
    ],
  });
  const done = await waitBuild(tpl);
  assert.equal(done.status, 'error');
  assert.equal(done.reason?.step, '2', JSON.stringify(done.reason));
  // stdout and stderr are two streams: their lines' order between them is dockerd's.
  assert.match(done.reason.message, /^step 2: exit code 7: /);
  assert.match(done.reason.message, /first-words/);
  assert.match(done.reason.message, /last-words/);
  assert.ok(!done.messages.includes('never'), 'nothing after the failed step ran');
});

test('a start command without a ready command is enough once it runs; a ready command that never succeeds fails the create', async () => {
  const started = await newTemplate(`tpl-start-${Date.now().toString(16)}`);
  await startBuild(started, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['true'], force: true }], startCmd: 'sleep 1000' });
  assert.equal((await waitBuild(started)).status, 'ready');
  const ok = await createFrom(started.templateID);
  assert.equal(ok.status, 201, `${ok.status} ${ok.raw}`);
  const envd = await envdOf(worker.id, ok.body.sandboxID, ok.body.envdAccessToken);
  assert.match((await envdRun(envd, 'ps -eo args', { user: 'root' })).stdout, /sleep 1000/);
  await api('DELETE', `/sandboxes/${ok.body.sandboxID}`, { key: ws.member });

  const never = await newTemplate(`tpl-never-${Date.now().toString(16)}`);
  await startBuild(never, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['true'], force: true }], startCmd: 'sleep 1000', readyCmd: 'echo still-waiting; false' });
  assert.equal((await waitBuild(never)).status, 'ready');
  const t0 = Date.now();
  const bad = await createFrom(never.templateID);
  assert.ok(bad.status >= 400, `a create that never became ready: ${bad.status} ${bad.raw}`);
  assert.match(bad.raw, /ready command did not succeed in \d+s: still-waiting/);
  assert.ok(Date.now() - t0 < 120_000, 'failed within the ready timeout, not the create timeout');
});
