// Redis under Sentinel (decision 0058): the primary killed with -9 in the
// middle of creates and kills. What the clients see (only 503s, for a few
// seconds), and what they were told holds afterwards: every sandbox the API
// answered 201 for and did not kill is running on its worker and counted,
// every 204'd kill is gone, no create reached the worker twice.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { RUN, api, corralctl, eventually, newWorkspace, redisAs, setLimit, sleep, stack } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const REDIS_PORT = Number(process.env.CORRAL_REDIS_PORT);
const sentinel = (...args) => execFileSync('redis-cli', ['--no-auth-warning', '-p', String(REDIS_PORT + 2), ...args],
  { env: { ...process.env, REDISCLI_AUTH: readFileSync(`${RUN}/redis-sentinel-password`, 'utf8').trim() } })
  .toString().trim().split('\n');

test('kill -9 of the Redis primary under load: only 503s meanwhile, then nothing told to a client is lost', async () => {
  const A = newWorkspace();
  await setLimit(A, 500);
  // Room for every sandbox the loop can keep (at most 200 of its 400
  // operations): on a fast machine it kept 64 before the kill, the default
  // 64 cores' worth, and every create after the failover was refused as
  // over capacity rather than served.
  const w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token,
    { slots: 1000, cpu: 1000, memory: 1000 * 1024 });
  await w.handshake();
  workers.push(w.start());
  assert.deepEqual(sentinel('SENTINEL', 'get-master-addr-by-name', 'corral'), ['127.0.0.1', String(REDIS_PORT)]);

  const kept = new Set(); const killed = new Set(); const seen = [];
  let killedAt = 0; let firstOkAfter = 0; let ops = 0;
  const t0 = Date.now();
  // bounded: at most 400 operations or 60 s
  while (ops < 400 && Date.now() - t0 < 60000) {
    if (!killedAt && Date.now() - t0 > 1500) {
      process.kill(Number(readFileSync(`${RUN}/pids/redis.pid`, 'utf8')), 'SIGKILL');
      killedAt = Date.now();
    }
    const c = await api('POST', '/v1/sandboxes', { key: A.member, body: {} });
    ops++;
    seen.push({ at: Date.now(), status: c.status, body: c.body });
    if (c.status === 201) {
      const nth = kept.size + killed.size;
      kept.add(c.body.sandbox_id);
      if (nth % 2 === 1) { // every other one is killed
        const d = await api('DELETE', `/v1/sandboxes/${c.body.sandbox_id}`, { key: A.member });
        ops++;
        seen.push({ at: Date.now(), status: d.status, body: d.body });
        if (d.status === 204) { kept.delete(c.body.sandbox_id); killed.add(c.body.sandbox_id); }
      }
    }
    if (killedAt && !firstOkAfter && c.status === 201) firstOkAfter = Date.now();
    if (firstOkAfter && Date.now() - firstOkAfter > 3000) break;
    // sleep: a client's pause before it tries again after a 503 (the loop is bounded).
    if (c.status === 503) await sleep(100);
  }
  const counts = seen.reduce((m, s) => ({ ...m, [s.status]: (m[s.status] || 0) + 1 }), {});
  const unavailable = seen.filter((s) => s.status === 503);
  console.log(`# ${ops} operations: ${JSON.stringify(counts)}; 503 for ${firstOkAfter - killedAt} ms after the kill; ` +
    `${kept.size} sandboxes kept, ${killed.size} killed`);

  assert.ok(killedAt && firstOkAfter, 'the primary was killed and service came back');
  assert.ok(firstOkAfter - killedAt < 15000, `503 for ${firstOkAfter - killedAt} ms`);
  assert.deepEqual(Object.keys(counts).filter((s) => !['201', '204', '503'].includes(s)), [], JSON.stringify(counts));
  for (const s of unavailable) {
    assert.equal(s.body.code, 503);
    assert.ok(s.at >= killedAt && s.at <= firstOkAfter + 1000, 'a 503 outside the failover');
  }
  assert.notDeepEqual(sentinel('SENTINEL', 'get-master-addr-by-name', 'corral'), ['127.0.0.1', String(REDIS_PORT)],
    'the sentinels moved the primary');

  // What the clients were told holds: the API, the worker and the admission count agree.
  let last;
  await eventually(async () => {
    const list = (await api('GET', '/v1/sandboxes', { key: A.member })).body.sandboxes || [];
    const active = (await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes;
    const running = list.filter((s) => s.state === 'running').map((s) => s.sandbox_id);
    last = { listed: running.length, active, worker: w.running.size, kept: kept.size };
    return running.length === kept.size && active === kept.size && w.running.size === kept.size &&
      running.every((id) => kept.has(id) && w.running.has(id));
  }, { timeout: 30000, what: 'API, worker and admission to agree with what clients were told' })
    .catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(last)}`); });
  for (const id of killed) assert.ok(!w.running.has(id), `killed ${id} still on the worker`);
  const creates = w.received.filter((c) => c.type === 'create').map((c) => c.sandbox.id);
  assert.equal(new Set(creates).size, creates.length, 'a create reached the worker twice');
  for (const id of [...kept, ...killed]) assert.ok(creates.includes(id), `201'd ${id} never reached the worker`);
});

// The old primary comes back (restarted with its own config) and the
// sentinels make it a replica of the new one; a second failover onto it,
// as the bench's five in a row do, loses nothing either.
test('the killed primary rejoins as a replica, and a failover back onto it serves', async () => {
  const port = (n) => ['-p', String(n)];
  const role = (n) => redisAs('corral-admin', `${RUN}/redis-admin-password`, ...port(n), 'ROLE').split('\n');
  const [, newPort] = sentinel('SENTINEL', 'get-master-addr-by-name', 'corral');
  assert.equal(newPort, String(REDIS_PORT + 1), 'the replica was promoted');
  stack('start-redis');
  await eventually(() => role(REDIS_PORT)[0] === 'slave' && role(REDIS_PORT)[3] === 'connected',
    { timeout: 30000, what: 'the old primary to follow the new one' });
  const A = newWorkspace();
  // Replication is asynchronous, and a write no replica acknowledged within
  // WAIT's 250 ms is answered anyway (decision 0058): the failover back must
  // wait until the rejoined replica holds everything, A's workspace too.
  const offset = (n, field) => Number((redisAs('corral-admin', `${RUN}/redis-admin-password`, ...port(n),
    'INFO', 'replication').match(new RegExp(`${field}:(\\d+)`)) || [])[1]);
  const written = offset(REDIS_PORT + 1, 'master_repl_offset');
  await eventually(() => offset(REDIS_PORT, 'slave_repl_offset') >= written,
    { timeout: 15000, what: 'the rejoined replica to hold every write' });
  process.kill(Number(readFileSync(`${RUN}/pids/redis-replica.pid`, 'utf8')), 'SIGKILL');
  await eventually(() => sentinel('SENTINEL', 'get-master-addr-by-name', 'corral')[1] === String(REDIS_PORT),
    { timeout: 30000, what: 'the sentinels to move the primary back' });
  await eventually(async () => (await api('GET', '/v1/workspace', { key: A.member })).status === 200,
    { timeout: 15000, what: 'the API to answer from the old primary' });
  const r = await api('PATCH', '/v1/workspace', { key: A.owner, body: { max_concurrent_sandboxes: 7 } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal((await api('GET', '/v1/workspace', { key: A.member })).body.max_concurrent_sandboxes, 7);
});
