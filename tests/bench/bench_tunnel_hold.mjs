// Issue 29's memory figure (run by tests/bench/bench_tunnel.sh after the
// round trips): corral-tunneld holding 100 worker tunnels with 1,000 open
// streams, and a real workerd's side of 1,000 streams through its tunnel.
// The 100 workers are played by this process (tests/lib/tunnel_client.mjs:
// a real handshake each, the upgrade through nginx, an HTTP/2 echo for the
// streams); each stream is a TCP connection to the daemon's port for its
// worker, as the gateway makes one per request, with 1 KiB echoed through it
// so that it is open end to end. RSS is read from /proc before and after.
import net from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { corralctl, redis, RUN } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { upgrade, echoTunnel } from '../lib/tunnel_client.mjs';
import { until } from '../lib/poll.mjs';

const TUNNELS = Number(process.env.BENCH_TUNNEL_HOLD || 100);
const STREAMS = Number(process.env.BENCH_TUNNEL_STREAMS || 1000);
const pidOf = (name) => readFileSync(`${RUN}/pids/${name}.pid`, 'utf8').trim();
const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const record = (wid) => redis('GET', `corral:{ws:}:worker:${wid}:tunnel`);

// n connections to addr ("127.0.0.1:port"), each with 1 KiB echoed back.
async function streams(addr, n) {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  const open = [];
  for (let i = 0; i < n; i++) {
    open.push(await new Promise((resolve, reject) => {
      const c = net.connect({ host, port }, () => c.write(Buffer.alloc(1024, 1)));
      let got = 0;
      c.on('data', (d) => { got += d.length; if (got >= 1024) resolve(c); });
      c.on('error', reject);
      c.setTimeout(10_000, () => reject(new Error(`stream ${i} to ${addr}: no echo`)));
    }));
  }
  for (const c of open) c.setTimeout(0);
  return open;
}

// A stream into workerd's data port: the daemon's port for workerd-2, one
// request head's worth of nothing yet (the data port waits for it), so the
// stream is open on workerd's side as a connection to its data port.
async function idleStreams(addr, n) {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  const open = [];
  for (let i = 0; i < n; i++) {
    open.push(await new Promise((resolve, reject) => {
      const c = net.connect({ host, port }, () => resolve(c));
      c.on('error', reject);
    }));
  }
  return open;
}

const tunneld = pidOf('tunneld'), wd2 = pidOf('workerd-2');
const before = { tunneld: rssMB(tunneld), workerd: rssMB(wd2) };
const fdsBefore = readdirSync(`/proc/${wd2}/fd`).length;
const token = corralctl('join-token', 'create').token;
const held = [];
for (let i = 0; i < TUNNELS; i++) {
  const w = new TestWorker(token, { handshakeExtra: { tunnel: true, data_addr: undefined }, name: `bench-tunnel-${i}` });
  await w.handshake();
  const r = await upgrade(w.headers());
  if (r.status !== 101) throw new Error(`tunnel ${i}: ${r.head}`);
  held.push({ w, t: echoTunnel(r.socket) });
}
for (const h of held) {
  if (!(await until(() => record(h.w.id) !== '', { timeoutMs: 10_000, everyMs: 50 }))) throw new Error(`${h.w.id}: no record`);
  h.addr = record(h.w.id);
}
const withTunnels = rssMB(tunneld);
const conns = [];
for (let i = 0; i < STREAMS; i++) conns.push(...(await streams(held[i % TUNNELS].addr, 1)));
const opened = held.reduce((n, h) => n + h.t.state.streams, 0);
if (opened < STREAMS) throw new Error(`only ${opened} of ${STREAMS} streams reached the workers`);
const withStreams = rssMB(tunneld);
// workerd's side: STREAMS connections through its own tunnel into its data port
const wdConns = await idleStreams(record(/worker_id = (\w+)/.exec(readFileSync(`${RUN}/workerd-2-state/worker`, 'utf8'))[1]), STREAMS);
// each stream becomes two descriptors of workerd's (its tunnel's end and
// the data port's accepted one): counted, not slept for
const fds = () => readdirSync(`/proc/${wd2}/fd`).length;
if (!(await until(() => fds() >= fdsBefore + 2 * STREAMS, { timeoutMs: 20_000, everyMs: 100 }))) {
  throw new Error(`workerd holds ${fds() - fdsBefore} more descriptors, not ${2 * STREAMS}`);
}
const wdAfter = rssMB(wd2), tunneldAfter = rssMB(tunneld);
console.log(`\ncorral-tunneld holding ${TUNNELS} simulated worker tunnels and ${STREAMS} open streams (RSS):`);
console.log(`  at rest (1 tunnel)      ${before.tunneld.toFixed(1)} MB`);
console.log(`  ${TUNNELS} tunnels             ${withTunnels.toFixed(1)} MB   (${((withTunnels - before.tunneld) * 1024 / TUNNELS).toFixed(0)} KB a tunnel)`);
console.log(`  + ${STREAMS} streams          ${withStreams.toFixed(1)} MB   (${((withStreams - withTunnels) * 1024 / STREAMS).toFixed(1)} KB a stream)`);
console.log(`  + ${STREAMS} more on workerd-2's ${tunneldAfter.toFixed(1)} MB`);
console.log(`workerd (tunnelled) with ${STREAMS} streams through its tunnel: ${before.workerd.toFixed(1)} -> ${wdAfter.toFixed(1)} MB (${((wdAfter - before.workerd) * 1024 / STREAMS).toFixed(1)} KB a stream)`);
for (const c of [...conns, ...wdConns]) c.destroy();
for (const h of held) h.t.close();
