// The audit trail (decision 0045), through the real stack: sandboxes created,
// refused, placed, run, killed, timed out and lost through the real worker
// routes; credentials minted and revoked; workers joined and removed. Read
// back through GET /v1/audit (owner only) and, for what lives in Redis,
// through redis-cli as the operator.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, setLimit, keyParts, redis, eventually } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
const worker = (ws, opts) => enrolWorker(workers, ws, opts);
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const actorOf = (key) => `key:${keyParts(key).id}`;

async function audit(ws, query = '', key = ws.owner) {
  const r = await api('GET', `/v1/audit${query ? `?${query}` : ''}`, { key });
  assert.equal(r.status, 200, r.raw);
  assert.ok(Array.isArray(r.body.events), r.raw);
  return r.body;
}

// Every page from the start, following next: the events in order.
async function allPages(ws, query, limit) {
  const seen = [];
  let cursor = null;
  for (let pages = 0; pages < 100; pages++) {
    const q = [query, `limit=${limit}`, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&');
    const page = await audit(ws, q);
    assert.ok(page.events.length <= limit);
    seen.push(...page.events);
    if (page.next === null) return seen;
    cursor = page.next;
  }
  throw new Error('more than 100 pages');
}

async function create(ws, body = {}) {
  return api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', ...body } });
}

test('a sandbox\'s whole life in order, with its actors, worker and tier', async () => {
  const A = newWorkspace();
  const wa = await worker(A);
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  const sb = r.body.sandbox_id;
  assert.equal((await api('DELETE', `/v1/sandboxes/${sb}`, { key: A.member })).status, 204);
  const { events, next } = await audit(A, `sandbox=${sb}`);
  assert.equal(next, null);
  assert.deepEqual(events.map((e) => e.event), ['requested', 'placed', 'running', 'killed']);
  const [requested, placed, running, killed] = events;
  assert.equal(requested.actor, actorOf(A.member));
  assert.equal(placed.actor, actorOf(A.member));
  assert.equal(placed.worker_id, wa.id);
  assert.equal(placed.isolation, 'CONTAINER');
  assert.match(placed.reason, /runtime runc on a worker of the workspace/);
  assert.equal(running.actor, `worker:${wa.id}`);
  assert.equal(running.isolation, 'CONTAINER');
  assert.equal(killed.actor, actorOf(A.member));
  assert.equal(killed.worker_id, wa.id);
  assert.equal(killed.isolation, 'CONTAINER');
  assert.equal(killed.reason, 'deleted');
  for (const e of events) assert.equal(e.sandbox_id, sb);
  // Ids, times: increasing, and the time is the id's.
  for (let i = 1; i < events.length; i++) assert.ok(events[i].time_ms >= events[i - 1].time_ms);
  for (const e of events) {
    assert.equal(String(e.time_ms), e.id.split('-')[0]);
    assert.equal(Date.parse(e.time), e.time_ms);
  }
});

// The issue's own test: one sandbox's whole life, a refusal in the middle of
// it, each event with its actor, in the order it happened.
test('a sandbox\'s whole life with pause, a refused resume, resume, snapshot and kill, in order', async () => {
  const A = newWorkspace();
  const wa = await worker(A);
  await setLimit(A, 1);
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  const sb = r.body.sandbox_id;
  const act = async (method, path, status, body) => {
    const x = await api(method, path, { key: A.member, body });
    assert.equal(x.status, status, `${method} ${path}: ${x.raw}`);
    return x;
  };
  await act('POST', `/v1/sandboxes/${sb}/pause`, 200);
  const other = await act('POST', '/v1/sandboxes', 201, { template: 'base' }); // the place it gave back
  assertError(await api('POST', `/v1/sandboxes/${sb}/resume`, { key: A.member }), 403, /limit/);
  await act('DELETE', `/v1/sandboxes/${other.body.sandbox_id}`, 204);
  await act('POST', `/v1/sandboxes/${sb}/resume`, 200);
  const snap = await act('POST', `/v1/sandboxes/${sb}/snapshots`, 201, {});
  await act('DELETE', `/v1/sandboxes/${sb}`, 204);
  const { events } = await audit(A, `sandbox=${sb}`);
  assert.deepEqual(events.map((e) => e.event), ['requested', 'placed', 'running', 'pause_requested', 'paused',
    'refused', 'resume_requested', 'resumed', 'snapshot_requested', 'snapshotted', 'killed']);
  const by = Object.fromEntries(events.map((e) => [e.event, e]));
  const key = actorOf(A.member), wk = `worker:${wa.id}`;
  assert.deepEqual(events.map((e) => e.actor), [key, key, wk, key, wk, key, key, wk, key, wk, key]);
  assert.match(by.refused.reason, /resume: .*limit/);
  assert.equal(by.snapshot_requested.reason, snap.body.snapshot_id);
  for (const e of events) assert.equal(e.sandbox_id, sb);
  for (const e of events.slice(1)) { // requested: before placement, no worker yet
    assert.equal(e.worker_id, wa.id, `${e.event} names the worker`);
    assert.equal(e.isolation, 'CONTAINER', `${e.event} names the tier`);
  }
  for (let i = 1; i < events.length; i++) assert.ok(events[i].time_ms >= events[i - 1].time_ms);
});

test('a refusal by admission is recorded, with the limit in its reason', async () => {
  const A = newWorkspace();
  await worker(A);
  await setLimit(A, 1);
  const first = await create(A);
  assert.equal(first.status, 201, first.raw);
  const second = await create(A);
  assert.ok(second.status >= 400, second.raw);
  const refused = (await audit(A, 'event=refused')).events;
  assert.equal(refused.length, 1);
  assert.match(refused[0].reason, /admission: .*limit of 1 concurrent/);
  assert.equal(refused[0].actor, actorOf(A.member));
  // The refused create was requested first, and never placed.
  const life = (await audit(A, `sandbox=${refused[0].sandbox_id}`)).events.map((e) => e.event);
  assert.deepEqual(life, ['requested', 'refused']);
});

test('a refusal by a capability check is recorded, with the tier asked for', async () => {
  const A = newWorkspace();
  await worker(A);
  const r = await create(A, { require_isolation: 'GVISOR' });
  assertError(r, 409, /require_isolation/);
  const refused = (await audit(A, 'event=refused')).events;
  assert.equal(refused.length, 1);
  assert.equal(refused[0].isolation, 'GVISOR');
  assert.match(refused[0].reason, /no eligible worker offers isolation GVISOR/);
  assert.equal(refused[0].worker_id, null);
});

test('a timeout is recorded as timed_out by the scheduler; a failed start as failed', async () => {
  const A = newWorkspace();
  const wa = await worker(A);
  const r = await create(A, { timeout: 1 });
  assert.equal(r.status, 201, r.raw);
  const sb = r.body.sandbox_id;
  const timedOut = await eventually(async () => {
    const e = (await audit(A, `sandbox=${sb}&event=timed_out`)).events;
    return e.length === 1 && e[0];
  }, { what: 'the timed_out event' });
  assert.equal(timedOut.actor, 'scheduler');
  assert.equal(timedOut.worker_id, wa.id);
  const B = newWorkspace();
  const wb = await worker(B, { failCreates: true });
  const f = await create(B);
  assertError(f, 502, /test worker refuses/);
  const failed = (await audit(B, 'event=failed')).events;
  assert.equal(failed.length, 1);
  assert.equal(failed[0].actor, `worker:${wb.id}`);
  assert.equal(failed[0].reason, 'test worker refuses');
});

test('API keys and join tokens minted and revoked, by id, never a secret', async () => {
  const A = newWorkspace();
  const k = await api('POST', '/v1/keys', { key: A.owner, body: { role: 'member' } });
  assert.equal(k.status, 201, k.raw);
  assert.equal((await api('DELETE', `/v1/keys/${k.body.id}`, { key: A.owner })).status, 204);
  const j = await api('POST', '/v1/join-tokens', { key: A.owner, body: {} });
  assert.equal(j.status, 201, j.raw);
  assert.equal((await api('DELETE', `/v1/join-tokens/${j.body.id}`, { key: A.owner })).status, 204);
  // Deleting what is gone changes nothing and records nothing.
  assert.equal((await api('DELETE', `/v1/keys/${k.body.id}`, { key: A.owner })).status, 404);
  const page = await api('GET', '/v1/audit', { key: A.owner });
  const events = page.body.events.map((e) => [e.event, e.credential_id, e.actor]);
  const owner = actorOf(A.owner);
  assert.deepEqual(events, [
    // corralctl made the workspace's two keys (tests/lib/corral.mjs newWorkspace)
    ['key_minted', keyParts(A.owner).id, 'operator'],
    ['key_minted', keyParts(A.member).id, 'operator'],
    ['key_minted', k.body.id, owner],
    ['key_revoked', k.body.id, owner],
    ['join_token_minted', j.body.id, owner],
    ['join_token_revoked', j.body.id, owner],
  ]);
  assert.deepEqual(page.body.events.slice(0, 3).map((e) => e.reason), ['owner', 'member', 'member']);
  assert.ok(!page.raw.includes(keyParts(k.body.key).secret), 'a key secret in the audit');
  assert.ok(!page.raw.includes(j.body.token.split('_').pop()), 'a join token secret in the audit');
  assert.ok(!page.raw.includes(keyParts(A.owner).secret), 'the caller\'s secret in the audit');
});

test('workers joined and removed; the removed worker\'s sandbox is lost', async () => {
  const A = newWorkspace();
  const wa = await worker(A);
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  assert.equal((await api('DELETE', `/v1/workers/${wa.id}`, { key: A.owner })).status, 204);
  const events = (await audit(A)).events.filter((e) => e.worker_id === wa.id);
  const names = events.map((e) => e.event);
  assert.equal(names[0], 'worker_joined');
  assert.equal(events[0].actor, `worker:${wa.id}`);
  assert.match(events[0].credential_id, /^[0-9a-f]+$/);
  const removed = events.find((e) => e.event === 'worker_removed');
  assert.equal(removed.actor, actorOf(A.owner));
  const lost = events.find((e) => e.event === 'lost');
  assert.equal(lost.sandbox_id, r.body.sandbox_id);
  assert.equal(lost.actor, actorOf(A.owner));
  assert.ok(names.indexOf('worker_removed') < names.indexOf('worker_dead'));
  assert.ok(names.indexOf('worker_dead') < names.indexOf('lost'));
});

test('a worker silent past its lease: worker_dead and lost, by the scheduler', async () => {
  const A = newWorkspace();
  const wa = await worker(A);
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  await wa.stop();
  const lost = await eventually(async () => {
    const e = (await audit(A, `sandbox=${r.body.sandbox_id}&event=lost`)).events;
    return e.length === 1 && e[0];
  }, { what: 'the lost event', timeout: 20000 });
  assert.equal(lost.actor, 'scheduler');
  assert.equal(lost.worker_id, wa.id);
  const dead = (await audit(A, 'event=worker_dead&actor=scheduler')).events;
  assert.equal(dead.length, 1);
  assert.equal(dead[0].worker_id, wa.id);
});

// The operator's stream, every page of it through corralctl.
function operatorEvents(...args) {
  const seen = [];
  let cursor = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page = corralctl('audit', '--limit', '1000', ...args, ...(cursor ? ['--cursor', cursor] : []));
    seen.push(...page.events);
    if (page.next === null) return seen;
    cursor = page.next;
  }
  throw new Error('more than 1000 pages');
}

test('the unscoped fleet\'s workers are in the operator\'s stream; its sandboxes in their workspace\'s', async () => {
  const A = newWorkspace();
  const fleet = await worker(null, { slots: 50 });
  const joined = operatorEvents().find((e) => e.event === 'worker_joined' && e.worker_id === fleet.id);
  assert.ok(joined, 'worker_joined in the operator\'s stream');
  assert.equal(joined.actor, `worker:${fleet.id}`);
  const minted = operatorEvents().find((e) => e.event === 'join_token_minted' && e.credential_id === joined.credential_id);
  assert.equal(minted.actor, 'operator');
  assert.ok(!(await audit(A)).events.some((e) => e.worker_id === fleet.id && e.event === 'worker_joined'));
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  if (r.body.worker_id === fleet.id) {
    const placed = (await audit(A, `sandbox=${r.body.sandbox_id}&event=placed`)).events;
    assert.match(placed[0].reason, /the shared fleet/);
  }
});

test('corralctl: what it mints and revokes is recorded by "operator"; audit --workspace prints GET /v1/audit\'s page', async () => {
  const A = newWorkspace();
  const jt = corralctl('join-token', 'create', '--workspace', A.id);
  assert.deepEqual(corralctl('join-token', 'revoke', jt.id), { revoked: jt.id });
  const events = (await audit(A)).events;
  assert.deepEqual(events.slice(-2).map((e) => [e.event, e.credential_id, e.actor]), [
    ['join_token_minted', jt.id, 'operator'], ['join_token_revoked', jt.id, 'operator']]);
  assert.deepEqual(corralctl('audit', '--workspace', A.id), await audit(A));
  assert.deepEqual(corralctl('audit', '--workspace', A.id, '--limit', '1').events, events.slice(0, 1));
  assert.ok(!JSON.stringify(events).includes(jt.token.split('_').pop()), 'a join token secret in the audit');
});

test('a member gets 403 owner_required; another workspace\'s owner sees none of it', async () => {
  const A = newWorkspace();
  const B = newWorkspace();
  await worker(A);
  const r = await create(A);
  assert.equal(r.status, 201, r.raw);
  assertError(await api('GET', '/v1/audit', { key: A.member }), 403, /^owner_required$/);
  const own = await audit(A);
  assert.ok(own.events.length >= 3);
  const other = await audit(B);
  assert.ok(!JSON.stringify(other).includes(r.body.sandbox_id));
  assert.deepEqual((await audit(B, `sandbox=${r.body.sandbox_id}`)).events, []);
});

test('filters and pagination: the cursor gives every event exactly once, in order', async () => {
  const A = newWorkspace();
  const ids = [];
  for (let i = 0; i < 12; i++) {
    const k = await api('POST', '/v1/keys', { key: A.owner, body: {} });
    assert.equal(k.status, 201, k.raw);
    ids.push(k.body.id);
  }
  for (const id of ids.slice(0, 5)) assert.equal((await api('DELETE', `/v1/keys/${id}`, { key: A.owner })).status, 204);
  const whole = (await audit(A, 'limit=1000')).events;
  assert.equal(whole.length, 19); // and corralctl's two keys of the workspace
  for (const limit of [1, 4, 17, 100]) {
    const paged = await allPages(A, '', limit);
    assert.deepEqual(paged.map((e) => e.id), whole.map((e) => e.id), `limit ${limit}`);
  }
  const minted = await allPages(A, `event=key_minted&actor=${encodeURIComponent(actorOf(A.owner))}`, 5);
  assert.deepEqual(minted.map((e) => e.credential_id), ids);
  assert.equal((await allPages(A, 'event=key_minted', 3)).length, 14);
  const revoked = await allPages(A, 'event=key_revoked', 2);
  assert.deepEqual(revoked.map((e) => e.credential_id), ids.slice(0, 5));
  assert.equal((await audit(A, `actor=${encodeURIComponent(actorOf(A.owner))}`)).events.length, 17);
  assert.equal((await audit(A, 'actor=operator')).events.length, 2);
  assert.equal((await audit(A, 'actor=scheduler')).events.length, 0);
  // A page that holds the rest says so (next null); one short of it names
  // the last event it holds.
  const first = await audit(A, 'limit=19');
  assert.equal(first.events.length, 19);
  assert.equal(first.next, null);
  const part = await audit(A, 'limit=18');
  assert.equal(part.next, whole[17].id);
  // since / until (ms and RFC 3339) bound the range, both inclusive.
  const mid = whole[6].time_ms;
  const since = (await audit(A, `since=${mid}&limit=1000`)).events;
  assert.ok(since.length >= 13 && since.every((e) => e.time_ms >= mid));
  const until = (await audit(A, `until=${encodeURIComponent(new Date(mid).toISOString())}&limit=1000`)).events;
  assert.ok(until.length >= 7 && until.every((e) => e.time_ms <= mid));
  assert.equal(since.length + until.length - whole.filter((e) => e.time_ms === mid).length, 19);
});

test('bad parameters: 400 naming the parameter, nothing read', async () => {
  const A = newWorkspace();
  const bad = {
    'limit=0': /^limit: /, 'limit=1001': /^limit: /, 'limit=x': /^limit: /, 'limit=%ZZ': /^limit: /,
    'sandbox=XYZ': /^sandbox: /, 'sandbox=../x': /^sandbox: /,
    'event=Killed': /^event: /, 'event=a%20b': /^event: /,
    'actor=root': /^actor: /, 'actor=key:': /^actor: /, 'actor=worker:XY': /^actor: /,
    'since=yesterday': /^since: /, 'until=2024-13-01T00:00:00Z': /^until: /,
    'since=2000&until=1000': /^until: must not be before since/,
    'cursor=abc': /^cursor: /, 'cursor=1-': /^cursor: /, 'cursor=-1-0': /^cursor: /,
  };
  for (const [q, msg] of Object.entries(bad)) assertError(await api('GET', `/v1/audit?${q}`, { key: A.owner }), 400, msg);
  // Empty values are the defaults, and RFC 3339 with an offset is accepted.
  assert.equal((await api('GET', '/v1/audit?limit=&event=&since=2024-05-01T10:00:00.5%2B02:00', { key: A.owner })).status, 200);
});

test('trimming by age: an event past the retention (30 days by default) is gone', async () => {
  const A = newWorkspace();
  const key = `corral:{ws:${A.id}}:audit`;
  const day = 86400 * 1000;
  redis('DEL', key); // an XADD with an explicit id must come after the stream's last
  redis('XADD', key, `${Date.now() - 31 * day}-0`, 'event', 'ancient');
  redis('XADD', key, `${Date.now() - 29 * day}-0`, 'event', 'recent');
  // Not shown even before anything trims it: a read starts at the retention.
  assert.deepEqual((await audit(A)).events.map((e) => e.event), ['recent']);
  assert.equal(redis('XLEN', key), '2');
  // The next append trims it from Redis.
  assert.equal((await api('POST', '/v1/keys', { key: A.owner, body: {} })).status, 201);
  assert.equal(redis('XLEN', key), '2');
  assert.doesNotMatch(redis('XRANGE', key, '-', '+'), /ancient/);
  assert.deepEqual((await audit(A)).events.map((e) => e.event), ['recent', 'key_minted']);
  // A cursor from before the retention starts at the retention.
  assert.deepEqual((await audit(A, `cursor=1-0`)).events.map((e) => e.event), ['recent', 'key_minted']);
});
