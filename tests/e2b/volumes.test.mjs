// Volumes through the SDK (issue 11, decision 0049): a volume's files outlive
// the sandbox that wrote them and appear in the next one that mounts it; a
// volume is its workspace's alone; a mounted volume cannot be deleted. And
// the volume file API (issue 26, decision 0071): the SDK's Volume file
// methods on the volume's worker, the same files a sandbox mounting it
// sees; the volume's token opens that volume only; no path, symlink or FIFO
// a sandbox leaves in it leads out of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import https from 'node:https';
import { Sandbox, MODE } from './lib.mjs';
import { SDK, Volume, VolumeError, VolumePathNotFoundError, AuthenticationError } from './sdk.mjs';
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

// The volume file API by hand, at the API's address (nginx serves it on its
// every name): {status, body}.
const content = async (volumeId, token, method, op, query, body) => {
  const r = await fetch(`${process.env.E2B_API_URL}/volumecontent/${volumeId}/${op}?${query}`, {
    method, headers: token ? { Authorization: `Bearer ${token}` } : {}, body });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: r.status, body: json };
};
const isError = (r, status, pattern) => r.status === status && r.body?.code === status &&
  pattern.test(r.body?.message ?? '');

test(`${tag} the Volume file methods: write, read in every format, stat, list, make directories, metadata, remove`, async () => {
  const vol = await Volume.create(`files-${randomBytes(4).toString('hex')}`);
  try {
    assert.match(vol.token, /^cvt1\.[0-9a-f]+\.vol-[0-9a-f]{20}\.\d+\.[0-9a-f]{64}$/);
    assert.equal((await Volume.connect(vol.volumeId)).volumeId, vol.volumeId, 'connect gets a token too');
    // the first use makes the Docker volume on its worker, as a first mount does
    await assert.rejects(vol.writeFile('/notes/a.txt', 'x'), VolumePathNotFoundError, 'no such directory yet');
    const dir = await vol.makeDir('/notes');
    assert.equal(dir.type, 'directory');
    assert.equal(dir.path, '/notes');
    const info = await vol.writeFile('/notes/a.txt', 'hello');
    assert.deepEqual([info.name, info.type, info.path, info.size, info.mode, info.uid, info.gid],
      ['a.txt', 'file', '/notes/a.txt', 5, 0o644, 0, 0]);
    assert.ok(info.mtime instanceof Date && Math.abs(info.mtime - Date.now()) < 60_000, String(info.mtime));
    assert.equal(await vol.readFile('/notes/a.txt'), 'hello');
    assert.equal(await vol.readFile('notes/a.txt'), 'hello', 'a relative path is from the root');
    const bytes = randomBytes(300_000);
    await vol.writeFile('/bin.dat', bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    assert.deepEqual(Buffer.from(await vol.readFile('/bin.dat', { format: 'bytes' })), bytes);
    await vol.writeFile('/blob.txt', new Blob(['from a blob']));
    assert.equal(await (await vol.readFile('/blob.txt', { format: 'blob' })).text(), 'from a blob');
    assert.equal(await new Response(await vol.readFile('/blob.txt', { format: 'stream' })).text(), 'from a blob');
    await vol.writeFile('/empty.txt', '');
    assert.equal(await vol.readFile('/empty.txt'), '');
    assert.equal((await vol.readFile('/empty.txt', { format: 'bytes' })).length, 0);
    await vol.writeFile('/notes/a.txt', 'replaced', { force: true });
    assert.equal(await vol.readFile('/notes/a.txt'), 'replaced');
    // owner and mode, at write and after
    const owned = await vol.writeFile('/owned.txt', 'x', { uid: 1000, gid: 1000, mode: 0o600 });
    assert.deepEqual([owned.uid, owned.gid, owned.mode], [1000, 1000, 0o600]);
    const changed = await vol.updateMetadata('/owned.txt', { uid: 1001, mode: 0o640 });
    assert.deepEqual([changed.uid, changed.gid, changed.mode, changed.path], [1001, 1000, 0o640, '/owned.txt']);
    await assert.rejects(vol.updateMetadata('/nope.txt', { mode: 0o644 }), VolumePathNotFoundError);
    // directories: parents only with force; depth
    await assert.rejects(vol.makeDir('/x/y'), VolumePathNotFoundError);
    const deep = await vol.makeDir('/deep/a/b', { force: true, uid: 1000, gid: 1000, mode: 0o700 });
    assert.deepEqual([deep.path, deep.uid, deep.mode], ['/deep/a/b', 1000, 0o700]);
    await assert.rejects(vol.makeDir('/deep'), VolumeError, 'exists already (409)');
    await vol.writeFile('/deep/a/b/leaf.txt', 'leaf');
    const top = (await vol.list('/')).map((e) => e.name).sort();
    assert.deepEqual(top, ['bin.dat', 'blob.txt', 'deep', 'empty.txt', 'notes', 'owned.txt']);
    assert.deepEqual((await vol.list('/deep')).map((e) => e.path), ['/deep/a']);
    assert.deepEqual((await vol.list('/deep', { depth: 3 })).map((e) => e.path).sort(),
      ['/deep/a', '/deep/a/b', '/deep/a/b/leaf.txt']);
    await assert.rejects(vol.list('/none'), VolumePathNotFoundError);
    await assert.rejects(vol.readFile('/notes'), VolumeError, 'a directory is not read');
    assert.equal(await vol.exists('/notes/a.txt'), true);
    assert.equal(await vol.exists('/notes/b.txt'), false);
    // removal: a file, a whole tree, not the root
    await vol.remove('/notes/a.txt');
    assert.equal(await vol.exists('/notes/a.txt'), false);
    await vol.remove('/deep');
    assert.equal(await vol.exists('/deep'), false);
    await assert.rejects(vol.remove('/deep'), VolumePathNotFoundError);
    await assert.rejects(vol.remove('/'), VolumeError);
    assert.equal((await vol.getInfo('/')).type, 'directory');
  } finally {
    await Volume.destroy(vol.volumeId).catch(() => {});
  }
});

test(`${tag} a sandbox that mounts the volume sees the API's files and the API the sandbox's; nothing it leaves leads out`, async () => {
  const vol = await Volume.create(`shared-${randomBytes(4).toString('hex')}`);
  const hostFile = `/etc/corral-escape-${randomBytes(4).toString('hex')}`;
  try {
    await vol.writeFile('/from-api.txt', 'api', { uid: 1000, gid: 1000 });
    const sbx = await Sandbox.create('base', { timeoutMs: 120_000, volumeMounts: { '/data': vol } });
    try {
      assert.equal(await sbx.files.read('/data/from-api.txt'), 'api');
      assert.equal((await sbx.commands.run('stat -c %u /data/from-api.txt')).stdout.trim(), '1000');
      // What a sandbox (as root) could leave to lead the worker out of the volume.
      await sbx.commands.run(['echo sandbox > /data/from-sbx.txt',
        'ln -s /etc /data/hostetc', 'ln -s ../../../../../../../../etc/hostname /data/hostname',
        'ln -s /proc/self/root /data/proc-root', 'mkfifo /data/fifo',
        'mkdir /data/dir && ln -s /etc/passwd /data/dir/passwd'].join(' && '), { user: 'root' });
    } finally {
      await sbx.kill();
    }
    assert.equal(await vol.readFile('/from-sbx.txt'), 'sandbox\n');
    const link = await vol.getInfo('/hostetc');
    assert.deepEqual([link.type, link.target], ['symlink', '/etc']);
    // every link resolves inside the volume ("/etc" is the volume's own
    // /etc), where none of what they name is
    await assert.rejects(vol.readFile('/hostetc/hostname'), VolumePathNotFoundError);
    await assert.rejects(vol.readFile('/hostname'), VolumePathNotFoundError);
    await assert.rejects(vol.readFile('/dir/passwd'), VolumePathNotFoundError);
    await assert.rejects(vol.list('/proc-root'), VolumePathNotFoundError);
    await assert.rejects(vol.list('/hostetc'), VolumePathNotFoundError);
    await assert.rejects(vol.writeFile(hostFile.replace('/etc', '/hostetc'), 'x'), VolumePathNotFoundError);
    await assert.rejects(vol.makeDir('/hostetc/corral-dir', { force: true }), VolumePathNotFoundError);
    assert.equal(existsSync(hostFile), false, 'nothing written on the worker\'s host');
    assert.equal(existsSync('/etc/corral-dir'), false);
    // a FIFO is refused at once, never opened (that would hang the worker)
    const t0 = Date.now();
    await assert.rejects(vol.readFile('/fifo'), (e) => e instanceof VolumeError && /not a regular file/.test(e.message));
    assert.ok(Date.now() - t0 < 5_000);
    // removing what holds links removes the links, not what they name
    await vol.remove('/dir');
    assert.equal(existsSync('/etc/passwd'), true);
    assert.equal((await vol.updateMetadata('/hostetc', { uid: 4321 })).uid, 4321);
    assert.notEqual(statSync('/etc').uid, 4321, 'the link is changed, not /etc');
  } finally {
    await Volume.destroy(vol.volumeId).catch(() => {});
  }
});

test(`${tag} the volume file API: only the volume's own token opens it; no path leads out; uploads are capped`, async () => {
  const vol = await Volume.create(`guarded-${randomBytes(4).toString('hex')}`);
  const other = process.env.CORRAL_OTHER_KEY;
  const theirs = await api('POST', '/volumes', { name: `theirs-${randomBytes(4).toString('hex')}` }, other);
  assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
  try {
    await vol.writeFile('/secret.txt', 'ours');
    const q = 'path=%2Fsecret.txt';
    assert.equal((await content(vol.volumeId, vol.token, 'GET', 'file', q)).body, 'ours');
    // no token, an API key (ours or theirs), a forged one: 401
    assert.ok(isError(await content(vol.volumeId, null, 'GET', 'file', q), 401, /missing volume token/));
    assert.ok(isError(await content(vol.volumeId, process.env.E2B_API_KEY, 'GET', 'file', q), 401, /invalid volume token/));
    assert.ok(isError(await content(vol.volumeId, other, 'GET', 'file', q), 401, /invalid volume token/));
    const [, , , exp, mac] = vol.token.split('.');
    const otherWs = theirs.body.token.split('.')[1];
    const forged = ['cvt1', otherWs, vol.volumeId, exp, mac].join('.');
    assert.ok(isError(await content(vol.volumeId, forged, 'GET', 'file', q), 401, /invalid volume token/));
    const later = ['cvt1', vol.token.split('.')[1], vol.volumeId, String(Number(exp) + 86400), mac].join('.');
    assert.ok(isError(await content(vol.volumeId, later, 'GET', 'file', q), 401, /invalid volume token/));
    // another workspace's token is for another volume: ours is not reached with it
    assert.ok(isError(await content(vol.volumeId, theirs.body.token, 'GET', 'file', q), 403, /another volume/));
    assert.ok(isError(await content(vol.volumeId, theirs.body.token, 'PUT', 'file', q, 'theirs'), 403, /another volume/));
    assert.ok(isError(await content(theirs.body.volumeID, vol.token, 'GET', 'dir', 'path=%2F'), 403, /another volume/));
    assert.equal(await vol.readFile('/secret.txt'), 'ours', 'nothing written by them');
    // through the SDK, with their token: refused the same way
    const stolen = new Volume(vol.volumeId, vol.name, theirs.body.token, vol.domain);
    await assert.rejects(stolen.readFile('/secret.txt'), VolumeError);
    await assert.rejects(new Volume(vol.volumeId, vol.name, 'garbage', vol.domain).list('/'), AuthenticationError);
    // paths: '..' is refused however it is spelled, before anything is opened
    for (const path of ['../../../../etc/passwd', '/..', 'a/../../b', '%2e%2e/etc/passwd']) {
      const r = await content(vol.volumeId, vol.token, 'GET', 'file', `path=${path.includes('%') ? path : encodeURIComponent(path)}`);
      assert.ok(isError(r, 400, /'\.\.' is not allowed/), `${path}: ${JSON.stringify(r)}`);
    }
    await assert.rejects(vol.readFile('../../../../etc/passwd'), (e) => e instanceof VolumeError && /400/.test(e.message));
    await assert.rejects(vol.writeFile('/../escape.txt', 'x'), VolumeError);
    assert.ok(isError(await content(vol.volumeId, vol.token, 'GET', 'file', 'path=a%00b'), 400, /malformed/));
    assert.ok(isError(await content(vol.volumeId, vol.token, 'GET', 'file', ''), 400, /path: required/));
    assert.ok(isError(await content(vol.volumeId, vol.token, 'GET', 'dir', 'path=%2F&depth=99'), 400, /depth/));
    // an upload over the limit is refused before it is taken
    const big = await new Promise((ok, fail) => {
      const u = new URL(`${process.env.E2B_API_URL}/volumecontent/${vol.volumeId}/file?path=big`);
      const req = https.request({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT',
        headers: { Authorization: `Bearer ${vol.token}`, 'Content-Length': String(100 * 1024 * 1024 + 1) } }, (res) => {
        let raw = '';
        res.on('data', (c) => { raw += c; });
        res.on('end', () => { req.destroy(); ok({ status: res.statusCode, body: JSON.parse(raw) }); });
      });
      req.on('error', fail);
      req.write('x'); // the rest never comes: the head alone is refused
    });
    assert.ok(isError(big, 413, /100m for a volume file/), JSON.stringify(big));
    assert.equal(await vol.exists('/big'), false);
    // once the volume is deleted its token opens nothing
    await Volume.destroy(vol.volumeId);
    assert.ok(isError(await content(vol.volumeId, vol.token, 'GET', 'file', q), 404, /volume not found/));
  } finally {
    await Volume.destroy(vol.volumeId).catch(() => {});
    await api('DELETE', `/volumes/${theirs.body.volumeID}`, undefined, other).catch(() => {});
  }
});
