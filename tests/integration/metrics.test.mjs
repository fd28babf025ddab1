// A sandbox's metrics and logs (decision 0047): a worker pushes samples and log
// lines on POST /v1/worker/telemetry; the E2B routes (GET /sandboxes/{id}/metrics,
// /sandboxes/metrics, /sandboxes/{id}/logs, /v2/sandboxes/{id}/logs) and the
// native GET /v1/sandboxes/{id}/metrics read them back. Real nginx, corral-api
// and Redis; the workers are test workers speaking the real control channel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertError, corralctl, newWorkspace, redis } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const A = newWorkspace();
const B = newWorkspace();
const workers = [];
let w; // one of A's two workers
before(async () => {
  for (const ws of [A, B, A]) {
    const tw = new TestWorker(corralctl('join-token', 'create', '--workspace', ws.id).token, { slots: 30 });
    await tw.handshake();
    workers.push(tw.start());
  }
  w = workers[0];
});
after(async () => Promise.all(workers.map((x) => x.stop())));

const e2b = (m, p, key = A.member) => api(m, p, { headers: { 'X-API-KEY': key } });
async function create(key = A.member) {
  const r = await api('POST', '/v2/sandboxes', { body: { templateID: 'base' }, headers: { 'X-API-KEY': key } });
  assert.equal(r.status, 201, r.raw);
  return r.body.sandboxID;
}
const MB = 2 ** 20;
const sample = (ts, over = {}) => ({ ts_ms: ts, cpu_count: 2, cpu_used_pct: 37.5, mem_used: 100 * MB,
  mem_total: 512 * MB, mem_cache: 10 * MB, disk_used: 50 * MB, disk_total: 10240 * MB, ...over });
const line = (ms, text) => ({ ts_ns: ms * 1e6 + 123, line: text });
const metricsKey = (ws, id) => `corral:{ws:${ws.id}}:sb:${id}:metrics`;
const logsKey = (ws, id) => `corral:{ws:${ws.id}}:sb:${id}:logs`;

const holder = (id) => workers.find((x) => x.running.has(id));

// Pushed as each sandbox's worker does; {accepted, refused} summed.
async function push(sandboxes) {
  const out = { accepted: 0, refused: [] };
  for (const x of workers) {
    const mine = sandboxes.filter((s) => holder(s.id) === x);
    if (mine.length === 0) continue;
    const r = await x.telemetry(mine);
    assert.equal(r.status, 200, r.raw);
    out.accepted += r.body.accepted;
    out.refused.push(...r.body.refused);
  }
  return out;
}

test('GET /sandboxes/{id}/metrics: the pushed samples, oldest first, in E2B\'s SandboxMetric shape', async () => {
  const id = await create();
  const now = Date.now();
  const t = [now - 20000, now - 10000, now];
  const ans = await push([0, 1, 2].map((i) => ({ id, metric: sample(t[i], { cpu_used_pct: 10 * (i + 1) }) })));
  assert.deepEqual(ans, { accepted: 3, refused: [] });
  const r = await e2b('GET', `/sandboxes/${id}/metrics`);
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.length, 3);
  r.body.forEach((m, i) => {
    assert.deepEqual(Object.keys(m).sort(), ['cpuCount', 'cpuUsedPct', 'diskTotal', 'diskUsed', 'memCache', 'memTotal',
      'memUsed', 'timestamp', 'timestampUnix']);
    assert.equal(m.timestampUnix, Math.floor(t[i] / 1000));
    assert.equal(Date.parse(m.timestamp), t[i]);
    assert.equal(m.cpuUsedPct, 10 * (i + 1));
    assert.equal(m.cpuCount, 2);
    assert.equal(m.memUsed, 100 * MB);
    assert.equal(m.memTotal, 512 * MB);
    assert.equal(m.diskTotal, 10240 * MB);
  });
  const native = await api('GET', `/v1/sandboxes/${id}/metrics`, { key: A.member });
  assert.equal(native.status, 200, native.raw);
  assert.equal(native.body.sandbox_id, id);
  assert.equal(native.body.metrics.length, 3);
  assert.equal(native.body.metrics[2].time_ms, t[2]);
  assert.equal(native.body.metrics[2].cpu_used_pct, 30);
  assert.equal(native.body.metrics[2].mem_used, 100 * MB);
});

test('metrics: start and end (unix seconds, inclusive) select samples; bad values are a 400 naming them', async () => {
  const id = await create();
  const base = Math.floor(Date.now() / 1000) - 100;
  await push([10, 20, 30].map((s) => ({ id, metric: sample(base * 1000 + s * 1000 + 500) })));
  const got = async (q) => (await e2b('GET', `/sandboxes/${id}/metrics?${q}`)).body.map((m) => m.timestampUnix - base);
  assert.deepEqual(await got(`start=${base + 20}`), [20, 30]);
  assert.deepEqual(await got(`end=${base + 20}`), [10, 20]);
  assert.deepEqual(await got(`start=${base + 11}&end=${base + 29}`), [20]);
  assert.deepEqual(await got(`start=${base + 31}`), []);
  assertError(await e2b('GET', `/sandboxes/${id}/metrics?start=abc`), 400, /^start: /);
  assertError(await e2b('GET', `/sandboxes/${id}/metrics?end=-1`), 400, /^end: /);
  assertError(await e2b('GET', `/sandboxes/${id}/metrics?start=${base + 30}&end=${base}`), 400, /start: must not be after end/);
});

test('GET /sandboxes/metrics: the newest sample of each listed sandbox of the caller\'s; bad lists are a 400', async () => {
  const [a1, a2, quiet] = [await create(), await create(), await create()];
  const foreign = await create(B.member);
  const now = Date.now();
  await push([{ id: a1, metric: sample(now - 5000, { cpu_used_pct: 1 }) }, { id: a1, metric: sample(now, { cpu_used_pct: 2 }) },
    { id: a2, metric: sample(now, { cpu_used_pct: 3 }) }]);
  const r = await e2b('GET', `/sandboxes/metrics?sandbox_ids=${a1},${a2},${quiet},${foreign}`);
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(Object.keys(r.body.sandboxes).sort(), [a1, a2].sort(), 'no sample, or another workspace\'s: left out');
  assert.equal(r.body.sandboxes[a1].cpuUsedPct, 2, 'the newest sample');
  assert.equal(r.body.sandboxes[a2].timestampUnix, Math.floor(now / 1000));
  assertError(await e2b('GET', '/sandboxes/metrics'), 400, /^sandbox_ids: required/);
  assertError(await e2b('GET', `/sandboxes/metrics?sandbox_ids=${a1},${a1}`), 400, /listed twice/);
  assertError(await e2b('GET', '/sandboxes/metrics?sandbox_ids=nope'), 400, /'nope' is not a sandbox id/);
  const many = Array.from({ length: 101 }, (_, i) => i.toString(16).padStart(20, '0')).join(',');
  assertError(await e2b('GET', `/sandboxes/metrics?sandbox_ids=${many}`), 400, /at most 100/);
});

test('another workspace\'s sandbox, or an unknown one, is a 404 on every metrics and logs route', async () => {
  const id = await create();
  await push([{ id, metric: sample(Date.now()), logs: [line(Date.now(), 'secret-ish')] }]);
  for (const p of [`/sandboxes/${id}/metrics`, `/sandboxes/${id}/logs`, `/v2/sandboxes/${id}/logs`]) {
    assertError(await e2b('GET', p, B.member), 404, /sandbox not found/);
    assertError(await e2b('GET', p.replace(id, 'ffffffffffffffffffff')), 404, /sandbox not found/);
    assert.equal((await e2b('GET', p)).status, 200);
  }
  assertError(await api('GET', `/v1/sandboxes/${id}/metrics`, { key: B.member }), 404, /sandbox not found/);
});

test('a worker writes only the sandboxes it holds: another worker\'s, of its pool or another, is refused', async () => {
  const id = await create();
  const now = Date.now();
  await push([{ id, metric: sample(now - 1000, { cpu_used_pct: 5 }), logs: [line(now - 1000, 'true line')] }]);
  const before = redis('ZRANGE', metricsKey(A, id), '0', '-1');
  const sameWs = workers.find((x) => x !== holder(id) && x.workspace === A.id);
  const otherWs = workers[1];
  for (const attacker of [sameWs, otherWs]) {
    const r = await attacker.telemetry([{ id, metric: sample(now, { cpu_used_pct: 99 }), logs: [line(now, 'forged line')] }]);
    assert.equal(r.status, 200, r.raw);
    assert.deepEqual(r.body, { accepted: 0, refused: [id] });
  }
  assert.equal(redis('ZRANGE', metricsKey(A, id), '0', '-1'), before, 'the samples are unchanged');
  assert.equal(redis('EXISTS', metricsKey(B, id)), '0', 'nothing written in the attacker\'s workspace either');
  const logs = await e2b('GET', `/sandboxes/${id}/logs`);
  assert.deepEqual(logs.body.logs.map((l) => l.line), ['true line']);
  // Its own secret is needed; an API key is no worker.
  const forged = { ...sameWs.headers(), 'X-Worker-Secret': '0'.repeat(48) };
  assert.equal((await sameWs.telemetry([{ id, metric: sample(now) }], forged)).status, 403);
  assertError(await api('POST', '/v1/worker/telemetry', { key: A.owner, body: { sandboxes: [] } }), 403, /join token/);
});

test('telemetry bodies are checked whole: one bad field is a 400 naming it, and nothing is written', async () => {
  const id = await create();
  const now = Date.now();
  const bad = [
    [[{ id, metric: sample(now, { cpu_used_pct: 101 }) }], /sandboxes\[0\]\.metric\.cpu_used_pct/],
    [[{ id, metric: sample(now, { mem_used: -1 }) }], /metric\.mem_used/],
    [[{ id, metric: sample(now - 2 * 3600e3) }], /metric\.ts_ms/],
    [[{ id, logs: [line(now, 'ok'), { ts_ns: now * 1e6, line: 7 }] }], /sandboxes\[0\]\.logs\[1\]\.line: must be a string/],
    [[{ id, logs: ['just text'] }], /sandboxes\[0\]\.logs\[0\]: must be an object/],
    [[{ id, logs: Array.from({ length: 201 }, () => line(now, 'x')) }], /logs: must be an array of at most 200/],
    [[{ id: 'not-an-id' }], /sandboxes\[0\]\.id/],
    [[{ id, metric: sample(now) }, { id, metric: { ts_ms: now } }], /sandboxes\[1\]\.metric/],
  ];
  for (const [body, msg] of bad) assertError(await w.telemetry(body), 400, msg);
  assert.equal(redis('EXISTS', metricsKey(A, id)), '0', 'not even the valid first entry');
  assert.equal(redis('EXISTS', logsKey(A, id)), '0');
});

test('GET /sandboxes/{id}/logs: SandboxLogs, lines and structured entries; start (ms) and limit', async () => {
  const id = await create();
  const t0 = Date.now() - 30000;
  const envd = JSON.stringify({ level: 'info', message: 'process started', pid: 42, cmd: 'sleep', user: 'user' });
  await push([{ id, logs: [line(t0, 'envd 0.6.4 listening on 0.0.0.0:49983'), line(t0 + 1000, envd),
    line(t0 + 2000, JSON.stringify({ level: 'error', message: 'process ended', pid: 42, exit: 'signal: killed' }))] }]);
  const r = await e2b('GET', `/sandboxes/${id}/logs`);
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(r.body.logs.map((l) => l.line), ['envd 0.6.4 listening on 0.0.0.0:49983', envd, r.body.logs[2].line]);
  assert.equal(Date.parse(r.body.logs[0].timestamp), t0);
  assert.deepEqual(r.body.logEntries[0], { timestamp: r.body.logs[0].timestamp, level: 'info',
    message: 'envd 0.6.4 listening on 0.0.0.0:49983', fields: {} });
  assert.deepEqual(r.body.logEntries[1].fields, { pid: '42', cmd: 'sleep', user: 'user' });
  assert.equal(r.body.logEntries[1].message, 'process started');
  assert.equal(r.body.logEntries[2].level, 'error');
  const later = await e2b('GET', `/sandboxes/${id}/logs?start=${t0 + 1000}&limit=1`);
  assert.deepEqual(later.body.logs.map((l) => l.line), [envd]);
  assertError(await e2b('GET', `/sandboxes/${id}/logs?limit=-1`), 400, /^limit: /);
  assertError(await e2b('GET', `/sandboxes/${id}/logs?start=x`), 400, /^start: /);
});

test('GET /v2/sandboxes/{id}/logs: cursor, direction, level, search and limit as the spec defines them', async () => {
  const id = await create();
  const t0 = Date.now() - 60000;
  const msgs = ['alpha one', 'beta two', 'alpha three', 'gamma four'];
  const levels = ['debug', 'info', 'warn', 'error'];
  await push([{ id, logs: msgs.map((m, i) => line(t0 + i * 1000, JSON.stringify({ level: levels[i], message: m }))) }]);
  const get = async (q) => {
    const r = await e2b('GET', `/v2/sandboxes/${id}/logs?${q}`);
    assert.equal(r.status, 200, r.raw);
    for (const e of r.body.logs) assert.deepEqual(Object.keys(e).sort(), ['fields', 'level', 'message', 'timestamp']);
    return r.body.logs.map((e) => e.message);
  };
  assert.deepEqual(await get(''), msgs);
  assert.deepEqual(await get(`cursor=${t0 + 1000}`), msgs.slice(1));
  assert.deepEqual(await get('direction=backward'), [...msgs].reverse());
  assert.deepEqual(await get(`direction=backward&cursor=${t0 + 1000}&limit=1`), ['beta two']);
  assert.deepEqual(await get('level=warn'), ['alpha three', 'gamma four']);
  assert.deepEqual(await get('search=alpha'), ['alpha one', 'alpha three']);
  assert.deepEqual(await get('search=Alpha'), [], 'case-sensitive');
  assert.deepEqual(await get('limit=2&level=info'), ['beta two', 'alpha three']);
  assert.deepEqual(await get('limit=0'), []);
  for (const [q, name] of [['direction=sideways', 'direction'], ['level=loud', 'level'], ['limit=1001', 'limit'],
    ['cursor=-5', 'cursor'], [`search=${'x'.repeat(257)}`, 'search']]) {
    assertError(await e2b('GET', `/v2/sandboxes/${id}/logs?${q}`), 400, new RegExp(`^${name}: `));
  }
});

test('storage is bounded: the newest 720 samples and 1000 lines, a long line cut, keys that expire', async () => {
  const id = await create();
  const now = Date.now();
  const samples = Array.from({ length: 730 }, (_, i) => ({ id, metric: sample(now - (730 - i) * 1000) }));
  await push(samples);
  for (let k = 0; k < 6; k++) {
    await push([{ id, logs: Array.from({ length: 200 }, (_, i) => line(now - 600000 + (k * 200 + i) * 10, `line ${k * 200 + i}`)) }]);
  }
  await push([{ id, logs: [line(now, `long ${'é'.repeat(3000)}`)] }]);
  assert.equal(redis('ZCARD', metricsKey(A, id)), '720');
  assert.equal(redis('ZCARD', logsKey(A, id)), '1000');
  const m = (await e2b('GET', `/sandboxes/${id}/metrics`)).body;
  assert.equal(m.length, 720);
  assert.equal(m[0].timestampUnix, Math.floor((now - 720 * 1000) / 1000), 'the oldest were dropped');
  const logs = (await e2b('GET', `/sandboxes/${id}/logs?limit=5000`)).body.logs;
  assert.equal(logs.length, 1000);
  assert.equal(logs[0].line, 'line 201', 'the oldest lines were dropped');
  const long = logs[999].line;
  assert.ok(Buffer.byteLength(long) <= 2048 && Buffer.byteLength(long) > 2040, `cut at 2048 bytes: ${Buffer.byteLength(long)}`);
  assert.ok(long.endsWith('é'), 'never inside a UTF-8 sequence');
  for (const k of [metricsKey(A, id), logsKey(A, id)]) {
    const ttl = Number(redis('PTTL', k));
    assert.ok(ttl > 3500000 && ttl <= 3600000, `${k} expires within the hour: ${ttl}`);
  }
});

test('deleting a sandbox deletes its samples and lines', async () => {
  const id = await create();
  await push([{ id, metric: sample(Date.now()), logs: [line(Date.now(), 'bye')] }]);
  assert.equal(redis('EXISTS', metricsKey(A, id), logsKey(A, id)), '2');
  assert.equal((await e2b('DELETE', `/sandboxes/${id}`)).status, 204);
  assert.equal(redis('EXISTS', metricsKey(A, id), logsKey(A, id)), '0');
  assertError(await e2b('GET', `/sandboxes/${id}/metrics`), 404, /sandbox not found/);
});
