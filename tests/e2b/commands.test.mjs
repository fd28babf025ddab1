// commands.* through nginx + module + workerd's data port to envd.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CommandExitError } from './sdk.mjs';
import { until } from '../lib/poll.mjs';
import { Sandbox, MODE } from './lib.mjs';

let sbx;
before(async () => { sbx = await Sandbox.create('base', { timeoutMs: 300_000 }); });
after(async () => { await sbx?.kill(); });

test(`[${MODE}] run: stdout, stderr, exit code, CommandExitError`, async () => {
  const r = await sbx.commands.run('echo out; echo err >&2');
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\n');
  await assert.rejects(sbx.commands.run('echo bad >&2; exit 3'), (e) => {
    assert.ok(e instanceof CommandExitError);
    assert.equal(e.exitCode, 3);
    assert.match(e.stderr, /bad/);
    return true;
  });
});

test(`[${MODE}] envs, cwd, user root and user`, async () => {
  assert.equal((await sbx.commands.run('echo $FOO', { envs: { FOO: 'bar' } })).stdout.trim(), 'bar');
  assert.equal((await sbx.commands.run('pwd', { cwd: '/tmp' })).stdout.trim(), '/tmp');
  assert.equal((await sbx.commands.run('whoami')).stdout.trim(), 'user');
  assert.equal((await sbx.commands.run('pwd')).stdout.trim(), '/home/user');
  assert.equal((await sbx.commands.run('whoami', { user: 'root' })).stdout.trim(), 'root');
});

test(`[${MODE}] background: wait, kill, list, connect, sendStdin`, async () => {
  const h = await sbx.commands.run('sleep 0.5; echo done', { background: true });
  const r = await h.wait();
  assert.equal(r.stdout.trim(), 'done');

  const long = await sbx.commands.run('sleep 600', { background: true });
  const listed = await sbx.commands.list();
  assert.ok(listed.some((p) => p.pid === long.pid));
  const attached = await sbx.commands.connect(long.pid);
  assert.equal(await long.kill(), true);
  await assert.rejects(attached.wait());

  const cat = await sbx.commands.run('cat', { background: true, stdin: true });
  await sbx.commands.sendStdin(cat.pid, 'hello stdin\n');
  await until(() => /hello stdin/.test(cat.stdout), { timeoutMs: 10000 }); // echoed back by cat
  await sbx.commands.kill(cat.pid);
  await cat.wait().catch(() => {});
  assert.match(cat.stdout, /hello stdin/);
});

test(`[${MODE}] a command's own timeout ends it`, async () => {
  await assert.rejects(sbx.commands.run('sleep 30', { timeoutMs: 1000 }));
});

test(`[${MODE}] 10 MB of output streams through`, async () => {
  let streamed = 0;
  const r = await sbx.commands.run('head -c 10485760 /dev/zero | base64 -w 0 | head -c 10485760', {
    onStdout: (d) => { streamed += d.length; },
  });
  assert.equal(r.exitCode, 0);
  assert.equal(streamed, 10 * 1024 * 1024);
});
