// Sandbox lifecycle through the SDK (issue 11, decision 0044): timeouts that
// kill or pause, pause and resume (through connect, through /resume, through
// gateway traffic with autoResume), listing paused sandboxes, setTimeout and
// refreshes extending (never past the operator's maximum), and paused
// sandboxes leaving the concurrency limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Sandbox, MODE, sleep } from './lib.mjs';
import { SDK } from './sdk.mjs';
import { until } from '../lib/poll.mjs';

const tag = `[${MODE} ${SDK}]`;
const api = async (method, path, body, key = process.env.E2B_API_KEY) => {
  const r = await fetch(`${process.env.E2B_API_URL}${path}`, {
    method, headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
};
const stateOf = async (id) => (await api('GET', `/sandboxes/${id}`)).body?.state ?? 'gone';

// A background counter: /tmp/n goes up by one every 100 ms while it runs.
async function startCounter(sbx) {
  await sbx.files.write('/tmp/kept.txt', 'kept');
  await sbx.commands.run('i=0; while :; do i=$((i+1)); echo $i > /tmp/n; sleep 0.1; done', { background: true });
  await until(async () => Number(await sbx.files.read('/tmp/n').catch(() => 0)) > 3, { timeoutMs: 10_000 });
}
const counter = async (sbx) => Number((await sbx.commands.run('cat /tmp/n')).stdout);

test(`${tag} timeout: a 3 s sandbox is gone by 4 s`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 3_000 });
  const t0 = Date.now();
  const gone = await until(async () => (await stateOf(sbx.sandboxId)) === 'gone', { timeoutMs: 6_000, everyMs: 100 });
  assert.equal(gone, true);
  assert.ok(Date.now() - t0 < 4_000, `gone after ${Date.now() - t0} ms`);
});

test(`${tag} pause and connect: paused keeps files and a running process; connect resumes it (201)`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  try {
    await startCounter(sbx);
    assert.equal(await sbx.pause(), true);
    assert.equal(await Sandbox.pause(sbx.sandboxId), false, 'a second pause says it was paused already');
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused');
    const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems();
    assert.ok(paused.some((s) => s.sandboxId === sbx.sandboxId), 'listed as paused');
    const running = await Sandbox.list({ query: { state: ['running'] } }).nextItems();
    assert.ok(!running.some((s) => s.sandboxId === sbx.sandboxId), 'not listed as running');
    assert.equal(await sbx.isRunning(), false, 'a paused sandbox does not answer');
    // sleep: time is what is measured: paused 1.5 s, the counter must not move.
    await sleep(1_500);
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'running');
    const n = await counter(again);
    assert.ok(n < 40, `the counter stood still while paused (at ${n})`);
    assert.ok(await until(async () => (await counter(again)) > n + 3, { timeoutMs: 10_000 }), 'and counts on');
    assert.equal(await again.files.read('/tmp/kept.txt'), 'kept');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} POST /sandboxes/{id}/resume: 201 with the same id and envd token; 409 once running`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000 });
  try {
    const info = await api('POST', `/sandboxes/${sbx.sandboxId}/connect`, { timeout: 120 });
    assert.equal(info.status, 200, 'connect to a running sandbox: 200');
    assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/pause`)).status, 204);
    const r = await api('POST', `/sandboxes/${sbx.sandboxId}/resume`, { timeout: 60 });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.sandboxID, sbx.sandboxId);
    assert.equal(r.body.envdAccessToken, info.body.envdAccessToken, 'the same envd token');
    assert.equal((await sbx.commands.run('echo back')).stdout.trim(), 'back');
    assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/resume`)).status, 409);
    const other = await api('POST', `/sandboxes/${sbx.sandboxId}/pause`, undefined, process.env.CORRAL_OTHER_KEY);
    assert.equal(other.status, 404, 'another workspace cannot pause it');
  } finally {
    await sbx.kill().catch(() => {});
  }
  assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/resume`)).status, 404, 'killed: not found');
});

test(`${tag} onTimeout pause with autoResume: paused at its deadline, traffic resumes it, the process lives on`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 4_000, lifecycle: { onTimeout: 'pause', autoResume: true } });
  try {
    assert.deepEqual((await Sandbox.getInfo(sbx.sandboxId)).lifecycle, { onTimeout: 'pause', autoResume: true });
    await startCounter(sbx);
    assert.ok(await until(async () => (await stateOf(sbx.sandboxId)) === 'paused', { timeoutMs: 8_000, everyMs: 100 }),
      'paused at its deadline');
    // sleep: the gateway's route cache must expire (2 s after the last call).
    await sleep(2_500);
    const n = await counter(sbx); // through the gateway: resumes it
    assert.ok(n > 3 && n < 80, `the counter survived the pause (at ${n})`);
    assert.equal(await stateOf(sbx.sandboxId), 'running');
    assert.equal(await sbx.files.read('/tmp/kept.txt'), 'kept', 'and its files');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} setTimeout and refreshes extend a sandbox's life`, async () => {
  const a = await Sandbox.create('base', { timeoutMs: 3_000 });
  const b = await Sandbox.create('base', { timeoutMs: 3_000 });
  try {
    await a.setTimeout(30_000);
    assert.equal((await api('POST', `/sandboxes/${b.sandboxId}/refreshes`, { duration: 30 })).status, 204);
    assert.equal((await api('POST', `/sandboxes/${b.sandboxId}/refreshes`, { duration: -1 })).status, 400);
    // sleep: a window, not a condition: past their first 3 s, both must still run.
    await sleep(4_500);
    assert.equal(await stateOf(a.sandboxId), 'running');
    assert.equal(await stateOf(b.sandboxId), 'running');
  } finally {
    await a.kill().catch(() => {});
    await b.kill().catch(() => {});
  }
});

test(`${tag} refreshes: never past the operator's maximum from now; another workspace's sandbox is not found`, async () => {
  const max = Number(readFileSync(`${process.env.CORRAL_RUN}/corral.conf`, 'utf8')
    .match(/^sandbox_max_timeout_s = (\d+)/m)[1]);
  assert.ok(max < 3600, `run with sandbox_max_timeout_s below a refresh's 3600 s (tests/e2b/run.sh: 1800; here ${max})`);
  const sbx = await Sandbox.create('base', { timeoutMs: 60_000 });
  try {
    assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, { duration: 3600 })).status, 204);
    const left = (await Sandbox.getInfo(sbx.sandboxId)).endAt - Date.now();
    assert.ok(left > (max - 60) * 1000 && left <= max * 1000 + 1000, `ends in ${left} ms; the maximum is ${max} s`);
    assert.equal((await api('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, { duration: 3601 })).status, 400);
    const theirs = await api('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, { duration: 10 }, process.env.CORRAL_OTHER_KEY);
    assert.equal(theirs.status, 404, JSON.stringify(theirs.body));
    assert.equal(theirs.body.message, 'sandbox not found');
    assert.equal((await api('POST', `/sandboxes/${'0'.repeat(20)}/refreshes`, { duration: 10 })).status, 404);
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`${tag} paused sandboxes do not count against the workspace's limit; resume needs a place`, async () => {
  const owner = process.env.CORRAL_OWNER_KEY;
  const before = (await api('GET', '/v1/workspace')).body.max_concurrent_sandboxes;
  const made = [];
  assert.equal((await api('PATCH', '/v1/workspace', { max_concurrent_sandboxes: 1 }, owner)).status, 200);
  try {
    made.push(await Sandbox.create('base', { timeoutMs: 120_000 }));
    await assert.rejects(Sandbox.create('base', { timeoutMs: 60_000 }), /limit/i, 'the limit holds');
    assert.equal(await made[0].pause(), true);
    made.push(await Sandbox.create('base', { timeoutMs: 120_000 }));
    const r = await api('POST', `/sandboxes/${made[0].sandboxId}/resume`);
    assert.equal(r.status, 403, 'no place to resume into (refused as a create would be)');
    assert.match(r.body.message, /limit/);
    await made[1].kill();
    assert.equal((await Sandbox.connect(made[0].sandboxId)).sandboxId, made[0].sandboxId, 'a place again: it resumes');
  } finally {
    await api('PATCH', '/v1/workspace', { max_concurrent_sandboxes: before }, owner);
    for (const s of made) await s.kill().catch(() => {});
  }
});
