// Snapshots and forks through the SDK (issue 11, decision 0048): a snapshot
// keeps the sandbox's files and is a template for creates; a fork starts from
// a running sandbox's current files; snapshots belong to their workspace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox, MODE } from './lib.mjs';
import { SDK } from './sdk.mjs';
import { docker } from '../lib/engine.mjs';
import { until } from '../lib/poll.mjs';

const tag = `[${MODE} ${SDK}]`;
const other = { apiKey: process.env.CORRAL_OTHER_KEY };
const api = async (method, path, body, key = process.env.E2B_API_KEY) => {
  const r = await fetch(`${process.env.E2B_API_URL}${path}`, {
    method, headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
};

test(`${tag} createSnapshot, create from it (files there), listSnapshots, deleteSnapshot; another workspace sees none of it`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  const made = [];
  let snapshotId;
  try {
    await sbx.files.write('/home/user/notes.txt', 'from the snapshot');
    await sbx.commands.run('sudo sh -c "echo system > /etc/marker"');
    const snap = await sbx.createSnapshot({ name: 'mine' });
    snapshotId = snap.snapshotId;
    assert.match(snapshotId, /^snap-[0-9a-f]{20}$/);
    const listed = await Sandbox.listSnapshots().nextItems();
    assert.deepEqual(listed.find((s) => s.snapshotId === snapshotId)?.names, ['mine']);
    // The original goes on; the snapshot is its own.
    await sbx.files.write('/home/user/notes.txt', 'changed after');
    const child = await Sandbox.create(snapshotId, { timeoutMs: 120_000 });
    made.push(child);
    assert.equal(await child.files.read('/home/user/notes.txt'), 'from the snapshot');
    assert.equal((await child.commands.run('cat /etc/marker')).stdout.trim(), 'system');
    assert.equal((await Sandbox.getInfo(child.sandboxId)).templateId, snapshotId);
    // Another workspace: cannot list, use or delete it.
    const theirs = (await api('GET', '/snapshots', undefined, other.apiKey)).body;
    assert.ok(!theirs.some((s) => s.snapshotID === snapshotId));
    assert.equal((await api('POST', '/v2/sandboxes', { templateID: snapshotId }, other.apiKey)).status, 404);
    assert.equal((await api('DELETE', `/templates/${snapshotId}`, undefined, other.apiKey)).status, 404);
    assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/snapshots`, {}, other.apiKey)).status, 404);
  } finally {
    for (const s of made) await s.kill().catch(() => {});
    await sbx.kill().catch(() => {});
  }
  // It outlives its sandbox; deleted, it is gone.
  const again = await Sandbox.create(snapshotId, { timeoutMs: 60_000 });
  assert.equal(await again.files.read('/home/user/notes.txt'), 'from the snapshot');
  await again.kill();
  assert.equal(await Sandbox.deleteSnapshot(snapshotId), true);
  assert.equal(await Sandbox.deleteSnapshot(snapshotId), false, 'deleted once: not found');
  await assert.rejects(Sandbox.create(snapshotId, { timeoutMs: 60_000 }), /not found|404/i);
});

// Snapshot images on this dockerd, named or not (a deleted one its forks still used).
// The ids of the snapshot images dockerd holds.
const snapImages = async () => (await docker('GET', `/images/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: ['corral.snapshot'] }))}`)).body.map((i) => i.Id);
// Those made since `before` that are still there. An earlier test's image may
// go meanwhile (a kill answers before its removal and prune: decision 0073),
// so the check is on what is new, not on the count.
const newSince = async (before) => (await snapImages()).filter((id) => !before.includes(id));

test(`${tag} fork: new sandboxes from a running one's current files; the original runs on; no image is left`, async () => {
  const images = await snapImages();
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  const forks = [];
  try {
    await sbx.files.write('/tmp/state.txt', 'step 1');
    const before = (await api('GET', '/snapshots')).body.map((s) => s.snapshotID).sort();
    const made = await Sandbox.fork(sbx.sandboxId, { count: 2, timeoutMs: 120_000 });
    assert.equal(made.length, 2);
    for (const f of made) {
      assert.ok(f instanceof Sandbox, String(f));
      forks.push(f);
      assert.notEqual(f.sandboxId, sbx.sandboxId);
      assert.equal(await f.files.read('/tmp/state.txt'), 'step 1');
      await f.files.write('/tmp/state.txt', `fork ${f.sandboxId}`);
    }
    assert.equal(await sbx.files.read('/tmp/state.txt'), 'step 1', 'forks do not touch the original');
    assert.equal(await sbx.isRunning(), true);
    const after = (await api('GET', '/snapshots')).body.map((s) => s.snapshotID).sort();
    assert.deepEqual(after, before, 'a fork leaves no snapshot behind');
    assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/fork`, { count: 99 })).status, 400);
  } finally {
    for (const f of forks) await f.kill().catch(() => {});
    await sbx.kill().catch(() => {});
  }
  assert.ok(await until(async () => (await newSince(images)).length === 0, { timeoutMs: 10_000 }),
    `the fork's snapshot image went with its last sandbox (left: ${await newSince(images)})`);
});
