// Sandbox lifecycle through the SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox, withSandbox, MODE } from './lib.mjs';

test(`[${MODE}] create with metadata, envs and timeout; getInfo; isRunning`, async () => {
  await withSandbox({ metadata: { suite: 'e2b', mode: MODE }, envs: { CORRAL_TEST: 'yes' }, timeoutMs: 90_000 }, async (sbx) => {
    assert.match(sbx.sandboxId, /^[0-9a-f]{20}$/);
    const info = await sbx.getInfo();
    assert.equal(info.sandboxId, sbx.sandboxId);
    assert.equal(info.templateId, 'base');
    assert.equal(info.metadata.suite, 'e2b');
    assert.ok(info.endAt - info.startedAt > 80_000 && info.endAt - info.startedAt <= 91_000);
    assert.equal(await sbx.isRunning(), true);
    const r = await sbx.commands.run('echo $CORRAL_TEST');
    assert.equal(r.stdout.trim(), 'yes');
  });
});

test(`[${MODE}] list filters by metadata`, async () => {
  const tag = `list-${Date.now()}`;
  await withSandbox({ metadata: { tag } }, async (sbx) => {
    const page = await Sandbox.list({ query: { metadata: { tag } } }).nextItems();
    assert.deepEqual(page.map((s) => s.sandboxId), [sbx.sandboxId]);
    const none = await Sandbox.list({ query: { metadata: { tag: 'nothing-has-this' } } }).nextItems();
    assert.equal(none.length, 0);
  });
});

test(`[${MODE}] setTimeout, connect, kill`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 60_000 });
  await sbx.setTimeout(300_000);
  const info = await sbx.getInfo();
  assert.ok(info.endAt - Date.now() > 250_000);
  const again = await Sandbox.connect(sbx.sandboxId);
  assert.equal(again.sandboxId, sbx.sandboxId);
  assert.equal((await again.commands.run('echo connected')).stdout.trim(), 'connected');
  assert.equal(await sbx.kill(), true);
  assert.equal(await Sandbox.kill(sbx.sandboxId), false, 'a second kill finds nothing');
  await assert.rejects(Sandbox.getInfo(sbx.sandboxId), (e) => e.name === 'SandboxNotFoundError' || /not found/i.test(e.message));
});
