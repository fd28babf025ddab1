// PTY and files through the SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { until } from '../lib/poll.mjs';
import { Sandbox, MODE } from './lib.mjs';

let sbx;
before(async () => { sbx = await Sandbox.create('base', { timeoutMs: 300_000 }); });
after(async () => { await sbx?.kill(); });

test(`[${MODE}] pty: create, send input, resize, kill`, async () => {
  let out = '';
  const dec = new TextDecoder();
  const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += dec.decode(d); } });
  await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('stty size; echo pty-ok\n'));
  await until(() => /24 80/.test(out) && /pty-ok/.test(out), { timeoutMs: 10000 });
  assert.match(out, /24 80/);
  assert.match(out, /pty-ok/);
  await sbx.pty.resize(pty.pid, { cols: 100, rows: 40 });
  await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('stty size\n'));
  await until(() => /40 100/.test(out), { timeoutMs: 10000 });
  assert.match(out, /40 100/);
  assert.equal(await sbx.pty.kill(pty.pid), true);
});

test(`[${MODE}] files: write and read text and bytes`, async () => {
  await sbx.files.write('notes/hello.txt', 'hello files');
  assert.equal(await sbx.files.read('notes/hello.txt'), 'hello files');
  const bytes = new Uint8Array([0, 1, 2, 250, 255]);
  await sbx.files.write('/tmp/b.bin', bytes);
  assert.deepEqual(await sbx.files.read('/tmp/b.bin', { format: 'bytes' }), bytes);
});

test(`[${MODE}] files: a 100 MB file up and down`, async () => {
  const data = randomBytes(100 * 1024 * 1024);
  await sbx.files.write('/tmp/big.bin', data);
  const back = await sbx.files.read('/tmp/big.bin', { format: 'bytes' });
  assert.equal(back.length, data.length);
  assert.equal(createHash('sha256').update(back).digest('hex'), createHash('sha256').update(data).digest('hex'));
  await sbx.files.remove('/tmp/big.bin');
});

test(`[${MODE}] files: list with depth, exists, getInfo, makeDir, rename, remove`, async () => {
  assert.equal(await sbx.files.makeDir('tree/a/b'), true);
  await sbx.files.write('tree/a/b/leaf.txt', 'x');
  const shallow = await sbx.files.list('tree');
  assert.deepEqual(shallow.map((e) => e.name), ['a']);
  const deep = await sbx.files.list('tree', { depth: 3 });
  assert.ok(deep.some((e) => e.name === 'leaf.txt'));
  assert.equal(await sbx.files.exists('tree/a/b/leaf.txt'), true);
  const info = await sbx.files.getInfo('tree/a/b/leaf.txt');
  assert.equal(info.type, 'file');
  await sbx.files.rename('tree/a/b/leaf.txt', 'tree/leaf2.txt');
  assert.equal(await sbx.files.exists('tree/leaf2.txt'), true);
  await sbx.files.remove('tree');
  assert.equal(await sbx.files.exists('tree'), false);
});

test(`[${MODE}] files: watchDir sees events`, async () => {
  await sbx.files.makeDir('watched');
  const events = [];
  const h = await sbx.files.watchDir('watched', (e) => events.push(e), { recursive: true });
  await sbx.files.write('watched/new.txt', 'data');
  await until(() => events.some((e) => e.name.endsWith('new.txt')), { timeoutMs: 5000, everyMs: 100 });
  await h.stop();
  assert.ok(events.some((e) => e.name.endsWith('new.txt')), JSON.stringify(events));
});

test(`[${MODE}] files: errors for missing and forbidden paths`, async () => {
  await assert.rejects(sbx.files.read('/no/such/file'), (e) => /NotFound/.test(e.name) && /does not exist/.test(e.message));
  await assert.rejects(sbx.files.write('/root/forbidden.txt', 'x'), (e) => /permission|denied|forbidden/i.test(e.message));
});
