// The registry keeps only what templates use (issue 28, decision 0081): a
// deleted template's tags leave the registry at once; corralctl registry-gc
// deletes a replaced build's manifest and frees the blobs nothing names, and
// a template it kept is still pulled whole by a worker that lacks it; a
// collection holds pushes (a build waits, then finishes); the operator's
// ceilings on a workspace's template storage and builds at once refuse with
// their names. The stack runs with template_storage_mb = 8 and max_builds = 2
// (tests/workerd/run.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { api, newWorkspace, eventually, redis, RUN } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers } from './helpers.mjs';
import { templateClient, removeWorkerImages } from './template_lib.mjs';

const BUILD_MS = 240_000;
const STORE = `${RUN}/registry/docker/registry/v2`;
let ws, worker, client;

before(async () => {
  ws = newWorkspace();
  worker = await stackWorker(ws);
  client = templateClient(ws, BUILD_MS);
});

after(async () => {
  const wid = worker?.id;
  await cleanupWorkers();
  if (wid) await removeWorkerImages(wid);
});

const repoDir = (tplId) => `${STORE}/repositories/corral/w${ws.id}/${tplId}`;
// The tags the registry's storage holds for a template (its own files: what
// a pull can find).
const tagsOf = (tplId) => (existsSync(`${repoDir(tplId)}/_manifests/tags`) ? readdirSync(`${repoDir(tplId)}/_manifests/tags`).sort() : []);
const blobCount = () => readdirSync(`${STORE}/blobs/sha256`).flatMap((d) => readdirSync(`${STORE}/blobs/sha256/${d}`)).length;

function registryGc(wait = 10) {
  const out = execFileSync(`${process.env.CORRAL_BUILD}/corralctl`, ['-c', `${RUN}/corral.conf`, 'registry-gc', '--wait', String(wait)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(out);
}

async function build(name, steps) {
  const tpl = await client.newTemplate(name);
  await client.startBuild(tpl, { fromTemplate: 'base', steps });
  return { tpl, done: await client.waitBuild(tpl) };
}

test('a deleted template\'s tags leave the registry at once; registry-gc deletes a replaced build and frees its blobs, and what it kept still pulls', async () => {
  const name = `tpl-gc-${Date.now().toString(16)}`;
  const first = await build(name, [{ type: 'RUN', args: ['head -c 300000 /dev/urandom > /first.bin', 'root'], force: true }]);
  assert.equal(first.done.status, 'ready', JSON.stringify(first.done.reason));
  const second = await build(name, [{ type: 'RUN', args: ['echo second > /second.txt', 'root'], force: true }]);
  assert.equal(second.done.status, 'ready', JSON.stringify(second.done.reason));
  assert.deepEqual(tagsOf(first.tpl.templateID), [first.tpl.buildID, second.tpl.buildID].sort());

  const gone = await build(`tpl-gone-${Date.now().toString(16)}`, [{ type: 'RUN', args: ['echo gone > /gone.txt', 'root'], force: true }]);
  assert.equal(gone.done.status, 'ready', JSON.stringify(gone.done.reason));
  assert.deepEqual(tagsOf(gone.tpl.templateID), [gone.tpl.buildID]);
  const member = await api('DELETE', `/templates/${gone.tpl.templateID}`, { key: ws.member });
  assert.equal(member.status, 403, 'a member does not delete');
  assert.deepEqual(tagsOf(gone.tpl.templateID), [gone.tpl.buildID], 'a refused delete keeps the tags');
  const del = await api('DELETE', `/templates/${gone.tpl.templateID}`, { key: ws.owner });
  assert.equal(del.status, 204, del.raw);
  assert.deepEqual(tagsOf(gone.tpl.templateID), [], 'the deleted template\'s tags left the registry');

  const before = blobCount();
  const report = registryGc();
  assert.equal(report.blobs, 'collected', JSON.stringify(report));
  assert.ok(report.deleted >= 1 && report.failed === 0, JSON.stringify(report));
  assert.deepEqual(tagsOf(first.tpl.templateID), [second.tpl.buildID], 'only the current build stays');
  assert.ok(blobCount() < before, `the replaced build's blobs were freed (${before} -> ${blobCount()})`);
  // Idempotent: nothing more to delete.
  assert.equal(registryGc().deleted, 0);

  // The kept template is whole: a worker without it pulls it and starts it.
  await removeWorkerImages(worker.id);
  const sb = await client.createFrom(name);
  assert.equal(sb.status, 201, sb.raw);
  await api('DELETE', `/sandboxes/${sb.body.sandboxID}`, { key: ws.member });
});

test('a collection holds pushes: a build waits for it, then finishes', async () => {
  redis('SET', 'corral:{registry}:gc', '1', 'EX', '60');
  try {
    const tpl = await client.newTemplate(`tpl-held-${Date.now().toString(16)}`);
    await client.startBuild(tpl, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['echo held > /held.txt', 'root'], force: true }] });
    // The steps run; the push then waits for the hold, and the build with it.
    await eventually(async () => {
      const r = await client.e2b('GET', `/templates/${tpl.templateID}/builds/${tpl.buildID}/status`);
      return r.body.logEntries.some((e) => /pushing the template/.test(e.message)) || r.body.status !== 'building';
    }, { timeout: BUILD_MS, what: 'the build reached its push' });
    const r = await client.e2b('GET', `/templates/${tpl.templateID}/builds/${tpl.buildID}/status`);
    assert.equal(r.body.status, 'building', `held: ${r.raw}`);
    // sleep: the hold must keep the build from finishing for a while
    await new Promise((res) => setTimeout(res, 8000));
    const still = await client.e2b('GET', `/templates/${tpl.templateID}/builds/${tpl.buildID}/status`);
    assert.equal(still.body.status, 'building', `still held: ${still.raw}`);
    redis('DEL', 'corral:{registry}:gc');
    const done = await client.waitBuild(tpl);
    assert.equal(done.status, 'ready', JSON.stringify(done.reason));
  } finally {
    redis('DEL', 'corral:{registry}:gc');
  }
});

test('the operator\'s ceilings: builds at once (max_builds) and template storage (template_storage_mb), each refused by name', async () => {
  // The workspace's own worker builds; its earlier builds are a few KB.
  const c = client;
  const long = [];
  for (let i = 0; i < 2; i++) {
    const tpl = await c.newTemplate(`tpl-slow-${i}-${Date.now().toString(16)}`);
    await c.startBuild(tpl, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['sleep 600'], force: true }] });
    long.push(tpl);
  }
  const third = await c.newTemplate(`tpl-third-${Date.now().toString(16)}`);
  const r = await c.e2b('POST', `/v2/templates/${third.templateID}/builds/${third.buildID}`,
    { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['true'], force: true }] });
  assert.equal(r.status, 429, r.raw);
  assert.match(r.body.message, /max_builds/);
  for (const t of long) assert.equal((await api('DELETE', `/templates/${t.templateID}`, { key: ws.owner })).status, 204);

  // A build that adds more than the workspace may keep fails, naming the
  // ceiling; nothing of it becomes the template.
  const tpl = await c.newTemplate(`tpl-big-${Date.now().toString(16)}`);
  await c.startBuild(tpl, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['head -c 12000000 /dev/urandom > /big.bin', 'root'], force: true }] });
  const done = await c.waitBuild(tpl);
  assert.equal(done.status, 'error');
  assert.match(done.reason.message, /template_storage_mb/, JSON.stringify(done.reason));
  const none = await c.createFrom(tpl.templateID);
  assert.equal(none.status, 409, `nothing was made of it: ${none.raw}`);
});
