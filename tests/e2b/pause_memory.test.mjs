// A pause that keeps only the files (issue 26, decision 0074), through the
// SDK: pause({keepMemory: false}) and onTimeout {action: 'pause', keepMemory:
// false}. The sandbox's processes do not survive; resume boots it afresh from
// its files (envd, the container's entrypoint, starts again) and it answers
// commands. A pause that keeps the memory still keeps the process. The pinned
// SDK sends {memory: undefined} by default and the older one {memory: true}:
// both run this file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox, MODE, sleep } from './lib.mjs';
import { SDK } from './sdk.mjs';
import { until } from '../lib/poll.mjs';

const tag = `[${MODE} ${SDK}]`;
const api = async (method, path, body) => {
  const r = await fetch(`${process.env.E2B_API_URL}${path}`, {
    method, headers: { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
};
const stateOf = async (id) => (await api('GET', `/sandboxes/${id}`)).body?.state ?? 'gone';

// A process left running in the background, and a file.
async function leaveTraces(sbx) {
  await sbx.files.write('/home/user/kept.txt', 'kept');
  await sbx.commands.run('sleep 1000', { background: true });
  const found = async () =>
    (await sbx.commands.run('pgrep -x sleep').catch(() => ({ stdout: '' }))).stdout.trim();
  assert.ok(await until(async () => (await found()) !== '', { timeoutMs: 10_000 }), 'the process runs');
}
// The sleeper's pid if it still runs, else 'gone' (by name: after a fresh boot
// its old pid may well be the shell that asks).
const sleeper = async (sbx) => (await sbx.commands.run('pgrep -x sleep || echo gone')).stdout.trim();

test(`${tag} pause({keepMemory: false}): the process is gone after resume, the file is there, commands answer`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  try {
    await leaveTraces(sbx);
    assert.equal(await sbx.pause({ keepMemory: false }), true);
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused');
    assert.equal(await Sandbox.pause(sbx.sandboxId, { keepMemory: false }), false, 'paused already');
    assert.equal(await sbx.isRunning(), false, 'a paused sandbox does not answer');
    // sleep: a window, not a condition: the worker's reports (and the stopped
    // container's "die") come in it, and the sandbox must stay paused.
    await sleep(2_500);
    assert.equal(await stateOf(sbx.sandboxId), 'paused');
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'running');
    assert.equal(await again.isRunning(), true, 'reachable at once');
    assert.equal(await sleeper(again), 'gone', 'no process survived the pause');
    assert.equal(await again.files.read('/home/user/kept.txt'), 'kept', 'the files did');
    assert.equal((await again.commands.run('echo back')).stdout.trim(), 'back');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} a pause that keeps the memory (the default) keeps the process`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  try {
    await leaveTraces(sbx);
    const pid = await sleeper(sbx);
    assert.equal(await sbx.pause({ keepMemory: true }), true);
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.equal(await sleeper(again), pid, 'the same process, still there');
    assert.equal(await again.pause(), true);
    const third = await Sandbox.connect(sbx.sandboxId);
    assert.equal(await sleeper(third), pid, 'and after a pause with no option');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} onTimeout {action: 'pause', keepMemory: false}: paused at its deadline without its processes; connect boots it`, async () => {
  const sbx = await Sandbox.create('base', {
    timeoutMs: 5_000, lifecycle: { onTimeout: { action: 'pause', keepMemory: false } } });
  try {
    await leaveTraces(sbx);
    assert.ok(await until(async () => (await stateOf(sbx.sandboxId)) === 'paused', { timeoutMs: 10_000, everyMs: 100 }),
      'paused at its deadline');
    // sleep: a window, not a condition: it must stay paused through the reports that follow.
    await sleep(2_500);
    assert.equal(await stateOf(sbx.sandboxId), 'paused', 'and stays paused');
    const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 60_000 });
    assert.equal(await sleeper(again), 'gone');
    assert.equal(await again.files.read('/home/user/kept.txt'), 'kept');
    assert.equal((await again.commands.run('echo back')).stdout.trim(), 'back');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

// E2B: a filesystem-only pause "cannot be auto-resumed by traffic and must be
// resumed explicitly" (the SDK refuses autoResume with keepMemory: false
// itself; the API refuses the body, and traffic leaves a sandbox paused so).
test(`${tag} traffic does not resume a sandbox paused without memory; the API refuses autoResume with autoPauseMemory false`, async () => {
  const refused = await api('POST', '/v2/sandboxes', {
    templateID: 'base', autoPause: true, autoPauseMemory: false, autoResume: { enabled: true } });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.match(refused.body.message, /autoPauseMemory/);
  for (const body of [{ templateID: 'base', autoPauseMemory: false }, { templateID: 'base', autoPause: false, autoPauseMemory: false }]) {
    const r = await api('POST', '/v2/sandboxes', body);
    assert.equal(r.status, 400, `without autoPause: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, /autoPauseMemory/);
  }
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000, lifecycle: { onTimeout: 'pause', autoResume: true } });
  try {
    await leaveTraces(sbx);
    assert.equal(await sbx.pause({ keepMemory: false }), true);
    // sleep: the gateway's route cache must expire (2 s after the last call).
    await sleep(2_500);
    await assert.rejects(sbx.commands.run('echo hi', { requestTimeoutMs: 10_000 }), 'traffic does not resume it');
    assert.equal(await stateOf(sbx.sandboxId), 'paused');
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.equal(await sleeper(again), 'gone');
    assert.equal((await again.commands.run('echo back')).stdout.trim(), 'back');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} a memory that is no flag is refused (400, naming it), on the pause and on the resume, and leaves the sandbox as it was`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  try {
    const e2b = await api('POST', `/sandboxes/${sbx.sandboxId}/pause`, { memory: 'no' });
    assert.equal(e2b.status, 400, JSON.stringify(e2b.body));
    assert.match(e2b.body.message, /memory: must be true or false/);
    const nat = await api('POST', `/v1/sandboxes/${sbx.sandboxId}/pause`, { keep_memory: 0 });
    assert.equal(nat.status, 400, JSON.stringify(nat.body));
    assert.match(nat.body.message, /keep_memory/);
    assert.equal(await stateOf(sbx.sandboxId), 'running', 'not paused by a refused body');
    assert.equal(await sbx.pause({ keepMemory: false }), true);
    const res = await api('POST', `/sandboxes/${sbx.sandboxId}/resume`, { memory: 'no' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(await stateOf(sbx.sandboxId), 'paused', 'not resumed by a refused body');
  } finally {
    await sbx.kill().catch(() => {});
  }
});
