// The cost of network isolation, each figure beside a baseline of the same
// run: create-to-running of a Corral sandbox without and with an egress policy
// against plain Engine API creates (default bridge, and with a network of its
// own made first, as workerd does); a 100 MB download through the egress proxy
// against the same download without it; 300 sandboxes on this host, the time
// per create from the first to the last. Every target is a stand-in namespace
// (tests/lib/standins.mjs). Usage: bench_network.mjs OWNER_KEY
import { api, eventually, sleep } from '../lib/corral.mjs';
import { docker, isReadyProxy, sandboxIp, sandboxOf } from '../lib/engine.mjs';
import { startStandins, INET, PORT } from '../lib/standins.mjs';
import { stream as envdStream, unb64 } from '../envd/lib.mjs';

const key = process.argv[2];
const N = Number(process.env.BENCH_CREATES || 30);
const MANY = Number(process.env.BENCH_MANY || 300);
const POOL = Number(process.env.BENCH_POOL || 16); // the workerd's egress_pool (tests/bench/run.sh)
const MB = 100;

async function plainRun(ownNet) {
  const name = `corral-bench-${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
  if (ownNet) {
    const n = await docker('POST', '/networks/create', { Name: name, CheckDuplicate: true, Labels: { 'corral.bench': '1' } });
    if (n.status !== 201) throw new Error(JSON.stringify(n.body));
  }
  const c = await docker('POST', `/containers/create?name=${name}`, { Image: 'corral/base', Cmd: ['sleep', 'infinity'],
    Labels: { 'corral.bench': '1' }, HostConfig: { NanoCpus: 1e8, Memory: 128 * 1024 * 1024, NetworkMode: ownNet ? name : 'bridge' } });
  if (c.status !== 201) throw new Error(JSON.stringify(c.body));
  await docker('POST', `/containers/${c.body.Id}/start`);
  for (let i = 0; i < 200; i++) {
    const s = await docker('GET', `/containers/${c.body.Id}/json`);
    if (s.body.State.Running) return { id: c.body.Id, net: ownNet ? name : null };
  }
  throw new Error('container never ran');
}
async function plainRemove(x) {
  await docker('DELETE', `/containers/${x.id}?force=true`);
  if (x.net) await docker('DELETE', `/networks/${x.net}`);
}

async function corralRun(body = {}) {
  const r = await api('POST', '/v1/sandboxes', { key, body: { template: 'base', timeout: 1200, cpu_cores: 0.1, memory_mb: 64, ...body } });
  if (r.status !== 201) throw new Error(r.raw);
  return r.body;
}
const corralRemove = (sb) => api('DELETE', `/v1/sandboxes/${sb.sandbox_id}`, { key });

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
async function timeEach(n, fn) {
  const t = [], made = [];
  for (let i = 0; i < n; i++) { const s = performance.now(); made.push(await fn()); t.push(performance.now() - s); }
  return { t, made };
}

// Runs cmd in a sandbox through envd on its container address (the worker's hop).
async function run(sb, cmd) {
  const ip = await sandboxIp(sb.sandbox_id);
  const out = { stdout: '' };
  const req = { process: { cmd: '/bin/bash', args: ['-c', cmd] }, stdin: false };
  for await (const m of envdStream({ base: `http://${ip}:49983`, token: sb.envd_access_token }, 'process.Process/Start', req, { user: 'user' })) {
    if (m.event?.data?.stdout) out.stdout += unb64(m.event.data.stdout);
  }
  return out.stdout;
}

// Seconds to fetch url into /dev/null from inside the sandbox (urllib honours HTTP_PROXY).
const DL = (url) => `python3 -c "
import time, urllib.request
t = time.time(); r = urllib.request.urlopen('${url}', timeout=60); n = 0
while True:
    b = r.read(1 << 20)
    if not b: break
    n += len(b)
print(n, time.time() - t)"`;

// The ready proxies of the egress pool running on this bench's workerd (the
// workers the key sees): POOL of them when the pool is full.
async function readyProxies() {
  const workers = (await api('GET', '/v1/workers', { key })).body?.workers || [];
  let n = 0;
  for (const w of workers) {
    const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${w.worker_id}`, 'corral.role=egress-pool'] }));
    n += ((await docker('GET', `/containers/json?filters=${f}`)).body || []).filter(isReadyProxy).length;
  }
  return n;
}

// Kills are answered at once and applied after: the next phase must not run
// beside them (it would time the removals, not the creates), nor beside the
// egress pool's refill (nor find it empty).
async function settled() {
  const f = encodeURIComponent(JSON.stringify({ label: ['corral.sandbox'] }));
  for (let i = 0; i < 240 && (await docker('GET', `/containers/json?all=1&filters=${f}`)).body.length > 0; i++) {
    // sleep: between tries of this loop (240 of them).
    await sleep(500);
  }
  await eventually(async () => (await readyProxies()) >= POOL, { timeout: 180_000, every: 500, what: `the egress pool refilled (${POOL} ready proxies)` });
}

async function creates() {
  const plain = await timeEach(N, () => plainRun(false));
  await Promise.all(plain.made.map(plainRemove));
  const plainNet = await timeEach(N, () => plainRun(true));
  await Promise.all(plainNet.made.map(plainRemove));
  const open = await timeEach(N, () => corralRun());
  await Promise.all(open.made.map(corralRemove));
  await settled();
  const pol = await timeEach(N, () => corralRun({ allowed_domains: ['dl.allowed.test'] }));
  await Promise.all(pol.made.map(corralRemove));
  await settled();
  const p50 = (x) => pct(x.t, 0.5);
  console.log(`create-to-running, ${N} sequential, p50 / p95 (ms):`);
  console.log(`  docker API, default bridge          ${p50(plain).toFixed(0)} / ${pct(plain.t, 0.95).toFixed(0)}`);
  console.log(`  docker API, a network of its own    ${p50(plainNet).toFixed(0)} / ${pct(plainNet.t, 0.95).toFixed(0)}   (+${(p50(plainNet) - p50(plain)).toFixed(0)} ms: what isolation costs dockerd)`);
  console.log(`  corral, no policy                   ${p50(open).toFixed(0)} / ${pct(open.t, 0.95).toFixed(0)}   ratio to docker API ${(p50(open) / p50(plain)).toFixed(2)}`);
  // The first POOL take a ready proxy and network (workerd egress_pool); the rest of a
  // sequential burst find none (replacements wait for a pause) and make their own.
  const pooled = { t: pol.t.slice(0, POOL) }, beyond = { t: pol.t.slice(POOL) };
  console.log(`  corral, egress policy (proxy)       ${p50(pol).toFixed(0)} / ${pct(pol.t, 0.95).toFixed(0)}   +${(p50(pol) - p50(open)).toFixed(0)} ms over no policy, all ${N}`);
  console.log(`    the first ${pooled.t.length} (ready proxy from the pool) ${p50(pooled).toFixed(0)} / ${pct(pooled.t, 0.95).toFixed(0)}   +${(p50(pooled) - p50(open)).toFixed(0)} ms over no policy (goal: <= 150)`);
  if (beyond.t.length) console.log(`    the other ${beyond.t.length} (pool empty: proxy made) ${p50(beyond).toFixed(0)} / ${pct(beyond.t, 0.95).toFixed(0)}   +${(p50(beyond) - p50(open)).toFixed(0)} ms over no policy`);
}

async function download() {
  const open = await corralRun();
  const pol = await corralRun({ allowed_domains: ['dl.allowed.test'] });
  const direct = [], proxied = [];
  for (let i = 0; i < 3; i++) {
    direct.push(Number((await run(open, DL(`http://${INET.addrs[0]}:${PORT}/big.bin`))).split(' ')[1]));
    proxied.push(Number((await run(pol, DL(`http://dl.allowed.test:${PORT}/big.bin`))).split(' ')[1]));
  }
  await corralRemove(open);
  await corralRemove(pol);
  const d = MB / pct(direct, 0.5), p = MB / pct(proxied, 0.5);
  console.log(`${MB} MB download from a stand-in host, median of 3 (MB/s): without proxy ${d.toFixed(0)}, through the egress proxy ${p.toFixed(0)}, ratio ${(p / d).toFixed(2)} (goal > 0.8)`);
}

async function many() {
  const t = [], made = [];
  for (let i = 0; i < MANY; i++) {
    const s = performance.now();
    made.push(await corralRun());
    t.push(performance.now() - s);
  }
  const first = t.slice(0, 20), last = t.slice(-20);
  const avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`${MANY} sandboxes on one host: all created; mean create of the first 20 ${avg(first).toFixed(0)} ms, of the last 20 ${avg(last).toFixed(0)} ms, growth ${((avg(last) / avg(first) - 1) * 100).toFixed(0)} % (goal <= 20 %)`);
  for (let i = 0; i < made.length; i += 10) await Promise.all(made.slice(i, i + 10).map(corralRemove));
  // The benches after this one must not run beside 300 removals.
  const f = encodeURIComponent(JSON.stringify({ label: ['corral.role'] }));
  for (let i = 0; i < 600 && (await docker('GET', `/containers/json?all=1&filters=${f}`)).body.some(sandboxOf); i++) {
    // sleep: between tries of this loop (600 of them).
    await sleep(500);
  }
}

const standins = await startStandins({ bigMb: MB });
try {
  await creates();
  await download();
  await many();
} finally {
  standins.stop();
}
