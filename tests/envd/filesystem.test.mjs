// filesystem.Filesystem over Connect JSON: entries, path errors, watching.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { until } from '../lib/poll.mjs';
import { startEnvd, stream, unary, TEST_UID } from './lib.mjs';

let envd;
before(async () => { envd = await startEnvd(); });
after(async () => { await envd?.stop(); });

const call = (m, body, opts) => unary(envd, `filesystem.Filesystem/${m}`, body, opts);

test('MakeDir creates parents as the user; again is already_exists', async () => {
  let r = await call('MakeDir', { path: 'a/b/c' });
  assert.equal(r.status, 200);
  assert.equal(r.body.entry.path, path.join(envd.home, 'a/b/c'));
  assert.equal(r.body.entry.type, 'FILE_TYPE_DIRECTORY');
  assert.equal(fs.statSync(path.join(envd.home, 'a/b')).uid, TEST_UID);
  r = await call('MakeDir', { path: '~/a/b/c' });
  assert.equal(r.status, 409);
  assert.equal(r.body.code, 'already_exists');
});

test('Stat reports EntryInfo in proto3 JSON', async () => {
  fs.writeFileSync(path.join(envd.home, 'f.txt'), 'hello');
  fs.symlinkSync(path.join(envd.home, 'f.txt'), path.join(envd.home, 'link'));
  let r = await call('Stat', { path: 'f.txt' });
  assert.equal(r.status, 200);
  const e = r.body.entry;
  assert.equal(e.name, 'f.txt');
  assert.equal(e.type, 'FILE_TYPE_FILE');
  assert.equal(e.size, '5');
  assert.equal(e.permissions, '-rw-r--r--');
  assert.equal(e.mode, 0o644);
  assert.equal(e.owner, 'root');
  assert.ok(!Number.isNaN(Date.parse(e.modifiedTime)));
  r = await call('Stat', { path: 'link' });
  assert.equal(r.body.entry.type, 'FILE_TYPE_SYMLINK');
  assert.equal(r.body.entry.symlinkTarget, path.join(envd.home, 'f.txt'));
});

test('ListDir honours depth', async () => {
  await call('MakeDir', { path: 'tree/x/y' });
  fs.writeFileSync(path.join(envd.home, 'tree/x/y/deep.txt'), '1');
  fs.writeFileSync(path.join(envd.home, 'tree/top.txt'), '1');
  let r = await call('ListDir', { path: 'tree', depth: 1 });
  assert.deepEqual(r.body.entries.map((e) => e.name), ['top.txt', 'x']);
  r = await call('ListDir', { path: 'tree', depth: 3 });
  assert.deepEqual(r.body.entries.map((e) => path.relative(path.join(envd.home, 'tree'), e.path)),
    ['top.txt', 'x', 'x/y', 'x/y/deep.txt']);
});

test('Move renames and creates the destination parent', async () => {
  fs.writeFileSync(path.join(envd.home, 'm.txt'), 'x');
  const r = await call('Move', { source: 'm.txt', destination: 'moved/into/m2.txt' });
  assert.equal(r.status, 200);
  assert.equal(r.body.entry.path, path.join(envd.home, 'moved/into/m2.txt'));
  const missing = await call('Move', { source: 'nope', destination: 'x' });
  assert.equal(missing.body.code, 'not_found');
});

test('Remove is recursive and quiet about missing paths', async () => {
  await call('MakeDir', { path: 'gone/inner' });
  fs.writeFileSync(path.join(envd.home, 'gone/inner/f'), 'x');
  let r = await call('Remove', { path: 'gone' });
  assert.equal(r.status, 200);
  assert.ok(!fs.existsSync(path.join(envd.home, 'gone')));
  r = await call('Remove', { path: 'gone' });
  assert.equal(r.status, 200);
});

test('path errors map to the Connect codes the SDK expects', async () => {
  let r = await call('Stat', { path: 'does-not-exist' });
  assert.equal(r.status, 404);
  assert.equal(r.body.code, 'not_found');
  r = await call('ListDir', { path: 'f.txt' });
  assert.equal(r.status, 400);
  assert.equal(r.body.code, 'invalid_argument');
  r = await call('ListDir', { path: '/no/such/dir' });
  assert.equal(r.body.code, 'not_found');
  r = await call('Stat', { path: '~root/x' });
  assert.equal(r.body.code, 'invalid_argument');
  fs.mkdirSync(path.join(envd.dir, 'private'), { mode: 0o700 });
  r = await call('MakeDir', { path: path.join(envd.dir, 'private/sub') });
  assert.equal(r.status, 403);
  assert.equal(r.body.code, 'permission_denied');
  r = await call('MakeDir', { path: path.join(envd.dir, 'private/sub') }, { user: 'root' });
  assert.equal(r.status, 200);
  r = await call('MakeDir', { path: 'f.txt' });
  assert.equal(r.body.code, 'invalid_argument');
  r = await call('Stat', { path: 'f.txt' }, { user: 'ghost' });
  assert.equal(r.status, 401);
  assert.equal(r.body.code, 'unauthenticated');
});

test('WatchDir streams events, recursively', async () => {
  await call('MakeDir', { path: 'w' });
  const ctl = new AbortController();
  const it = stream(envd, 'filesystem.Filesystem/WatchDir',
    { path: 'w', recursive: true, includeEntry: true }, { controller: ctl });
  assert.deepEqual((await it.next()).value, { start: {} });
  const events = [];
  const reader = (async () => {
    for await (const m of it) if (m.filesystem) events.push(m.filesystem);
  })().catch(() => {});
  fs.mkdirSync(path.join(envd.home, 'w/sub'));
  // envd watches a new directory before it sends the event of its creation
  await until(() => events.some((e) => e.type === 'EVENT_TYPE_CREATE' && e.name === 'sub'), { timeoutMs: 5000 });
  fs.writeFileSync(path.join(envd.home, 'w/sub/keep.txt'), 'stays');
  fs.writeFileSync(path.join(envd.home, 'w/sub/new.txt'), 'data');
  fs.renameSync(path.join(envd.home, 'w/sub/new.txt'), path.join(envd.home, 'w/sub/renamed.txt'));
  fs.rmSync(path.join(envd.home, 'w/sub/renamed.txt'));
  await until(() => events.some((e) => e.type === 'EVENT_TYPE_REMOVE'), { timeoutMs: 2500 });
  ctl.abort();
  await reader;
  const seen = events.map((e) => `${e.type}:${e.name}`);
  assert.ok(seen.includes('EVENT_TYPE_CREATE:sub'), seen.join(','));
  assert.ok(seen.includes('EVENT_TYPE_CREATE:sub/new.txt'), seen.join(','));
  assert.ok(seen.includes('EVENT_TYPE_WRITE:sub/new.txt'), seen.join(','));
  assert.ok(seen.includes('EVENT_TYPE_RENAME:sub/new.txt'), seen.join(','));
  assert.ok(seen.includes('EVENT_TYPE_REMOVE:sub/renamed.txt'), seen.join(','));
  // includeEntry: entries are stat-ed when the event is read, so only for paths still there
  const created = events.find((e) => e.name === 'sub/keep.txt' && e.type === 'EVENT_TYPE_CREATE');
  assert.equal(created.entry?.path, path.join(envd.home, 'w/sub/keep.txt'));
  assert.equal(created.entry?.type, 'FILE_TYPE_FILE');
});

test('WatchDir keepalives and errors', async () => {
  let n = 0;
  const ctl = new AbortController();
  const it = stream(envd, 'filesystem.Filesystem/WatchDir', { path: '~' }, { controller: ctl, keepalive: 1 });
  for await (const m of it) {
    if (m.keepalive) n++;
    if (n === 2) break;
  }
  ctl.abort();
  assert.equal(n, 2);
  await assert.rejects(stream(envd, 'filesystem.Filesystem/WatchDir', { path: 'nope' }).next(),
    { code: 'not_found' });
  await assert.rejects(stream(envd, 'filesystem.Filesystem/WatchDir', { path: 'f.txt' }).next(),
    { code: 'invalid_argument' });
});

test('CreateWatcher / GetWatcherEvents / RemoveWatcher', async () => {
  await call('MakeDir', { path: 'pw' });
  const c = await call('CreateWatcher', { path: 'pw', recursive: false });
  assert.equal(c.status, 200);
  const id = c.body.watcherId;
  assert.ok(id);
  fs.writeFileSync(path.join(envd.home, 'pw/one'), '1');
  let ev; // polled: each call takes the events that came since the last
  await until(async () => {
    ev = await call('GetWatcherEvents', { watcherId: id });
    return ev.body.events?.some((e) => e.name === 'one' && e.type === 'EVENT_TYPE_CREATE');
  }, { timeoutMs: 5000 });
  assert.ok(ev.body.events.some((e) => e.name === 'one' && e.type === 'EVENT_TYPE_CREATE'));
  const empty = await call('GetWatcherEvents', { watcherId: id });
  assert.deepEqual(empty.body.events, []);
  assert.equal((await call('RemoveWatcher', { watcherId: id })).status, 200);
  const gone = await call('GetWatcherEvents', { watcherId: id });
  assert.equal(gone.body.code, 'not_found');
});
