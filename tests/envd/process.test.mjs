// process.Process over Connect JSON, driven as the e2b SDK drives it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../lib/poll.mjs';
import { b64, run, sleep, startEnvd, stream, unary, TEST_UID } from './lib.mjs';

let envd;
before(async () => { envd = await startEnvd(); });
after(async () => { await envd?.stop(); });

test('start streams stdout, stderr and the exit code', async () => {
  const r = await run(envd, 'echo out; echo err >&2; exit 3');
  assert.ok(r.pid > 0);
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\n');
  assert.equal(r.end.exitCode, 3);
  assert.equal(r.end.exited, true);
  assert.equal(r.end.status, 'exit status 3');
  assert.equal(r.end.error, 'exit status 3');
});

test('a successful command ends with exit code 0 (left out, proto3) and no error', async () => {
  const r = await run(envd, 'true');
  assert.equal(r.end.exitCode, undefined);
  assert.equal(r.end.error, undefined);
  assert.equal(r.end.exited, true);
});

test('runs as the default user in its home, with HOME/USER and request envs', async () => {
  const r = await run(envd, 'id -u; pwd; echo $HOME $USER $FOO', { envs: { FOO: 'bar' } });
  assert.equal(r.stdout, `${TEST_UID}\n${envd.home}\n${envd.home} user bar\n`);
});

test('root on request, and cwd', async () => {
  const r = await run(envd, 'id -u; pwd', { user: 'root', cwd: '/tmp' });
  assert.equal(r.stdout, '0\n/tmp\n');
});

test('unknown user is unauthenticated; missing cwd is invalid_argument', async () => {
  await assert.rejects(run(envd, 'true', { user: 'nobody-here' }), { code: 'unauthenticated' });
  await assert.rejects(run(envd, 'true', { cwd: '/does/not/exist' }), { code: 'invalid_argument' });
});

test('large output arrives complete and in order', async () => {
  const r = await run(envd, 'seq 1 200000');
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 200000);
  assert.equal(lines[199999], '200000');
});

test('stdin: send input, close stdin, command sees EOF', async () => {
  let pid;
  const started = new Promise((res) => { pid = res; });
  const done = run(envd, 'cat; echo done', { stdin: true, onStart: pid });
  const p = await started;
  let r = await unary(envd, 'process.Process/SendInput',
    { process: { pid: p }, input: { stdin: b64('hello\n') } });
  assert.equal(r.status, 200);
  r = await unary(envd, 'process.Process/CloseStdin', { process: { pid: p } });
  assert.equal(r.status, 200);
  const out = await done;
  assert.equal(out.stdout, 'hello\ndone\n');
});

test('stdin off: input is refused', async () => {
  let pid;
  const started = new Promise((res) => { pid = res; });
  const done = run(envd, 'sleep 1', { onStart: pid });
  const r = await unary(envd, 'process.Process/SendInput',
    { process: { pid: await started }, input: { stdin: b64('x') } });
  assert.equal(r.status, 400);
  assert.equal(r.body.code, 'failed_precondition');
  await done;
});

test('pty: interactive shell, size, resize, input', async () => {
  let pid;
  const started = new Promise((res) => { pid = res; });
  let seen = '';
  const done = run(envd, 'stty size; read line; echo "got:$line"; stty size',
    { pty: { cols: 100, rows: 40 }, onStart: pid, onPty: (s) => { seen = s; } });
  const p = await started;
  await until(() => seen.includes('40 100'), { timeoutMs: 2000, everyMs: 20 });
  assert.match(seen, /40 100/);
  let r = await unary(envd, 'process.Process/Update',
    { process: { pid: p }, pty: { size: { cols: 120, rows: 50 } } });
  assert.equal(r.status, 200);
  r = await unary(envd, 'process.Process/SendInput',
    { process: { pid: p }, input: { pty: b64('abc\n') } });
  assert.equal(r.status, 200);
  const out = await done;
  assert.match(out.pty, /got:abc/);
  assert.match(out.pty, /50 120/);
});

test('list, tag, connect and SIGKILL', async () => {
  let pid;
  const started = new Promise((res) => { pid = res; });
  const done = run(envd, 'for i in $(seq 1 100); do echo tick $i; sleep 0.1; done',
    { tag: 'ticker', onStart: pid });
  const p = await started;
  const list = await unary(envd, 'process.Process/List', {});
  const info = list.body.processes.find((x) => x.pid === p);
  assert.ok(info, 'started process is listed');
  assert.equal(info.tag, 'ticker');
  assert.equal(info.config.cmd, '/bin/bash');

  // Connect by tag sees later output too.
  const ctl = new AbortController();
  const it = stream(envd, 'process.Process/Connect', { process: { tag: 'ticker' } }, { controller: ctl });
  const first = await it.next();
  assert.equal(first.value.event.start.pid, p);
  const second = await it.next();
  assert.match(Buffer.from(second.value.event.data.stdout, 'base64').toString(), /tick/);
  ctl.abort();

  const kill = await unary(envd, 'process.Process/SendSignal',
    { process: { pid: p }, signal: 'SIGNAL_SIGKILL' });
  assert.equal(kill.status, 200);
  const out = await done;
  assert.equal(out.end.exitCode, -1);
  assert.equal(out.end.status, 'signal: killed');
  // Gone now: what the SDK's kill() maps to `false`.
  const again = await unary(envd, 'process.Process/SendSignal',
    { process: { pid: p }, signal: 'SIGNAL_SIGKILL' });
  assert.equal(again.status, 404);
  assert.equal(again.body.code, 'not_found');
});

test('SIGTERM ends a process; a disconnected Start keeps it running', async () => {
  const ctl = new AbortController();
  const it = stream(envd, 'process.Process/Start',
    { process: { cmd: '/bin/sleep', args: ['30'] }, stdin: false }, { controller: ctl });
  const p = (await it.next()).value.event.start.pid;
  ctl.abort();
  // sleep: a window, not a condition: a process wrongly killed on disconnect goes in it.
  await sleep(200);
  const list = await unary(envd, 'process.Process/List', {});
  assert.ok(list.body.processes.some((x) => x.pid === p), 'still running after disconnect');
  const conn = stream(envd, 'process.Process/Connect', { process: { pid: p } });
  assert.equal((await conn.next()).value.event.start.pid, p);
  await unary(envd, 'process.Process/SendSignal', { process: { pid: p }, signal: 'SIGNAL_SIGTERM' });
  let end;
  for await (const m of conn) if (m.event.end) end = m.event.end;
  assert.equal(end.status, 'signal: terminated');
});

test('keepalive events on a quiet stream', async () => {
  const r = await run(envd, 'sleep 2.5', { keepalive: 1 });
  assert.ok(r.keepalives >= 2, `got ${r.keepalives} keepalives`);
});

test('Connect-Timeout-Ms bounds a started process', async () => {
  const t0 = Date.now();
  await assert.rejects(run(envd, 'sleep 30', { timeoutMs: 700 }), { code: 'deadline_exceeded' });
  assert.ok(Date.now() - t0 < 5000);
  const listed = async () => (await unary(envd, 'process.Process/List', {})).body.processes
    .some((x) => x.config.args?.[2] === 'sleep 30');
  await until(async () => !await listed(), { timeoutMs: 5000 });
  const list = await unary(envd, 'process.Process/List', {});
  assert.ok(!list.body.processes.some((x) => x.config.args?.[2] === 'sleep 30'), 'killed');
});

test('orphans are reaped and a background child does not hold the end event', async () => {
  const t0 = Date.now();
  const r = await run(envd, 'sleep 5 & echo started');
  assert.equal(r.stdout, 'started\n');
  assert.ok(Date.now() - t0 < 4000, 'end event came before the background sleep finished');
});

test('errors: unknown pid, bad selector, unknown method', async () => {
  let r = await unary(envd, 'process.Process/SendInput', { process: { pid: 999999 }, input: { stdin: b64('x') } });
  assert.equal(r.status, 404);
  assert.equal(r.body.code, 'not_found');
  r = await unary(envd, 'process.Process/CloseStdin', { process: {} });
  assert.equal(r.body.code, 'invalid_argument');
  await assert.rejects(stream(envd, 'process.Process/Connect', { process: { pid: 999999 } }).next(),
    { code: 'not_found' });
  r = await unary(envd, 'process.Process/Nope', {});
  assert.equal(r.status, 404);
});
