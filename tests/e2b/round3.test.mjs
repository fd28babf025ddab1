// E2B compatibility, round three (issue 26, decision 0069), through the real
// SDK: a resumed sandbox is reachable the moment connect returns, whatever a
// gateway learnt while it was paused; a wrong token is told as such (401 for
// envd's, 403 for the traffic token), not as "sandbox not found"; and
// Sandbox.create({mcp}) fails as E2B's does when the gateway cannot start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox, MODE } from './lib.mjs';
import { SDK } from './sdk.mjs';
import { processesOf } from '../lib/churn.mjs';
import { sandboxContainer, sandboxContainers } from '../lib/engine.mjs';

const tag = `[${MODE} ${SDK}]`;

test(`${tag} connect resumes a paused sandbox that is reachable at once, after the gateway saw it paused`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  try {
    await sbx.commands.run('echo before > /tmp/state');
    assert.equal(await sbx.pause(), true);
    // Seen paused through the gateway, several times: what a cache would keep.
    for (let i = 0; i < 3; i++) assert.equal(await sbx.isRunning(), false, 'a paused sandbox is not running');
    const back = await Sandbox.connect(sbx.sandboxId);
    assert.equal(await back.isRunning(), true, 'running the moment connect returned');
    assert.equal((await back.commands.run('cat /tmp/state')).stdout, 'before\n');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} a wrong envd token is an authentication error, not "sandbox not found"`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 60_000 });
  try {
    const url = process.env.E2B_SANDBOX_URL || `https://${sbx.getHost(49983)}`;
    const headers = process.env.E2B_SANDBOX_URL ? { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' } : {};
    const r = await fetch(`${url}/process.Process/List`, { method: 'POST', body: '{}',
      headers: { ...headers, 'Content-Type': 'application/json', 'X-Access-Token': 'f'.repeat(64) } });
    assert.equal(r.status, 401);
    assert.match((await r.json()).message, /invalid access token/);
    // The same sandbox with its own token: fine, and still running.
    assert.equal(await sbx.isRunning(), true);
    assert.equal((await sbx.commands.run('echo ok')).stdout, 'ok\n');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} Sandbox.create({mcp}): E2B's "Failed to start MCP gateway" when the template has no gateway, nothing left running`, async () => {
  const before = new Set((await Sandbox.list().nextItems()).map((s) => s.sandboxId));
  await assert.rejects(Sandbox.create({ mcp: { exa: { apiKey: 'not-a-key' } }, timeoutMs: 60_000 }),
    (e) => /^Failed to start MCP gateway: /.test(e.message) && /mcp-gateway/.test(e.message));
  const left = (await Sandbox.list().nextItems()).filter((s) => !before.has(s.sandboxId));
  assert.deepEqual(left.map((s) => s.templateId), [], 'the SDK killed the sandbox it made');
});

// Containers of a sandbox on this machine's dockerd, by the label or the name
// workerd gives them: what is still running of it, whatever the API says.
const containersOf = async (sandboxId) => (await sandboxContainers(sandboxId)).map((c) => c.Id);

test(`${tag} kill answers once the sandbox is gone: not running, nothing answers, no container runs, none left soon after`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 60_000 });
  const url = process.env.E2B_SANDBOX_URL || `https://${sbx.getHost(49983)}`;
  const headers = process.env.E2B_SANDBOX_URL ? { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' } : {};
  // Seen running through the gateway first: the route is in its cache.
  assert.equal(await sbx.isRunning(), true);
  assert.equal((await fetch(`${url}/health`, { headers })).status, 204);
  await sandboxContainer(sbx.sandboxId); // a claimed warm one is named for it a moment after
  assert.equal((await containersOf(sbx.sandboxId)).length, 1, 'the control: its container is found');
  assert.ok((await containersOf(sbx.sandboxId)).flatMap(processesOf).length > 0, 'the control: its processes are found by their cgroup');
  assert.equal(await sbx.kill(), true);
  // Stopped when kill returns (no process of it runs: decision 0073);
  // dockerd's removal of what is left follows.
  // As the kernel sees it: dockerd may still call the container running
  // while it cleans up after the kill.
  assert.deepEqual((await containersOf(sbx.sandboxId)).flatMap(processesOf), [], 'no process of it runs once kill returned');
  assert.equal(await sbx.isRunning(), false, 'not running the moment kill returned');
  const r = await fetch(`${url}/health`, { headers });
  assert.notEqual(r.status, 204, 'envd answered after the kill');
  await r.body?.cancel();
  const until = Date.now() + 15_000;
  while ((await containersOf(sbx.sandboxId)).length && Date.now() < until) await new Promise((ok) => setTimeout(ok, 250));
  assert.deepEqual(await containersOf(sbx.sandboxId), [], 'its stopped container removed within 15 s of the kill');
});
