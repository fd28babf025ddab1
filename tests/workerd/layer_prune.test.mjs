// A worker's layer cache is bounded in age (layer_cache_max_age_s, decision
// 0081): before a build plans, the worker's cached layers older than that and
// used by no container are removed, so the build runs its steps again; a
// snapshot of a sandbox made from a template (which inherits the template's
// layer label) is never taken with them. This worker keeps layers 1 s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, newWorkspace } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, docker, sleep } from './helpers.mjs';
import { templateClient, removeWorkerImages } from './template_lib.mjs';

const BUILD_MS = 240_000;
let ws, worker, client;

before(async () => {
  ws = newWorkspace();
  worker = await stackWorker(ws, { extra: 'layer_cache_max_age_s = 1' });
  client = templateClient(ws, BUILD_MS);
});

after(async () => {
  const wid = worker?.id;
  await cleanupWorkers();
  if (wid) await removeWorkerImages(wid);
});

const imagesWith = async (...labels) => {
  const f = encodeURIComponent(JSON.stringify({ label: labels }));
  return (await docker('GET', `/images/json?filters=${f}`)).body || [];
};

// Docker never removes an image that another image is built on, so the
// snapshot's own parent layer stays with it; the layer that must go is a
// second build's, which nothing is built on.
test('layers older than layer_cache_max_age_s go before the next build, which runs its steps again; a snapshot stays', async () => {
  const first = await client.newTemplate(`tpl-prune-a-${Date.now().toString(16)}`);
  await client.startBuild(first, { fromTemplate: 'base', steps: [{ type: 'RUN', args: ['echo snapped > /snap.txt', 'root'] }] });
  assert.equal((await client.waitBuild(first)).status, 'ready');

  // A sandbox of the template, snapshotted, then killed: its snapshot image
  // carries corral.layer too, and no container uses it.
  const sb = await client.createFrom(first.templateID);
  assert.equal(sb.status, 201, sb.raw);
  const snap = await api('POST', `/v1/sandboxes/${sb.body.sandboxID}/snapshots`, { key: ws.member, body: {} });
  assert.equal(snap.status, 201, snap.raw);
  assert.equal((await api('DELETE', `/sandboxes/${sb.body.sandboxID}`, { key: ws.member })).status, 204);
  const snaps = await imagesWith('corral.layer', 'corral.snapshot', `corral.worker=${worker.id}`);
  assert.equal(snaps.length, 1, 'the snapshot image inherits the layer label');

  const steps = [{ type: 'RUN', args: [`echo layer-${Date.now()} > /layer.txt`, 'root'] }];
  const second = await client.newTemplate(`tpl-prune-b-${Date.now().toString(16)}`);
  await client.startBuild(second, { fromTemplate: 'base', steps });
  assert.equal((await client.waitBuild(second)).status, 'ready');
  const before = new Set((await imagesWith('corral.layer', `corral.worker=${worker.id}`)).map((i) => i.Id));
  before.delete(snaps[0].Id);
  assert.ok(before.size > 0, 'the builds left layers in the cache');

  // sleep: the layers must be older than the worker's 1 s
  await sleep(2000);
  const third = await client.newTemplate(`tpl-prune-c-${Date.now().toString(16)}`);
  await client.startBuild(third, { fromTemplate: 'base', steps });
  const done = await client.waitBuild(third);
  assert.equal(done.status, 'ready', JSON.stringify(done.reason));
  assert.ok(!done.messages.some((m) => /^CACHED /.test(m)), `nothing was reused:\n${done.messages.join('\n')}`);
  const kept = new Set((await imagesWith('corral.layer', `corral.worker=${worker.id}`)).map((i) => i.Id));
  assert.ok(kept.has(snaps[0].Id), 'the snapshot image stayed');
  const gone = [...before].filter((id) => !kept.has(id));
  assert.ok(gone.length > 0, 'the second build\'s layer was removed');
  const again = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: snap.body.snapshot_id } });
  assert.equal(again.status, 201, `a sandbox from the snapshot: ${again.raw}`);
  await api('DELETE', `/v1/sandboxes/${again.body.sandbox_id}`, { key: ws.member });
});
