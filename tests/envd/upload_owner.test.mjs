// POST /files as a non-root user into directories the user may not create
// (issue 9 point 4, decision 0039): envd creates the missing parents as root
// and gives each one it created to the user; it never chowns what was there,
// and never creates through a symbolic link (an attacker inside the sandbox,
// running as the user, may plant one to steer root into /etc).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startEnvd, TEST_UID } from './lib.mjs';

let envd;
let home;
before(async () => {
  envd = await startEnvd();
  home = path.join(envd.dir, 'home');
});
after(async () => { await envd?.stop(); });

const url = (q) => `${envd.base}/files?${new URLSearchParams({ username: 'user', ...q })}`;
const raw = (p, body) => fetch(url({ path: p }), {
  method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body,
});
const owner = (p) => fs.lstatSync(p).uid;

// A root-owned 0755 directory: the user can read it but not create in it.
function rootDir(name) {
  const d = path.join(envd.dir, name);
  fs.mkdirSync(d, { mode: 0o755 });
  return d;
}

test('octet-stream: missing parents under a root directory are created and owned by the user', async () => {
  const base = rootDir('ro-raw');
  const res = await raw(path.join(base, 'newdir/sub/x.txt'), 'hello');
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await res.json())[0].path, path.join(base, 'newdir/sub/x.txt'));
  for (const p of ['newdir', 'newdir/sub', 'newdir/sub/x.txt']) assert.equal(owner(path.join(base, p)), TEST_UID, p);
  assert.equal(fs.statSync(path.join(base, 'newdir')).gid, TEST_UID);
  assert.equal(fs.readFileSync(path.join(base, 'newdir/sub/x.txt'), 'utf8'), 'hello');
  assert.equal(owner(base), 0, 'the existing parent keeps its owner');
});

test('multipart: the issue case, a new top-level directory /<name>/x.txt', async () => {
  const top = `/envd-upload-${crypto.randomBytes(4).toString('hex')}`;
  try {
    const form = new FormData();
    form.append('file', new Blob(['multi']), 'x.txt');
    const res = await fetch(url({ path: `${top}/x.txt` }), { method: 'POST', body: form });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(owner(top), TEST_UID);
    assert.equal(owner(`${top}/x.txt`), TEST_UID);
    assert.equal(fs.readFileSync(`${top}/x.txt`, 'utf8'), 'multi');
    assert.equal(owner('/'), 0);
  } finally {
    fs.rmSync(top, { recursive: true, force: true });
  }
});

test('existing parents keep their owner; only what envd created changes hands', async () => {
  const base = rootDir('ro-keep');
  fs.mkdirSync(path.join(base, 'a'), { mode: 0o755 });
  const res = await raw(path.join(base, 'a/b/c/x.txt'), 'x');
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(owner(base), 0);
  assert.equal(owner(path.join(base, 'a')), 0, 'a pre-existing directory is never chowned');
  assert.equal(owner(path.join(base, 'a/b')), TEST_UID);
  assert.equal(owner(path.join(base, 'a/b/c')), TEST_UID);
});

test('attack: a symlink the user planted in its home, pointing into a root directory, is refused', async () => {
  const target = rootDir('fake-etc'); // stands in for /etc
  fs.symlinkSync(target, path.join(home, 'evil'));
  fs.lchownSync(path.join(home, 'evil'), TEST_UID, TEST_UID);
  const res = await raw(path.join(home, 'evil/cron.d/job'), '* * * * * root sh /tmp/pwn');
  assert.equal(res.status, 403, await res.clone().text());
  assert.match((await res.json()).message, /symbolic link/);
  assert.deepEqual(fs.readdirSync(target), [], 'nothing was created behind the link');
  assert.equal(owner(target), 0);
});

test('attack: a symlink at the file itself never makes root write or chown its target', async () => {
  const secret = path.join(rootDir('ro-secret'), 'shadow');
  fs.writeFileSync(secret, 'root-only', { mode: 0o644 });
  fs.symlinkSync(secret, path.join(home, 'link.txt'));
  fs.lchownSync(path.join(home, 'link.txt'), TEST_UID, TEST_UID);
  const res = await raw(path.join(home, 'link.txt'), 'overwritten');
  assert.equal(res.status, 403, await res.clone().text());
  assert.equal(fs.readFileSync(secret, 'utf8'), 'root-only');
  assert.equal(owner(secret), 0);
});

test('attack: a symlink into a root directory, deeper in a path that needs root, is refused', async () => {
  const target = rootDir('fake-etc2');
  const base = rootDir('ro-deep');
  fs.symlinkSync(target, path.join(base, 'link')); // even a root-owned link: no creation through it
  const res = await raw(path.join(base, 'link/new/x'), 'x');
  assert.equal(res.status, 403, await res.clone().text());
  assert.deepEqual(fs.readdirSync(target), []);
});

test('a symlink the user may follow by itself still works: no root needed, no change', async () => {
  fs.mkdirSync(path.join(home, 'real'));
  fs.chownSync(path.join(home, 'real'), TEST_UID, TEST_UID);
  fs.symlinkSync(path.join(home, 'real'), path.join(home, 'ulink'));
  const res = await raw(path.join(home, 'ulink/new/x.txt'), 'ok');
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(owner(path.join(home, 'real/new/x.txt')), TEST_UID);
});

test('a file where a directory should be is still 400; root is not asked', async () => {
  const base = rootDir('ro-file');
  fs.writeFileSync(path.join(base, 'afile'), 'x');
  const res = await raw(path.join(base, 'afile/x.txt'), 'x');
  assert.equal(res.status, 400, await res.clone().text());
});
