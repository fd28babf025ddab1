// The development stack's capacity (issue 9): thirty idle default sandboxes at
// once on one workerd with its own defaults (cpu_overcommit, slots from
// memory; tests/e2b/run.sh starts it as `make up` does), each answering, and
// the fleet's free capacity in GET /v1/workers going down by thirty and back.
// Run once by tests/e2b/run.sh (not a *.test.mjs: one SDK, one mode suffice).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from './lib.mjs';

const N = 30;
const api = async (method, path, key, body) => {
  const r = await fetch(`${process.env.E2B_API_URL}${path}`, {
    method, headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null) };
};
const freeSlots = async () => (await api('GET', '/v1/workers', process.env.E2B_API_KEY)).body.fleet.free_slots;

test(`${N} idle sandboxes at once on workerd's default capacity`, { timeout: 240_000 }, async () => {
  assert.ok(process.env.CORRAL_OWNER_KEY, 'run through tests/e2b/run.sh');
  // The workspace's own limit (20 by default) is the owner's to raise.
  const p = await api('PATCH', '/v1/workspace', process.env.CORRAL_OWNER_KEY, { max_concurrent_sandboxes: N + 10 });
  assert.equal(p.status, 200, JSON.stringify(p.body));
  const before = await freeSlots();
  assert.ok(before >= N, `the fleet offers ${before} free slots`);
  // Created ten at a time: what is checked is thirty held at once, not how
  // fast thirty start together (make bench measures concurrent creates); all
  // thirty at once under ASan on two cores left the last past the 20 s create
  // timeout once in CI.
  const made = [];
  for (let i = 0; i < N; i += 10) {
    made.push(...await Promise.allSettled(Array.from({ length: Math.min(10, N - i) },
      () => Sandbox.create('base', { timeoutMs: 240_000 }))));
  }
  const sbxs = made.filter((m) => m.status === 'fulfilled').map((m) => m.value);
  try {
    assert.deepEqual(made.filter((m) => m.status === 'rejected').map((m) => String(m.reason)), []);
    assert.equal(await freeSlots(), before - N);
    const alive = await Promise.all(sbxs.map((s) => s.commands.run('echo up').then((r) => r.stdout.trim())));
    assert.deepEqual(alive, Array(N).fill('up'));
  } finally {
    await Promise.all(sbxs.map((s) => s.kill().catch(() => {})));
  }
  assert.equal(await freeSlots(), before);
});
