// E2B compatibility, round two (issue 9), with whichever SDK sdk.mjs loads:
// 2.45.0 reconnects through POST /sandboxes/{id}/connect and checks the key's
// format before any request, 2.51.0 uses /v2. Each test is what a user of
// that SDK does first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Sandbox, withSandbox, MODE } from './lib.mjs';
import { SDK, Template } from './sdk.mjs';

const tag = `[${MODE} ${SDK}]`;

test(`${tag} the key is in E2B's format: the SDK takes it without E2B_VALIDATE_API_KEY`, async () => {
  assert.equal(process.env.E2B_VALIDATE_API_KEY, undefined);
  assert.match(process.env.E2B_API_KEY, /^e2b_[0-9a-f]+$/);
  await withSandbox({}, async (sbx) => assert.equal(await sbx.isRunning(), true));
});

test(`${tag} connect to a running sandbox: the same sandbox, commands run, a secure one included`, async () => {
  await withSandbox({ secure: true }, async (sbx) => {
    await sbx.files.write('/tmp/mark', 'here');
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.equal(again.sandboxId, sbx.sandboxId);
    assert.equal((await again.commands.run('cat /tmp/mark')).stdout, 'here');
  });
});

test(`${tag} after kill: isRunning() is false and connect says not found`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 60_000 });
  assert.equal(await sbx.kill(), true);
  assert.equal(await sbx.isRunning(), false);
  await assert.rejects(Sandbox.connect(sbx.sandboxId), (e) => /not found/i.test(`${e.name} ${e.message}`));
});

test(`${tag} an upload as user into a directory that does not exist: made, and the user's`, async () => {
  await withSandbox({}, async (sbx) => {
    const dir = `/new-${randomBytes(4).toString('hex')}`;
    await sbx.files.write(`${dir}/sub/x.txt`, 'payload', { user: 'user' });
    assert.equal(await sbx.files.read(`${dir}/sub/x.txt`, { user: 'user' }), 'payload');
    const r = await sbx.commands.run(`stat -c %U ${dir} ${dir}/sub ${dir}/sub/x.txt`, { user: 'root' });
    assert.deepEqual(r.stdout.trim().split('\n'), ['user', 'user', 'user']);
  });
});

test(`${tag} Template.exists: base is there, an unknown alias is not`, async () => {
  assert.equal(await Template.exists('base'), true);
  assert.equal(await Template.exists(`no-such-${randomBytes(4).toString('hex')}`), false);
});

test(`${tag} the base template has what users run first: git, curl, python, node`, async () => {
  await withSandbox({}, async (sbx) => {
    const git = await sbx.commands.run('cd ~ && git init -q repo && cd repo && echo hi > a && git add a && ' +
      'git -c user.email=u@example.com -c user.name=u commit -q -m first && git log --format=%s');
    assert.equal(git.stdout.trim(), 'first');
    const tools = await sbx.commands.run('curl --version >/dev/null && wget --version >/dev/null && ' +
      'python -c "import venv, pip; print(1)" && node -e "console.log(2)" && npm --version && ' +
      'sudo -n true && ps -o comm= -p $$ && echo $LANG');
    const [py, node, npm, ps, lang] = tools.stdout.trim().split('\n');
    assert.deepEqual([py, node, ps, lang], ['1', '2', 'bash', 'C.UTF-8']);
    assert.match(npm, /^\d+\.\d+\.\d+$/);
  });
});
