// GET/POST /files: raw and multipart uploads, downloads, big streamed files.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startEnvd, unary, TEST_UID } from './lib.mjs';

let envd;
before(async () => { envd = await startEnvd(); });
after(async () => { await envd?.stop(); });

const url = (q) => `${envd.base}/files?${new URLSearchParams(q)}`;

test('octet-stream upload, then download', async () => {
  let res = await fetch(url({ path: 'dir/hello.txt' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'hello world',
  });
  assert.equal(res.status, 200);
  const [info] = await res.json();
  assert.deepEqual(info, { name: 'hello.txt', type: 'file', path: path.join(envd.home, 'dir/hello.txt') });
  const st = fs.statSync(info.path);
  assert.equal(st.uid, TEST_UID);
  assert.equal(fs.statSync(path.dirname(info.path)).uid, TEST_UID);
  res = await fetch(url({ path: '~/dir/hello.txt' }));
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'hello world');
});

test('empty file downloads with Content-Length 0', async () => {
  await fetch(url({ path: 'empty' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: '',
  });
  const res = await fetch(url({ path: 'empty' }));
  assert.equal(res.headers.get('content-length'), '0');
  assert.equal(await res.text(), '');
});

test('multipart upload with several files (paths in file names)', async () => {
  const form = new FormData();
  form.append('file', new Blob(['one']), 'multi/one.txt');
  form.append('file', new Blob(['two']), path.join(envd.home, 'multi/two.txt'));
  form.append('file', new Blob(['three']), '/tmp/../' + path.join(envd.home, 'multi/sub/three.txt').slice(1));
  const res = await fetch(url({}), { method: 'POST', body: form });
  assert.equal(res.status, 200);
  const list = await res.json();
  assert.deepEqual(list.map((e) => e.name), ['one.txt', 'two.txt', 'three.txt']);
  assert.equal(fs.readFileSync(path.join(envd.home, 'multi/sub/three.txt'), 'utf8'), 'three');
});

test('multipart: two files to one path is refused', async () => {
  const form = new FormData();
  form.append('file', new Blob(['a']), 'x');
  form.append('file', new Blob(['b']), 'y');
  const res = await fetch(url({ path: 'same.txt' }), { method: 'POST', body: form });
  assert.equal(res.status, 400);
  assert.match((await res.json()).message, /same path/);
});

test('root upload; user cannot write where it may not', async () => {
  let res = await fetch(url({ path: '/root-owned-dir-for-envd-test/x', username: 'root' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'x',
  });
  assert.equal(res.status, 200);
  fs.rmSync('/root-owned-dir-for-envd-test', { recursive: true });
  fs.mkdirSync(path.join(envd.dir, 'locked'), { mode: 0o700 });
  res = await fetch(url({ path: path.join(envd.dir, 'locked/x') }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'x',
  });
  assert.equal(res.status, 403);
});

test('download errors: missing 404, directory 400, bad user 401', async () => {
  let res = await fetch(url({ path: 'nope.txt' }));
  assert.equal(res.status, 404);
  assert.deepEqual(Object.keys(await res.json()).sort(), ['code', 'message']);
  res = await fetch(url({ path: '~' }));
  assert.equal(res.status, 400);
  res = await fetch(url({ path: 'x', username: 'ghost' }));
  assert.equal(res.status, 401);
  res = await fetch(url({ path: 'raw' }), { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
  assert.equal(res.status, 400);
  res = await fetch(url({}), { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'x' });
  assert.equal(res.status, 400);
});

test('gzip upload (Content-Encoding) and gzip download (Accept-Encoding)', async () => {
  const text = 'compress me '.repeat(1000);
  let res = await fetch(url({ path: 'gz.txt' }), {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' },
    body: zlib.gzipSync(text),
  });
  assert.equal(res.status, 200);
  assert.equal(fs.readFileSync(path.join(envd.home, 'gz.txt'), 'utf8'), text);
  res = await fetch(url({ path: 'gz.txt' }), { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(res.headers.get('content-encoding'), 'gzip');
  assert.equal(await res.text(), text); // fetch decodes gzip
  // A generic accept list (fetch's default) gets the file as it is.
  res = await fetch(url({ path: 'gz.txt' }), { headers: { 'Accept-Encoding': 'gzip, deflate' } });
  assert.equal(res.headers.get('content-encoding'), null);
  assert.equal(await res.text(), text);
});

test('metadata headers become xattrs reported on Stat and the upload answer', async () => {
  let res = await fetch(url({ path: 'meta.txt' }), {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream', 'X-Metadata-Owner-Team': 'infra' },
    body: 'm',
  });
  const [info] = await res.json();
  assert.deepEqual(info.metadata, { 'owner-team': 'infra' });
  const st = await unary(envd, 'filesystem.Filesystem/Stat', { path: 'meta.txt' });
  assert.deepEqual(st.body.entry.metadata, { 'owner-team': 'infra' });
  res = await fetch(url({ path: 'meta.txt' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'm2',
  });
  const again = await unary(envd, 'filesystem.Filesystem/Stat', { path: 'meta.txt' });
  assert.equal(again.body.entry.metadata, undefined);
});

function vmHWM(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
  return Number(m[1]) * 1024;
}

test('a 100 MB file streams up and down without being buffered', async () => {
  const size = 100 * 1024 * 1024;
  const chunk = crypto.randomBytes(1024 * 1024);
  const up = crypto.createHash('sha256');
  let sent = 0;
  const body = new ReadableStream({
    pull(ctl) {
      if (sent >= size) { ctl.close(); return; }
      const c = Buffer.from(chunk);
      c.writeUInt32BE(sent / chunk.length, 0); // every MiB differs
      up.update(c);
      sent += c.length;
      ctl.enqueue(c);
    },
  });
  let res = await fetch(url({ path: 'big.bin' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body, duplex: 'half',
  });
  assert.equal(res.status, 200);
  assert.equal(fs.statSync(path.join(envd.home, 'big.bin')).size, size);

  res = await fetch(url({ path: 'big.bin' }), { headers: { 'Accept-Encoding': 'identity' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), String(size));
  const down = crypto.createHash('sha256');
  let got = 0;
  for await (const c of res.body) { down.update(c); got += c.length; }
  assert.equal(got, size);
  assert.equal(down.digest('hex'), up.digest('hex'));
  assert.ok(vmHWM(envd.child.pid) < 32 * 1024 * 1024, `envd peak RSS ${vmHWM(envd.child.pid)}`);

  // and multipart, same size, to check the multipart reader streams too
  const form = new FormData();
  form.append('file', new Blob([fs.readFileSync(path.join(envd.home, 'big.bin'))]), 'big2.bin');
  res = await fetch(url({}), { method: 'POST', body: form });
  assert.equal(res.status, 200);
  assert.equal(fs.statSync(path.join(envd.home, 'big2.bin')).size, size);
  assert.ok(vmHWM(envd.child.pid) < 32 * 1024 * 1024, `envd peak RSS ${vmHWM(envd.child.pid)}`);
});
