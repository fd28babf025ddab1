// Issue 29's benchmark (run by tests/bench/bench_tunnel.sh): the same calls on
// a sandbox of the direct worker (workerd) and of the tunnelled one
// (workerd-2), interleaved, so that the ratio tunnel/direct is of one run.
import { readFileSync } from 'node:fs';
import { Sandbox } from '../e2b/sdk.mjs';
import { api, RUN } from '../lib/corral.mjs';

const ROUNDS = Number(process.env.BENCH_TUNNEL_ROUNDS || 300);
const BIG = 100 << 20;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const timed = async (fn) => { const t = performance.now(); await fn(); return performance.now() - t; };
const idOf = (dir) => /worker_id = (\w+)/.exec(readFileSync(`${RUN}/${dir}/worker`, 'utf8'))[1];
const key = process.env.E2B_API_KEY;

// A sandbox on each worker: created until placement has put one on each.
async function oneEach() {
  const want = { direct: idOf('workerd-state'), tunnel: idOf('workerd-2-state') }, got = {}, extra = [];
  for (let i = 0; i < 12 && !(got.direct && got.tunnel); i++) {
    const s = await Sandbox.create('base', { timeoutMs: 600_000 });
    const w = (await api('GET', `/v1/sandboxes/${s.sandboxId}`, { key })).body.worker_id;
    const kind = Object.keys(want).find((k) => want[k] === w);
    if (kind && !got[kind]) got[kind] = s; else extra.push(s);
  }
  for (const s of extra) await s.kill();
  if (!got.direct || !got.tunnel) throw new Error('placement never put a sandbox on each worker');
  return got;
}

const sbx = await oneEach();
const rt = { direct: [], tunnel: [] }, up = { direct: [], tunnel: [] }, down = { direct: [], tunnel: [] };
const blob = Buffer.alloc(BIG, 7);
for (const k of ['direct', 'tunnel']) await sbx[k].commands.run('true'); // warm up
for (let i = 0; i < ROUNDS; i++)
  for (const k of ['direct', 'tunnel']) rt[k].push(await timed(() => sbx[k].commands.run('true')));
for (let i = 0; i < 5; i++)
  for (const k of ['direct', 'tunnel']) {
    up[k].push(await timed(() => sbx[k].files.write('/tmp/big', blob)));
    down[k].push(await timed(async () => {
      const got = await sbx[k].files.read('/tmp/big', { format: 'bytes' });
      if (got.length !== BIG) throw new Error(`read ${got.length} bytes`);
    }));
  }
const mbps = (ms) => (BIG / (1 << 20)) / (pct(ms, 0.5) / 1000);
console.log(`\nworker tunnel (decision 0087) against the direct data port, the real SDK over HTTPS, one run:`);
console.log(`  commands.run("true"), ${ROUNDS} each, interleaved:`);
for (const k of ['direct', 'tunnel'])
  console.log(`    ${k.padEnd(6)}  p50 ${pct(rt[k], 0.5).toFixed(1)} ms   p99 ${pct(rt[k], 0.99).toFixed(1)} ms`);
console.log(`    ratio tunnel/direct p50 ${(pct(rt.tunnel, 0.5) / pct(rt.direct, 0.5)).toFixed(2)}   (goal: < 1.3)`);
console.log(`  100 MB, 5 each (median):`);
for (const k of ['direct', 'tunnel'])
  console.log(`    ${k.padEnd(6)}  write ${mbps(up[k]).toFixed(0)} MB/s   read ${mbps(down[k]).toFixed(0)} MB/s`);
console.log(`    ratio tunnel/direct  write ${(mbps(up.tunnel) / mbps(up.direct)).toFixed(2)}   read ${(mbps(down.tunnel) / mbps(down.direct)).toFixed(2)}   (goal: > 0.7)`);
const rss = (pidFile) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}/status`, 'utf8'))[1]) / 1024;
console.log(`  RSS: corral-tunneld ${rss(`${RUN}/pids/tunneld.pid`).toFixed(1)} MB, workerd (tunnelled) ${rss(`${RUN}/pids/workerd-2.pid`).toFixed(1)} MB, workerd (direct) ${rss(`${RUN}/pids/workerd.pid`).toFixed(1)} MB`);
for (const s of Object.values(sbx)) await s.kill();
