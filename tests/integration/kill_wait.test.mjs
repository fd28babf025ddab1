// DELETE answers once the sandbox's worker says it is gone (decision 0073),
// with test workers speaking the real worker protocol: the answer waits for
// the worker's `killed`, another worker cannot give it, and a worker that
// never confirms costs the caller a bounded wait, not a hang.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { api, newWorkspace, redis, RUN, setLimit } from '../lib/corral.mjs';
import { randomBytes } from 'node:crypto';
import { until } from '../lib/poll.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { for (const w of workers) await w.stop(); });

const create = async (ws) => {
  const r = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base' } });
  assert.equal(r.status, 201, r.raw);
  return r.body.sandbox_id;
};
// A DELETE in flight: its answer, and whether it has come yet.
function deleting(ws, id) {
  const d = { done: false };
  d.answer = api('DELETE', `/v1/sandboxes/${id}`, { key: ws.member }).then((r) => { d.done = true; return r; });
  return d;
}
const killOf = (w, id) => w.received.find((c) => c.type === 'kill' && c.sandbox_id === id);
const apiLogs = () => readdirSync(`${RUN}/log`).filter((f) => /^api-\d+\.log$/.test(f))
  .map((f) => readFileSync(`${RUN}/log/${f}`, 'utf8')).join('\n');

test('DELETE answers only after its worker said the kill is done', async () => {
  const A = newWorkspace();
  const w = await enrolWorker(workers, A, { confirmKills: false });
  const id = await create(A);
  const d = deleting(A, id);
  assert.ok(await until(() => killOf(w, id), { timeoutMs: 10000 }), 'the kill reached the worker');
  // Delivered and acknowledged, and a poll or two later still no answer: it
  // waits for `killed`, not for the ack.
  const polls = w.received.length;
  await until(() => d.done, { timeoutMs: 1000 });
  assert.equal(d.done, false, `DELETE answered before the worker confirmed (after ${w.received.length - polls} more commands)`);
  w.killed.push(id);
  const r = await d.answer;
  assert.equal(r.status, 204, r.raw);
  assert.equal((await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).status, 404);
});

test("another worker's `killed` does not answer a DELETE; one that never confirms costs a bounded wait", async () => {
  const A = newWorkspace();
  const w = await enrolWorker(workers, A, { confirmKills: false });
  const other = await enrolWorker(workers, newWorkspace());
  const id = await create(A);
  const t0 = Date.now();
  const d = deleting(A, id);
  assert.ok(await until(() => killOf(w, id), { timeoutMs: 10000 }), 'the kill reached the worker');
  other.killed.push(id); // a worker of another pool names it: keyed by its own id, it wakes nothing
  await until(() => d.done, { timeoutMs: 2000 });
  assert.equal(d.done, false, "another worker's confirmation answered the DELETE");
  const r = await d.answer; // its own worker never confirms
  assert.equal(r.status, 204, r.raw);
  assert.ok(Date.now() - t0 < 30000, `the DELETE took ${Date.now() - t0} ms`);
  assert.ok(await until(() => apiLogs().includes(id) &&
    /did not confirm it within 5 s/.test(apiLogs().split('\n').filter((l) => l.includes(id)).join('\n')),
  { timeoutMs: 5000 }), 'the API log says the worker did not confirm');
});

test('a heartbeat naming something that is not a sandbox id in `killed` is refused, naming the field', async () => {
  const A = newWorkspace();
  const w = await enrolWorker(workers, A);
  await w.stop();
  const r = await api('POST', '/v1/worker/heartbeat', { headers: w.headers(),
    body: { acks: [], sandboxes: [], wait: false, killed: ['../../etc'] } });
  assert.equal(r.status, 400, r.raw);
  assert.match(r.body.message, /killed\[0\]/);
});

test("a worker naming kills nobody waits for stores nothing (a compromised worker cannot fill Redis with wakes)", async () => {
  const A = newWorkspace();
  const w = await enrolWorker(workers, A, { confirmKills: false });
  const key = (kind, id) => `corral:{ws:${A.id}}:worker:${w.id}:${kind}:${id}`;
  const ids = Array.from({ length: 50 }, () => randomBytes(10).toString('hex'));
  const r = await api('POST', '/v1/worker/heartbeat', { headers: w.headers(),
    body: { acks: [], sandboxes: [], wait: false, killed: ids } });
  assert.equal(r.status, 200, r.raw);
  for (const id of ids.slice(0, 5)) assert.equal(redis('EXISTS', key('killed', id)), '0', `a wake stored for ${id}`);
  // The control: a DELETE that waits is expected under the same prefix, and
  // the worker's word for it then answers it.
  const id = await create(A);
  const d = deleting(A, id);
  assert.ok(await until(() => killOf(w, id), { timeoutMs: 10000 }), 'the kill reached the worker');
  assert.equal(redis('EXISTS', key('killwait', id)), '1', 'the DELETE expected its wake');
  w.killed.push(id);
  assert.equal((await d.answer).status, 204);
  assert.equal(redis('EXISTS', key('killwait', id)), '0', 'the expectation was used up');
});

// The wait holds a handler thread, so DELETEs share the creates' budget
// (create_wait_max, 40 a process here, two processes): past it a DELETE is
// answered at once, without its worker's word, and says so in the log.
test('DELETEs past the wait budget answer at once and are logged; every one deletes', async () => {
  const A = newWorkspace();
  const N = 90;
  await setLimit(A, N);
  const w = await enrolWorker(workers, A, { confirmKills: false, slots: 200, cpu: 4096, memory: 1 << 22 });
  const ids = [];
  for (let i = 0; i < N; i += 15) ids.push(...await Promise.all(Array.from({ length: Math.min(15, N - i) }, () => create(A))));
  const t0 = Date.now();
  const answered = await Promise.all(ids.map((id) => api('DELETE', `/v1/sandboxes/${id}`, { key: A.member })
    .then((r) => ({ r, ms: Date.now() - t0 }))));
  for (const { r } of answered) assert.equal(r.status, 204, r.raw);
  const fast = answered.filter((a) => a.ms < 3000).length;
  assert.ok(fast >= N - 80, `${fast} of ${N} DELETEs answered within 3 s; over a budget of 80 waits, at least ${N - 80} must`);
  assert.ok(await until(() => /too many waits on this handler/.test(apiLogs()), { timeoutMs: 5000 }),
    'the API log says a DELETE did not wait');
  for (const id of ids.slice(0, 10)) assert.equal((await api('GET', `/v1/sandboxes/${id}`, { key: A.member })).status, 404);
  assert.ok(await until(() => ids.every((id) => killOf(w, id)), { timeoutMs: 20000 }), 'every kill reached the worker');
});
