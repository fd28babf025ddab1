// What TLS interception costs (decision 0089): HTTPS GETs on loopback to a
// Node HTTPS server, on one kept-alive connection each way,
//   (a) direct,
//   (b) through corral-egress's plain CONNECT tunnel (a host without rules),
//   (c) through interception with one literal header rule,
// BENCH_EGRESS_N requests each (default 2000), at most BENCH_EGRESS_SECS
// seconds each (default 20). Prints p50/p99 latency and requests per second
// for each, and (c)-(b) at p50. Needs the binary: EGRESS_BIN, or build/.
//   node tests/bench/bench_egress_tls.mjs
import https from 'node:https';
import fs from 'node:fs';
import { makeCA, makeLeaf, httpsHost, startProxy, tunnelAgent, request, tmpDir } from '../egress/fixtures.mjs';

const N = Number(process.env.BENCH_EGRESS_N || 2000);
const CAP_MS = Number(process.env.BENCH_EGRESS_SECS || 20) * 1000;

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

// n sequential GETs on agent's one connection: latencies (ms) and rate.
async function run(label, agent, host, port) {
  await request(agent, host, port, '/warm');
  const lat = [];
  const start = process.hrtime.bigint();
  while (lat.length < N && Number(process.hrtime.bigint() - start) / 1e6 < CAP_MS) {
    const t = process.hrtime.bigint();
    const r = await request(agent, host, port, `/r${lat.length}`);
    if (r.status !== 200) throw new Error(`${label}: status ${r.status}: ${r.body}`);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  agent.destroy();
  lat.sort((x, y) => x - y);
  const res = { label, n: lat.length, p50: pct(lat, 50), p99: pct(lat, 99), rps: lat.length / secs };
  console.log(`${label.padEnd(34)} n=${String(res.n).padStart(5)}  p50 ${res.p50.toFixed(3)} ms  ` +
    `p99 ${res.p99.toFixed(3)} ms  ${res.rps.toFixed(0)} req/s`);
  return res;
}

const dir = tmpDir();
const testCA = makeCA(dir, 'bench-roots');
const icptCA = makeCA(dir, 'bench-interception');
const api = await httpsHost('api', '127.0.0.2', makeLeaf(dir, testCA, 'api', ['api.test', 'plain.test']));
const proxy = await startProxy(dir, 'bench', {
  sandbox: 'bench-egress-tls', ca_cert: icptCA.cert, ca_key: icptCA.key, roots: testCA.cert,
  policy: { rules: { 'api.test': [{ headers: { 'X-Bench': 'literal' } }] } },
}, { 'api.test': api.addr, 'plain.test': api.addr });

try {
  console.log(`corral-egress TLS interception, loopback, one kept-alive connection, ${N} GETs (cap ${CAP_MS / 1000}s)`);
  const direct = new https.Agent({ keepAlive: true, maxSockets: 1, ca: fs.readFileSync(testCA.cert),
    servername: 'api.test' });
  await run('(a) direct', direct, api.addr, api.port);
  const b = await run('(b) CONNECT tunnel, no rules', tunnelAgent(proxy.port, testCA.cert), 'plain.test', api.port);
  const c = await run('(c) intercepted, one header rule', tunnelAgent(proxy.port, icptCA.cert), 'api.test', api.port);
  if (!api.requests.filter((r) => r.url.startsWith('/r')).slice(-1)[0].headers['x-bench'])
    throw new Error('(c) did not carry the rule header');
  console.log(`interception cost at p50, (c)-(b): ${(c.p50 - b.p50).toFixed(3)} ms`);
} finally {
  proxy.proc.kill('SIGTERM');
  api.server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
