// Create-to-running through Corral (HTTPS -> nginx -> corral-api -> workerd ->
// dockerd) against a plain create+start+wait-running of the same image through
// the Engine API, in the same run; then 20 concurrent of each; then workerd's
// RSS idle and with 50 sandboxes. Prints figures and ratios.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { api } from '../lib/corral.mjs';

const [key, workerdPid] = [process.argv[2], process.argv[3]];
const N = Number(process.env.BENCH_CREATES || 50);

function docker(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: '/var/run/docker.sock', method, path,
      headers: body ? { 'Content-Type': 'application/json' } : {} }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: data ? JSON.parse(data) : null }));
    });
    req.on('error', reject);
    if (body) req.write(JSON.stringify(body));
    req.end();
  });
}

async function plainRun() {
  const c = await docker('POST', '/containers/create', { Image: 'corral/base', Cmd: ['sleep', 'infinity'],
    Labels: { 'corral.bench': '1' }, HostConfig: { NanoCpus: 1e8, Memory: 128 * 1024 * 1024 } });
  if (c.status !== 201) throw new Error(JSON.stringify(c.body));
  await docker('POST', `/containers/${c.body.Id}/start`);
  for (let i = 0; i < 100; i++) {
    const s = await docker('GET', `/containers/${c.body.Id}/json`);
    if (s.body.State.Running) return c.body.Id;
  }
  throw new Error('container never ran');
}
const plainRemove = (id) => docker('DELETE', `/containers/${id}?force=true`);

async function corralRun() {
  const r = await api('POST', '/v1/sandboxes', { key, body: { template: 'base', timeout: 600, cpu_cores: 0.1, memory_mb: 128 } });
  if (r.status !== 201) throw new Error(r.raw);
  return r.body.sandbox_id;
}
const corralRemove = (id) => api('DELETE', `/v1/sandboxes/${id}`, { key });

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
async function timeEach(n, fn) {
  const t = [], ids = [];
  for (let i = 0; i < n; i++) { const s = performance.now(); ids.push(await fn()); t.push(performance.now() - s); }
  return { t, ids };
}
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${workerdPid}/status`, 'utf8'))[1]);

const idle = rss();
const plain = await timeEach(N, plainRun);
await Promise.all(plain.ids.map(plainRemove));
const corral = await timeEach(N, corralRun);
const busy = rss();
// envd idle in one of those sandboxes: PID 1 of its container, seen from the host.
const ctrs = await docker('GET', '/containers/json');
const one = ctrs.body.find((c) => c.Names.some((n) => n.includes(corral.ids[0])));
const envdPid = (await docker('GET', `/containers/${one.Id}/json`)).body.State.Pid;
const envdRss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${envdPid}/status`, 'utf8'))[1]);
await Promise.all(corral.ids.map(corralRemove));
console.log(`create-to-running, ${N} sequential (ms):`);
console.log(`  corral      p50 ${pct(corral.t, 0.5).toFixed(1)}  p95 ${pct(corral.t, 0.95).toFixed(1)}`);
console.log(`  docker API  p50 ${pct(plain.t, 0.5).toFixed(1)}  p95 ${pct(plain.t, 0.95).toFixed(1)}`);
console.log(`  ratio p50 ${(pct(corral.t, 0.5) / pct(plain.t, 0.5)).toFixed(2)}  p95 ${(pct(corral.t, 0.95) / pct(plain.t, 0.95)).toFixed(2)}  (goal < 1.3)`);

let s = performance.now();
const pids = await Promise.all(Array.from({ length: 20 }, plainRun));
const plainWall = performance.now() - s;
await Promise.all(pids.map(plainRemove));
s = performance.now();
const cids = await Promise.all(Array.from({ length: 20 }, corralRun));
const corralWall = performance.now() - s;
await Promise.all(cids.map(corralRemove));
console.log(`20 concurrent creates, wall time: corral ${corralWall.toFixed(0)} ms, docker API ${plainWall.toFixed(0)} ms, ratio ${(corralWall / plainWall).toFixed(2)}`);
console.log(`envd RSS in an idle sandbox: ${(envdRss / 1024).toFixed(1)} MB (goal < 5 MB)`);
console.log(`workerd RSS: idle ${(idle / 1024).toFixed(1)} MB (goal < 20 MB); with ${N} sandboxes ${(busy / 1024).toFixed(1)} MB, ${((busy - idle) / N).toFixed(1)} KB per sandbox (goal < 100 KB)`);
