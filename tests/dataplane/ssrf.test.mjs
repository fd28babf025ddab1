// Issue 14 on the data plane, end to end (see lib.mjs for what is real):
//   - SSRF through data_addr: a worker may not enrol with an address outside
//     the operator's list, and the module refuses a route outside it (a
//     record edited in Redis) before it connects (decision 32); on loopback
//     only the exact addresses listed, never another port of the gateway
//     host's loopback (Redis, another data port: issue 25, decision 61);
//   - one answer, 502 "The sandbox was not found", for an unknown sandbox and for
//     a known one with a missing or wrong token (decision 33);
//   - an envd token stops working when its sandbox ends (killed or timed out),
//     and keeps working across setTimeout.
// run.sh lists 127.0.0.1 and [::1] on the data port, and a dead port, as
// workers' data ports; nothing else. The baits are what an attacker with a
// join token would aim the gateway at: other ports and addresses of its
// loopback, each a stand-in for a metadata service or Redis.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { api, corralctl, newWorkspace, redisAs } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
import {
  DATAPORT, ENVD_PORT, NOCACHE_PORT, Worker, createSandbox, gw, lookupCount, notFound, unauthorized, forbidden,
  setDataport, setupWorld, sleep,
  startEnvd, tokenFor,
} from './lib.mjs';

const REDIS_PORT = process.env.DP_REDIS_PORT;
const ERROR_LOG = process.env.DP_ERROR_LOG;
const UNKNOWN = '0123456789abcdef0123';

const DP_PORT = Number(DATAPORT.split(':')[1]);
let w, bait, loopBait, v6Bait, aliasBait, lowBait;
before(async () => {
  assert.ok(REDIS_PORT && ERROR_LOG, 'run through tests/dataplane/run.sh');
  w = await setupWorld();
  bait = await startBait('127.0.0.2');
  loopBait = await startBait('127.0.0.1'); // another port of the listed address
  v6Bait = await startBait('::1'); // another port of [::1]
  aliasBait = await startBait('127.0.0.2', DP_PORT, { exact: true }); // the listed port, another address
  lowBait = await startBait('127.0.0.1', 1023); // a privileged port
});
after(async () => {
  await Promise.allSettled([w?.teardown(), ...[bait, loopBait, v6Bait, aliasBait, lowBait].map((b) => b?.stop())]);
});
const baits = () => [bait, loopBait, v6Bait, aliasBait, lowBait];
const baitHits = () => baits().reduce((n, b) => n + b.connections(), 0);

// What an attacker wants the gateway to reach (a metadata service): answers
// every connection with a "secret", and counts them.
function startBait(ip, port = 0, { exact = false } = {}) {
  let connections = 0;
  const srv = net.createServer((sock) => {
    connections++;
    sock.on('error', () => {});
    sock.end('HTTP/1.1 200 OK\r\nContent-Length: 15\r\nConnection: close\r\n\r\nmetadata-secret');
  });
  const listen = (p) => new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(p, ip, () => resolve());
  });
  return (async () => {
    // a privileged port: the first free one at or below the one asked for
    for (let p = port; ; p--) {
      try { await listen(p); break; } catch (e) { if (port === 0 || exact || p < 900) throw e; }
    }
    const host = ip.includes(':') ? `[${ip}]` : ip;
    return {
      ip, port: srv.address().port, addr: `${host}:${srv.address().port}`, connections: () => connections,
      stop: () => new Promise((r) => srv.close(r)),
    };
  })();
}

// As corral-admin (the stack's Redis wants a login: decision 0030), on the port the suite gave.
const redis = (...args) => redisAs('corral-admin', `${process.env.CORRAL_RUN}/redis-admin-password`, '--no-raw', ...args);
const workerKey = (wsId, wid) => `corral:{ws:${wsId}}:worker:${wid}`;
const listWorkers = async (key) => {
  const r = await api('GET', '/v1/workers', { key });
  assert.equal(r.status, 200, r.raw);
  return r.body.workers;
};
const handshake = (join, dataAddr, extra = {}) => api('POST', '/v1/worker/handshake', {
  headers: { Authorization: `Bearer ${join}` },
  body: { hostname: 'ssrf', runtimes: [{ name: 'runc', tier: 'CONTAINER' }], cpu_cores: 1, memory_mb: 1024,
    slots: 4, data_addr: dataAddr, templates: ['base'], ...extra },
});
// Every response through the gateway, both the cached and the cache-bypassing server.
const both = async (target, opts = {}) => [await gw('GET', '/health', { target, ...opts }),
  await gw('GET', '/health', { target, port: NOCACHE_PORT, ...opts })];

// "... is on loopback and not a listed worker data address", for addr
const notListed = (addr) => new RegExp(`^data_addr: ${addr.replace(/[.[\]]/g, '\\$&')} is on loopback and not a listed worker data address`);

test('handshake: a data_addr not listed, or not an IP and port, is 400 naming why and stores nothing', async () => {
  const ws = newWorkspace();
  const join = corralctl('join-token', 'create', '--workspace', ws.id).token;
  const cases = [
    // the gateway host's loopback: every address and port but the listed ones
    ...baits().map((b) => [b.addr, notListed(b.addr)]),
    [`127.0.0.1:${REDIS_PORT}`, notListed(`127.0.0.1:${REDIS_PORT}`)],
    [`[::1]:${REDIS_PORT}`, notListed(`[::1]:${REDIS_PORT}`)],
    [`[0:0::1]:${REDIS_PORT}`, notListed(`[::1]:${REDIS_PORT}`)],
    ['127.0.0.1:2375', notListed('127.0.0.1:2375')],
    [`127.0.0.2:${DP_PORT}`, notListed(`127.0.0.2:${DP_PORT}`)],
    ['10.9.9.9:7001', /^data_addr: 10\.9\.9\.9 is outside the networks allowed/],
    ['169.254.169.254:80', /^data_addr: 169\.254\.169\.254 is link-local/],
    ['metadata.google.internal:80', /^data_addr: must be an IP address and a port/],
    [`localhost:${bait.port}`, /^data_addr: must be an IP address and a port/],
    [`0.0.0.0:${bait.port}`, /^data_addr: 0\.0\.0\.0 is unspecified/],
    [`[fe80::1]:${bait.port}`, /^data_addr: fe80::1 is link-local/],
    ['[::ffff:169.254.169.254]:80', /^data_addr: ::ffff:169\.254\.169\.254 is IPv4-mapped/],
    [`[::ffff:127.0.0.1]:${DATAPORT.split(':')[1]}`, /IPv4-mapped/],
    ['127.0.0.1', /^data_addr: must be an IP address and a port/],
    [42, /^data_addr: must be a string/],
  ];
  for (const [addr, why] of cases) {
    const r = await handshake(join, addr);
    assert.equal(r.status, 400, `${addr}: ${r.raw}`);
    assert.deepEqual(Object.keys(r.body).sort(), ['code', 'message']);
    assert.equal(r.body.code, 400);
    assert.match(r.body.message, why, String(addr));
  }
  assert.deepEqual(await listWorkers(ws.member), [], 'no worker enrolled');
  // nothing stored: no worker record, no pool membership
  assert.equal(redis('EXISTS', `corral:{ws:${ws.id}}:wkall`, `corral:{ws:${ws.id}}:workers`), '(integer) 0');
  assert.match(redis('KEYS', `corral:{ws:${ws.id}}:worker:*`), /^\(empty (array|list or set)\)$/);
  // an enrolled worker re-enrolling with a bad address keeps its old one
  const ok = await handshake(join, DATAPORT);
  assert.equal(ok.status, 200, ok.raw);
  const again = await handshake(join, bait.addr, { worker_id: ok.body.worker_id, worker_secret: ok.body.worker_secret });
  assert.equal(again.status, 400, again.raw);
  assert.equal(redis('HGET', workerKey(ws.id, ok.body.worker_id), 'data_addr'), `"${DATAPORT}"`);
  const listed = await listWorkers(ws.member);
  assert.deepEqual(listed.map((x) => x.data_addr), [DATAPORT]);
  // accepted addresses are stored canonically
  const v6 = await handshake(join, `[0:0:0:0:0:0:0:1]:${DP_PORT}`);
  assert.equal(v6.status, 200, v6.raw);
  assert.equal(redis('HGET', workerKey(ws.id, v6.body.worker_id), 'data_addr'), `"[::1]:${DP_PORT}"`);
  assert.equal(baitHits(), 0);
});

test('a route edited in Redis to an address not listed: the module refuses, never connects', async () => {
  const ws = newWorkspace();
  const join = corralctl('join-token', 'create', '--workspace', ws.id).token;
  const worker = await new Worker(join, DATAPORT).handshake();
  worker.start();
  try {
    const c = await createSandbox(ws.member, {}); // public: no token needed, only the route matters
    const target = { id: c.sandboxID, port: 80 };
    const key = workerKey(ws.id, worker.id);
    const edits = [...baits().map((b) => b.addr), `127.0.0.1:${REDIS_PORT}`, `[::1]:${REDIS_PORT}`,
      '169.254.169.254:80', `[::ffff:127.0.0.2]:${bait.port}`, `localhost:${bait.port}`];
    for (const addr of edits) {
      assert.equal(redis('HSET', key, 'data_addr', addr), '(integer) 0');
      // The cached server's route expires (2 s ttl) and it looks the edited one
      // up. Polled through that server alone: the bypassing one stores what it
      // looks up in the same cache, which would keep the entry fresh.
      const n = lookupCount('cached');
      await until(async () => { await gw('GET', '/health', { target }); return lookupCount('cached') > n; },
        { timeoutMs: 5000, everyMs: 100 });
      for (const r of [...await both(target), ...await both(target)]) notFound(r, c.sandboxID);
      assert.match(fs.readFileSync(ERROR_LOG, 'utf8'),
        new RegExp(`\\[warn\\].*corral: sandbox ${c.sandboxID} routes to "${addr.replace(/[[\]]/g, '\\$&')}", refused`));
    }
    assert.equal(baitHits(), 0, 'no bait was ever reached');
    // put back: the gateway connects again (so the refusals above were the
    // address); the data port answers, refusing this worker's signature
    // (it holds the world worker's key)
    redis('HSET', key, 'data_addr', DATAPORT);
    const back = await gw('GET', '/health', { target, port: NOCACHE_PORT });
    assert.equal(back.status, 403, back.raw);
    assert.match(back.body.message, /invalid gateway signature/);
  } finally { await worker.stop(); }
});

// Decision 0069: a known sandbox's missing or wrong token is E2B's 401/403,
// the same for every known sandbox and whatever the token (another
// sandbox's, garbage); an unknown one stays the one "not found" answer.
test('unknown sandbox: one answer; a known one with a missing or wrong token: 401 (envd) or 403 (traffic), whatever the token', async () => {
  const strip = (r, id) => ({ status: r.status, body: r.raw.toString().replace(id, 'ID'),
    headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date')) });
  for (const port of [undefined, NOCACHE_PORT]) {
    const opts = port ? { port } : {};
    const unknown = strip(notFound(await gw('GET', '/files?path=/etc/hostname',
      { target: { id: UNKNOWN, port: ENVD_PORT }, ...opts }), UNKNOWN), UNKNOWN);
    const envd = [
      await gw('GET', '/files?path=/etc/hostname', { target: w.A, ...opts }),
      await gw('GET', '/files?path=/etc/hostname', { target: w.A, headers: { 'X-Access-Token': tokenFor('envd', w.B.id) }, ...opts }),
      await gw('GET', '/files?path=/etc/hostname', { target: w.A, via: 'host', headers: { 'X-Access-Token': 'x' }, ...opts }),
    ];
    const traffic = [
      await gw('GET', '/', { target: w.appA, ...opts }),
      await gw('GET', '/', { target: w.appA, headers: { 'e2b-traffic-access-token': tokenFor('traffic', w.B.id) }, ...opts }),
    ];
    for (const [list, check] of [[envd, unauthorized], [traffic, forbidden]]) {
      for (const r of list) assert.deepEqual(strip(check(r), w.A.id), strip(list[0], w.A.id));
    }
    // the unknown id a second time (the negative cache): still the same
    assert.deepEqual(strip(await gw('GET', '/', { target: { id: UNKNOWN, port: 8080 }, ...opts }), UNKNOWN), unknown);
  }
});

// A secure sandbox of the world's worker with its own envd (the data port maps
// it for the whole test, so only the gateway can stop its token).
async function secureSandbox(ip, opts = {}) {
  const c = await createSandbox(w.ws.member, { secure: true, ...opts });
  setDataport(w.worker, { [w.A.id]: '127.0.0.2', [w.B.id]: '127.0.0.3', [c.sandboxID]: ip });
  const envd = await startEnvd(ip, c.envdAccessToken);
  const target = { id: c.sandboxID, port: ENVD_PORT };
  const call = (port) => gw('POST', '/filesystem.Filesystem/ListDir', { target, port,
    headers: { 'Content-Type': 'application/json', 'X-Access-Token': c.envdAccessToken },
    body: JSON.stringify({ path: '/', depth: 1 }) });
  return { c, envd, target, call };
}

// Polls until the cached server answers "not found"; returns how long it took.
async function untilNotFound(call, id, deadlineMs) {
  const t0 = Date.now();
  for (;;) {
    const r = await call();
    if (r.status === 502) { notFound(r, id); return Date.now() - t0; }
    assert.equal(r.status, 200, r.raw);
    assert.ok(Date.now() - t0 < deadlineMs, `the token still worked after ${deadlineMs} ms`);
    // sleep: between tries of this loop, bounded by deadlineMs.
    await sleep(50);
  }
}

test('an envd token stops working when its sandbox is killed', async () => {
  const s = await secureSandbox('127.0.0.4');
  try {
    assert.equal((await s.call()).status, 200);
    assert.equal((await s.call(NOCACHE_PORT)).status, 200);
    const del = await api('DELETE', `/sandboxes/${s.c.sandboxID}`, { headers: { 'X-API-KEY': w.ws.member } });
    assert.ok([200, 204].includes(del.status), del.raw);
    // without the route cache: at once
    notFound(await s.call(NOCACHE_PORT), s.c.sandboxID);
    // with it: within its TTL (2 s), then for good
    const took = await untilNotFound(() => s.call(), s.c.sandboxID, 2500);
    assert.ok(took <= 2500, `${took} ms`);
    for (let i = 0; i < 3; i++) notFound(await s.call(), s.c.sandboxID);
    // envd is still up and the data port still maps it: the gateway is what refused
    assert.equal((await fetch(`${s.envd.base}/health`)).status, 204);
  } finally { await s.envd.stop(); }
});

test('an envd token survives setTimeout and stops working when the sandbox times out', async () => {
  const s = await secureSandbox('127.0.0.5');
  try {
    assert.equal((await s.call()).status, 200);
    const t = await api('POST', `/sandboxes/${s.c.sandboxID}/timeout`, { headers: { 'X-API-KEY': w.ws.member },
      body: { timeout: 3 } });
    assert.ok([200, 204].includes(t.status), t.raw);
    // the same token, after setTimeout (the SDK keeps it)
    assert.equal((await s.call()).status, 200);
    assert.equal((await s.call(NOCACHE_PORT)).status, 200);
    // ends by its timeout (3 s, swept every 200 ms), then the cache's 2 s at most
    await untilNotFound(() => s.call(), s.c.sandboxID, 9000);
    notFound(await s.call(NOCACHE_PORT), s.c.sandboxID);
    const info = await api('GET', `/sandboxes/${s.c.sandboxID}`, { headers: { 'X-API-KEY': w.ws.member } });
    assert.equal(info.status, 404, info.raw);
  } finally { await s.envd.stop(); }
});

test('a listed network overlapping loopback, link-local or the like is refused at load, by nginx and by corral.conf', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dp-allow-'));
  try {
    const nginxT = (allow) => {
      fs.writeFileSync(path.join(dir, 'nginx.conf'), `load_module ${process.env.DP_MODULE_SO};
pid ${dir}/nginx.pid; error_log ${dir}/error.log; events {}
http { server { listen 127.0.0.1:1; corral_upstream_allow ${allow}; } }
`);
      return spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')],
        { encoding: 'utf8' });
    };
    let r = nginxT('10.0.0.0/8 169.254.0.0/16');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /"corral_upstream_allow": 169\.254\.0\.0\/16: covers link-local/);
    r = nginxT('0.0.0.0/0');
    assert.match(r.stderr, /0\.0\.0\.0\/0: covers unspecified/);
    r = nginxT('10.0.0.0/8 ports=80-90,100-x');
    assert.match(r.stderr, /100-x: not a port/);
    // loopback as a range with ports: every service of the gateway host (issue 25)
    for (const [allow, why] of [
      ['127.0.0.0/8 ::1/128 ports=1024-65535', /"corral_upstream_allow": 127\.0\.0\.0\/8: overlaps loopback \(127\.0\.0\.0\/8\), the gateway host's own services: list a worker's data port there as an exact address/],
      ['127.0.0.1:7001 ::1/128 ports=7001', /"corral_upstream_allow": ::1\/128: overlaps loopback \(::1\/128\)/],
      ['10.0.0.0/8 127.0.0.1/32 ports=7001', /127\.0\.0\.1\/32: overlaps loopback/],
      ['64.0.0.0/2 ports=7001', /64\.0\.0\.0\/2: overlaps loopback \(127\.0\.0\.0\/8\)/],
      ['[::1]', /\[::1\]: must be an IP address and a port/]]) {
      r = nginxT(allow);
      assert.notEqual(r.status, 0, allow);
      assert.match(r.stderr, why, allow);
    }
    assert.equal(nginxT('10.0.0.0/8 fd12::/48 127.0.0.1:7001 [::1]:7001 ports=7001,8000-8100').status, 0);
    assert.equal(nginxT('127.0.0.1:7001').status, 0);
    // corral.conf: corralctl (and corral-api, corral-sched) refuse it, naming the key
    const conf = path.join(dir, 'corral.conf');
    const base = fs.readFileSync(path.join(process.env.CORRAL_RUN, 'corral.conf'), 'utf8');
    for (const [line, why] of [['worker_data_networks = 10.0.0.0/8 fe80::/10', /worker_data_networks: fe80::\/10: covers link-local/],
      ['worker_data_networks = ::ffff:0:0/96', /IPv4-mapped/], ['worker_data_ports = 0-80', /worker_data_ports: 0-80: not a port/],
      ['worker_data_networks = 127.0.0.0/8', /worker_data_networks: 127\.0\.0\.0\/8: overlaps loopback/],
      ['worker_data_networks = 10.0.0.0/8 ::1/128', /worker_data_networks: ::1\/128: overlaps loopback/],
      ['worker_data_addrs = 127.0.0.0/8', /worker_data_addrs: 127\.0\.0\.0\/8: must be an IP address and a port/]]) {
      fs.writeFileSync(conf, `${base}${line}\n`);
      const c = spawnSync(`${process.env.CORRAL_BUILD}/corralctl`, ['-c', conf, 'workspace', 'list'], { encoding: 'utf8' });
      assert.notEqual(c.status, 0, line);
      assert.match(c.stderr + c.stdout, why, line);
    }
  } finally { fs.rmSync(dir, { recursive: true, force: true }); }
});
