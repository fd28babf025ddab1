// Volumes through the SDK (issue 11, decision 0049): a volume's files outlive
// the sandbox that wrote them and appear in the next one that mounts it; a
// volume is its workspace's alone; a mounted volume cannot be deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Sandbox, MODE } from './lib.mjs';
import { SDK, Volume } from './sdk.mjs';
import { docker } from '../lib/engine.mjs';
import { until } from '../lib/poll.mjs';

const tag = `[${MODE} ${SDK}]`;
const api = async (method, path, body, key = process.env.E2B_API_KEY) => {
  const r = await fetch(`${process.env.E2B_API_URL}${path}`, {
    method, headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
};

test(`${tag} a volume's files survive its sandbox and appear in the next; another workspace cannot see or mount it`, async () => {
  const name = `data-${randomBytes(4).toString('hex')}`;
  const vol = await Volume.create(name);
  assert.match(vol.volumeId, /^vol-[0-9a-f]{20}$/);
  assert.equal(vol.name, name);
  assert.ok((await Volume.list()).some((v) => v.volumeId === vol.volumeId && v.name === name));
  assert.equal((await Volume.getInfo(vol.volumeId)).name, name);
  assert.equal((await api('POST', '/volumes', { name })).status, 409, 'one name, one volume');
  let a = await Sandbox.create('base', { timeoutMs: 60_000, volumeMounts: { '/data': vol } });
  try {
    await a.commands.run('echo kept > /data/file && chown user /data/file', { user: 'root' });
    assert.deepEqual((await Sandbox.getInfo(a.sandboxId)).volumeMounts, [{ name, path: '/data' }]);
    assert.equal((await api('DELETE', `/volumes/${vol.volumeId}`)).status, 409, 'mounted: not deleted');
  } finally {
    await a.kill();
  }
  a = await Sandbox.create('base', { timeoutMs: 60_000, volumeMounts: { '/mnt/again': name } });
  try {
    assert.equal(await a.files.read('/mnt/again/file'), 'kept\n');
  } finally {
    await a.kill();
  }
  const other = process.env.CORRAL_OTHER_KEY;
  assert.ok(!(await api('GET', '/volumes', undefined, other)).body.some((v) => v.volumeID === vol.volumeId));
  assert.equal((await api('GET', `/volumes/${vol.volumeId}`, undefined, other)).status, 404);
  assert.equal((await api('DELETE', `/volumes/${vol.volumeId}`, undefined, other)).status, 404);
  const theirs = await api('POST', '/v2/sandboxes', { templateID: 'base', volumeMounts: [{ name, path: '/data' }] }, other);
  assert.equal(theirs.status, 404, JSON.stringify(theirs.body));
  assert.equal((await api('POST', '/v2/sandboxes', { templateID: 'base', volumeMounts: [{ name, path: '/proc/x' }] })).status, 400);
  assert.equal(await Volume.destroy(vol.volumeId), true);
  assert.equal(await Volume.destroy(vol.volumeId), false);
  assert.ok(await until(async () => (await docker('GET', `/volumes/corral-${vol.volumeId}`)).status === 404,
    { timeoutMs: 10_000 }), 'its Docker volume is removed from the worker');
});
