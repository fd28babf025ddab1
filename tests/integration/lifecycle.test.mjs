// Deadlines, pause and resume in the control plane (decision 0044), with a
// test worker speaking the real worker protocol: each deadline is acted on
// once although the test profile runs two corral-sched copies, close to the
// deadline; a paused sandbox leaves the concurrency limit and needs a place to
// resume; a worker's stale report does not undo a pause; a sandbox paused too
// long is killed; the audit trail shows it all.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { api, newWorkspace, setLimit, RUN } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { for (const w of workers) await w.stop(); });

const create = async (ws, body = {}) => {
  const r = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', ...body } });
  assert.equal(r.status, 201, r.raw);
  return r.body;
};
const get = async (ws, id) => (await api('GET', `/v1/sandboxes/${id}`, { key: ws.member }));
const pause = (ws, id) => api('POST', `/v1/sandboxes/${id}/pause`, { key: ws.member });
const resume = (ws, id) => api('POST', `/v1/sandboxes/${id}/resume`, { key: ws.member });
const commandsFor = (w, id, type) => w.received.filter((c) => c.type === type &&
  (c.sandbox_id === id || c.sandbox?.id === id));
const pausedMax = () => Number(readFileSync(`${RUN}/corral.conf`, 'utf8').match(/^paused_max_s = (\d+)/m)[1]);

test('two corral-sched copies: each deadline acted on exactly once, kill or pause, within a second', async () => {
  assert.ok(existsSync(`${RUN}/pids/sched.pid`) && existsSync(`${RUN}/pids/sched-2.pid`),
    'the test profile runs two corral-sched copies');
  const A = newWorkspace();
  await setLimit(A, 40);
  const w = await enrolWorker(workers, A, { slots: 40 });
  const made = [];
  for (let i = 0; i < 20; i++) {
    const on = i % 2 ? 'pause' : 'kill';
    made.push({ on, ...(await create(A, { timeout: 1 + (i % 3), on_timeout: on })) });
  }
  const last = Math.max(...made.map((m) => Date.parse(m.expires_at)));
  await until(() => Date.now() > last + 2000, { timeoutMs: 10_000, everyMs: 200 });
  for (const m of made) {
    const kills = commandsFor(w, m.sandbox_id, 'kill'), pauses = commandsFor(w, m.sandbox_id, 'pause');
    const acted = m.on === 'kill' ? kills : pauses;
    assert.equal(acted.length, 1, `${m.sandbox_id} (${m.on}): ${kills.length} kills, ${pauses.length} pauses`);
    assert.equal((m.on === 'kill' ? pauses : kills).length, 0);
    const lag = acted[0].receivedAt - Date.parse(m.expires_at);
    assert.ok(lag >= 0 && lag < 1000, `${m.sandbox_id}: acted on ${lag} ms after its deadline`);
    const now = await get(A, m.sandbox_id);
    if (m.on === 'kill') assert.equal(now.status, 404);
    else assert.equal(now.body.state, 'paused', JSON.stringify(now.body));
  }
});

test('pause gives the admission place back; resume takes one, or is refused (403, as a create) and stays paused', async () => {
  const A = newWorkspace();
  await setLimit(A, 1);
  const w = await enrolWorker(workers, A);
  const a = await create(A, { timeout: 300 });
  const over = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
  assert.equal(over.status, 403, over.raw);
  const p = await pause(A, a.sandbox_id);
  assert.equal(p.status, 200, p.raw);
  assert.equal(p.body.state, 'paused');
  assert.equal(commandsFor(w, a.sandbox_id, 'pause').length, 1);
  const b = await create(A, { timeout: 300 });
  const refused = await resume(A, a.sandbox_id);
  assert.equal(refused.status, 403, refused.raw);
  assert.match(refused.body.message, /limit/);
  assert.equal((await get(A, a.sandbox_id)).body.state, 'paused');
  assert.equal(commandsFor(w, a.sandbox_id, 'resume').length, 0, 'nothing was sent');
  assert.equal((await api('DELETE', `/v1/sandboxes/${b.sandbox_id}`, { key: A.member })).status, 204);
  const r = await resume(A, a.sandbox_id);
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.state, 'running');
  assert.ok(Date.parse(r.body.expires_at) > Date.now() + 250_000, 'resumed with its whole timeout ahead');
  await setLimit(A, 1);
  assert.equal((await api('POST', '/v1/sandboxes', { key: A.member, body: {} })).status, 403, 'it holds the place again');
});

test('a report older than the pause changes nothing; a pending sandbox cannot be paused; another workspace gets 404', async () => {
  const A = newWorkspace(), B = newWorkspace();
  await setLimit(A, 5);
  const w = await enrolWorker(workers, A);
  const a = await create(A);
  assert.equal((await pause(A, a.sandbox_id)).status, 200);
  w.reports.push({ id: a.sandbox_id, state: 'running' }); // a listing made before the freeze
  await until(() => w.reports.length === 0, { timeoutMs: 5000 });
  await until(async () => false, { timeoutMs: 600 });
  assert.equal((await get(A, a.sandbox_id)).body.state, 'paused');
  assert.equal((await pause(B, a.sandbox_id)).status, 404);
  assert.equal((await resume(B, a.sandbox_id)).status, 404);
  assert.equal((await pause(A, '0123456789abcdef0123')).status, 404);
  assert.equal((await api('POST', '/v1/sandboxes/not-an-id!/pause', { key: A.member })).status, 404);
  const l = await api('GET', '/v1/sandboxes?state=paused', { key: A.member });
  assert.deepEqual(l.body.sandboxes.map((s) => s.sandbox_id), [a.sandbox_id]);
});

test('E2B surface: pause 204 then 409; /v2 connect resumes a paused sandbox (201, same id and token); state=paused lists it', async () => {
  const A = newWorkspace();
  await setLimit(A, 5);
  const w = await enrolWorker(workers, A);
  const e2b = (m, p, body) => api(m, p, { body, headers: { 'X-API-KEY': A.member } });
  const made = await e2b('POST', '/sandboxes', { templateID: 'base', timeout: 120, secure: true });
  assert.equal(made.status, 201, made.raw);
  const id = made.body.sandboxID;
  assert.equal((await e2b('POST', `/sandboxes/${id}/pause`)).status, 204);
  assert.equal((await e2b('POST', `/sandboxes/${id}/pause`)).status, 409, 'paused already');
  const listed = await e2b('GET', '/v2/sandboxes?state=paused');
  assert.deepEqual(listed.body.map((s) => [s.sandboxID, s.state]), [[id, 'paused']]);
  assert.deepEqual((await e2b('GET', '/v2/sandboxes?state=running')).body, []);
  const c = await e2b('POST', `/v2/sandboxes/${id}/connect`, { timeout: 60 });
  assert.equal(c.status, 201, c.raw);
  assert.equal(c.body.sandboxID, id);
  assert.equal(c.body.envdAccessToken, made.body.envdAccessToken, 'the same envd token');
  assert.equal(commandsFor(w, id, 'resume').length, 1);
  assert.equal((await e2b('POST', `/v2/sandboxes/${id}/connect`, { timeout: 60 })).status, 200, 'running: 200');
  assert.equal((await e2b('GET', `/sandboxes/${id}`)).body.state, 'running');
});

test('a sandbox paused longer than paused_max_s is killed, and its life is in the audit trail in order', async () => {
  const max = pausedMax();
  assert.ok(max <= 10, `run with a short paused_max_s (CORRAL_PAUSED_MAX_S, here ${max})`);
  const A = newWorkspace();
  await setLimit(A, 5);
  await enrolWorker(workers, A);
  const a = await create(A);
  assert.equal((await pause(A, a.sandbox_id)).status, 200);
  assert.ok(await until(async () => (await get(A, a.sandbox_id)).status === 404, { timeoutMs: (max + 3) * 1000 }),
    'killed after paused_max_s');
  const audit = await api('GET', `/v1/audit?sandbox=${a.sandbox_id}`, { key: A.owner });
  assert.equal(audit.status, 200, audit.raw);
  assert.deepEqual(audit.body.events.map((e) => e.event),
    ['requested', 'placed', 'running', 'pause_requested', 'paused', 'timed_out']);
  assert.match(audit.body.events[3].actor, /^key:/);
  assert.match(audit.body.events[4].actor, /^worker:/);
  assert.equal(audit.body.events[5].actor, 'scheduler');
});

test('a snapshot is heard only from the worker that holds it; another workspace cannot use or see it', async () => {
  const A = newWorkspace(), B = newWorkspace();
  await setLimit(A, 5);
  const holder = await enrolWorker(workers, A);
  const intruder = await enrolWorker(workers, A);
  holder.answerSnapshots = false;
  intruder.answerSnapshots = false;
  // Both workers take creates; make one on the holder.
  let a;
  for (let i = 0; i < 6 && !a; i++) {
    const c = await create(A);
    if (holder.running.has(c.sandbox_id)) a = c;
  }
  assert.ok(a, 'a sandbox on the holder');
  const taking = api('POST', `/v1/sandboxes/${a.sandbox_id}/snapshots`, { key: A.member, body: { name: 'n1' } });
  const cmd = await until(() => holder.received.find((c) => c.type === 'snapshot' && c.sandbox_id === a.sandbox_id),
    { timeoutMs: 5000 });
  assert.ok(cmd, 'the holder is asked');
  assert.deepEqual(Object.keys(cmd.args).sort(), ['image', 'snapshot_id', 'workspace']);
  assert.equal(cmd.args.image, `corral-snap:${cmd.args.snapshot_id}`);
  // Another worker of the workspace says it is ready: not heard.
  intruder.snapshotReports.push({ id: cmd.args.snapshot_id, workspace: A.id, state: 'ready' });
  await until(() => intruder.snapshotReports.length === 0, { timeoutMs: 5000 });
  let listed = await api('GET', '/v1/snapshots', { key: A.member });
  assert.deepEqual(listed.body.snapshots, [], 'not ready on the word of a worker that does not hold it');
  holder.snapshotReports.push({ id: cmd.args.snapshot_id, workspace: A.id, state: 'ready' });
  const r = await taking;
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.snapshot_id, cmd.args.snapshot_id);
  listed = await api('GET', '/v1/snapshots', { key: A.member });
  assert.deepEqual(listed.body.snapshots.map((x) => [x.snapshot_id, x.name]), [[r.body.snapshot_id, 'n1']]);
  // A create from it goes to the holder, whatever the load.
  const child = await create(A, { template: r.body.snapshot_id });
  assert.equal(child.worker_id, holder.id);
  const sent = holder.received.find((c) => c.type === 'create' && c.sandbox.id === child.sandbox_id);
  assert.equal(sent.sandbox.image, cmd.args.image);
  assert.equal(sent.sandbox.template, 'base');
  // Workspace B: not listed, not usable, not deletable; a bad id is not found.
  assert.deepEqual((await api('GET', '/v1/snapshots', { key: B.member })).body.snapshots, []);
  const theirs = await api('POST', '/v1/sandboxes', { key: B.member, body: { template: r.body.snapshot_id } });
  assert.equal(theirs.status, 404, theirs.raw);
  assert.equal((await api('DELETE', `/v1/snapshots/${r.body.snapshot_id}`, { key: B.member })).status, 404);
  assert.equal((await api('DELETE', '/v1/snapshots/snap-nothex', { key: A.member })).status, 404);
  // Deleted: the holder is told to remove the image.
  assert.equal((await api('DELETE', `/v1/snapshots/${r.body.snapshot_id}`, { key: A.member })).status, 204);
  assert.ok(await until(() => holder.received.some((c) => c.type === 'image_remove' && c.args.image === cmd.args.image),
    { timeoutMs: 5000 }));
  const audit = await api('GET', `/v1/audit?event=snapshotted`, { key: A.owner });
  assert.deepEqual(audit.body.events.map((e) => e.actor), [`worker:${holder.id}`]);
});

test('timeouts: a native create without one gets the workspace\'s sandbox_timeout_s, E2B\'s 300 s; the operator\'s maximum caps every one', async () => {
  const max = Number(readFileSync(`${RUN}/corral.conf`, 'utf8').match(/^sandbox_max_timeout_s = (\d+)/m)[1]);
  assert.ok(max < 86400, `run with a lower sandbox_max_timeout_s (CORRAL_SANDBOX_MAX_TIMEOUT_S, here ${max})`);
  const A = newWorkspace();
  await setLimit(A, 10);
  await enrolWorker(workers, A);
  const p = await api('PATCH', '/v1/workspace', { key: A.owner, body: { sandbox_timeout_s: 42 } });
  assert.equal(p.status, 200, p.raw);
  assert.equal(p.body.sandbox_timeout_s, 42);
  const n = await create(A);
  assert.equal(n.timeout, 42, 'the workspace default');
  const left = Date.parse(n.expires_at) - Date.now();
  assert.ok(left > 30_000 && left <= 42_000, `expires in ${left} ms`);
  const e = await api('POST', '/v2/sandboxes', { key: A.member, body: { templateID: 'base' } });
  assert.equal(e.status, 201, e.raw);
  assert.equal((await get(A, e.body.sandboxID)).body.timeout, 300, 'E2B\'s own default');
  const over = await api('POST', '/v1/sandboxes', { key: A.member, body: { timeout: max + 1 } });
  assert.equal(over.status, 400, over.raw);
  assert.match(over.body.message, new RegExp(`^timeout: at most ${max} seconds \\(the operator's maximum\\)`));
  const setT = await api('POST', `/sandboxes/${n.sandbox_id}/timeout`, { key: A.member, body: { timeout: max + 1 } });
  assert.equal(setT.status, 400, setT.raw);
  assert.equal((await get(A, n.sandbox_id)).body.timeout, 42, 'a refused setTimeout changed nothing');
  assert.equal((await api('PATCH', '/v1/workspace', { key: A.owner, body: { sandbox_timeout_s: 0 } })).status, 400);
});

test('refusals change nothing: a failed snapshot leaves no record; bad volume names, a taken name, unknown mounts; a long snapshot name', async () => {
  const A = newWorkspace();
  await setLimit(A, 5);
  const w = await enrolWorker(workers, A);
  w.answerSnapshots = false;
  const a = await create(A);
  const taking = api('POST', `/v1/sandboxes/${a.sandbox_id}/snapshots`, { key: A.member, body: {} });
  const cmd = await until(() => w.received.find((c) => c.type === 'snapshot'), { timeoutMs: 5000 });
  w.snapshotReports.push({ id: cmd.args.snapshot_id, workspace: A.id, state: 'failed', reason: 'disk full' });
  const r = await taking;
  assert.equal(r.status, 502, r.raw);
  assert.match(r.body.message, /disk full/);
  assert.equal((await api('DELETE', `/v1/snapshots/${cmd.args.snapshot_id}`, { key: A.member })).status, 404,
    'the failed snapshot left no record');
  const long = await api('POST', `/v1/sandboxes/${a.sandbox_id}/snapshots`, { key: A.member, body: { name: 'x'.repeat(129) } });
  assert.equal(long.status, 400, long.raw);
  assert.equal(w.received.filter((c) => c.type === 'snapshot').length, 1, 'a refused snapshot asks nothing of the worker');
  for (const name of ['', '-x', 'a/b', 'x'.repeat(65)]) {
    const v = await api('POST', '/v1/volumes', { key: A.member, body: { name } });
    assert.equal(v.status, 400, `${name}: ${v.raw}`);
  }
  const v1 = await api('POST', '/v1/volumes', { key: A.member, body: { name: 'data' } });
  assert.equal(v1.status, 201, v1.raw);
  assert.equal(v1.body.worker_id, w.id);
  assert.equal((await api('POST', '/v1/volumes', { key: A.member, body: { name: 'data' } })).status, 409);
  const unknown = await api('POST', '/v1/sandboxes', { key: A.member, body: { volume_mounts: [{ name: 'nope', path: '/d' }] } });
  assert.equal(unknown.status, 404, unknown.raw);
  assert.match(unknown.body.message, /volume 'nope' not found/);
  const mounted = await create(A, { volume_mounts: [{ name: 'data', path: '/d' }] });
  const sent = w.received.find((c) => c.type === 'create' && c.sandbox.id === mounted.sandbox_id);
  assert.deepEqual(sent.sandbox.volumes, [{ volume: `corral-${v1.body.volume_id}`, path: '/d', name: 'data' }]);
  assert.equal((await api('DELETE', `/v1/volumes/${v1.body.volume_id}`, { key: A.member })).status, 409, 'mounted');
  assert.equal((await api('GET', '/v1/volumes', { key: A.member })).body.volumes.length, 1);
});
