// Idle streams held through the gateway (issue 12): BENCH_IDLE_STREAMS (1,000)
// Connect server streams (process.Process/Connect to a `sleep` in each sandbox:
// an idle stream that costs envd a thread and no inotify instance; watchDir
// would need one inotify instance per stream, and the host allows 128 per user)
// spread over BENCH_IDLE_SANDBOXES (20) sandboxes, all through the gateway,
// opened with node:http2 on sessions of at most 100 streams each: the SDK
// cannot hold them (undici keeps every stream of a process on one HTTP/2
// connection, at most 100 at once, and queues the rest until they time out).
// Prints the RSS of nginx (master and workers), workerd and the sandboxes'
// envds (summed) before and while the streams are held, and commands.run("true")
// p50/p99 before and while held. Bounded: every stream ends with its
// Connect-Timeout-Ms deadline, every sandbox with its timeout, the whole run
// within BENCH_IDLE_MAX_S; the streams are closed and the sandboxes killed at
// the end, pass or fail.
// Needs E2B_API_URL, E2B_API_KEY, E2B_SANDBOX_URL, NODE_EXTRA_CA_CERTS, CORRAL_RUN.
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { Sandbox } from '../e2b/sdk.mjs';
import { pct } from '../lib/churn.mjs';
import { sleep } from '../lib/poll.mjs';
import { envdPidOf, rssKb, stackDaemons } from '../lib/procstat.mjs';

const STREAMS = Number(process.env.BENCH_IDLE_STREAMS || 1000);
const SANDBOXES = Number(process.env.BENCH_IDLE_SANDBOXES || 20);
const MAX_S = Number(process.env.BENCH_IDLE_MAX_S || 300);
const RUNS = Number(process.env.BENCH_IDLE_RUNS || 200);
const RUN = process.env.CORRAL_RUN;
const PER_SESSION = 100;
const gone = new Set(); // pids that ended during the run (a crash shows here)
if (!RUN) throw new Error('CORRAL_RUN (the stack state dir) must be set');

const watchdog = setTimeout(() => {
  console.error(`bench_idle_streams: not done within ${MAX_S} s`);
  process.exit(1);
}, MAX_S * 1000);

const inBatches = async (items, size, fn) => {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
};

async function runLatency(sbx) {
  const t = [];
  for (let i = 0; i < 10; i++) await sbx.commands.run('true');
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await sbx.commands.run('true');
    t.push(performance.now() - s);
  }
  return { p50: pct(t, 0.5), p99: pct(t, 0.99) };
}

// workerd's pid as it logged it when its data port came up (the process that
// serves the streams), rather than the pid file of the command that started it.
function workerdPid() {
  const lines = readFileSync(`${RUN}/log/workerd.log`, 'utf8').split('\n').filter((l) => l.includes('data port listening'));
  if (lines.length === 0) throw new Error(`${RUN}/log/workerd.log: workerd never said its data port was up`);
  return JSON.parse(lines[lines.length - 1]).pid;
}

// MB of resident memory: nginx (master and workers), workerd, and the envds summed.
function memory(envdPids) {
  const daemons = stackDaemons(RUN);
  const alive = (p) => { try { return rssKb(p); } catch { gone.add(p); return 0; } };
  const sum = (pids) => pids.reduce((a, p) => a + alive(p), 0) / 1024;
  return {
    nginx: sum(daemons.filter((d) => d.name.startsWith('nginx')).map((d) => d.pid)),
    workerd: sum([workerdPid()]),
    envd: sum(envdPids),
  };
}

// One Connect server stream to process `pid` of `sbx`, through the gateway on
// `session`: resolves with the request once envd's start event has arrived.
function connectStream(session, sbx, pid, holdMs) {
  const json = Buffer.from(JSON.stringify({ process: { pid } }));
  const envelope = Buffer.alloc(5 + json.length);
  envelope.writeUInt32BE(json.length, 1);
  json.copy(envelope, 5);
  const req = session.request({
    ':method': 'POST', ':path': '/process.Process/Connect',
    'content-type': 'application/connect+json', 'connect-protocol-version': '1',
    'connect-timeout-ms': String(holdMs), 'keepalive-ping-interval': '50',
    'e2b-sandbox-id': sbx.sandboxId, 'e2b-sandbox-port': '49983',
    'x-access-token': sbx.envdAccessToken, authorization: `Basic ${Buffer.from('user:').toString('base64')}`,
  });
  return new Promise((ok, fail) => {
    req.on('response', (h) => { if (h[':status'] !== 200) fail(new Error(`Connect answered ${h[':status']}`)); });
    req.once('data', () => ok(req));
    req.on('error', fail);
    req.end(envelope);
  });
}

const holdMs = MAX_S * 1000;
const sessions = [];
const sandboxes = [];
const handles = [];
try {
  await inBatches([...Array(SANDBOXES).keys()], 5, async () => {
    sandboxes.push(await Sandbox.create('base', { timeoutMs: holdMs + 60_000 }));
  });
  const envdPids = await Promise.all(sandboxes.map((s) => envdPidOf(s.sandboxId)));
  const sleepers = await Promise.all(sandboxes.map((s) =>
    s.commands.run(`sleep ${MAX_S}`, { background: true, timeoutMs: holdMs })));
  const before = memory(envdPids);
  const latBefore = await runLatency(sandboxes[0]);

  const started = performance.now();
  const targets = [...Array(STREAMS).keys()].map((i) => i % SANDBOXES);
  for (let i = 0; i < STREAMS; i += PER_SESSION) {
    const session = http2.connect(process.env.E2B_SANDBOX_URL);
    session.on('error', () => {});
    sessions.push(session);
    handles.push(...(await Promise.all(targets.slice(i, i + PER_SESSION).map((t) =>
      connectStream(session, sandboxes[t], sleepers[t].pid, holdMs)))));
  }
  const openS = (performance.now() - started) / 1000;
  // sleep: time is what is measured: the streams held idle 2 s, then their cost is read.
  await sleep(2000);
  const held = memory(envdPids);
  const latHeld = await runLatency(sandboxes[0]);
  const stillOpen = handles.filter((h) => !h.closed && !h.destroyed).length;

  const row = (name, b, h) => `  ${name.padEnd(16)} ${b.toFixed(1).padStart(8)} ${h.toFixed(1).padStart(8)} ${(h - b >= 0 ? '+' : '') + (h - b).toFixed(1)}`;
  console.log(`${STREAMS} idle Connect streams through the gateway to ${SANDBOXES} sandboxes, ${sessions.length} HTTP/2 connections ` +
    `(opened in ${openS.toFixed(1)} s, ${stillOpen} still open after 2 s):`);
  console.log(`  RSS (MB)          before     held   delta`);
  console.log(row('nginx (all)', before.nginx, held.nginx));
  console.log(row('workerd', before.workerd, held.workerd));
  console.log(row(`envd (${SANDBOXES}, sum)`, before.envd, held.envd));
  console.log(`  commands.run("true") ms, ${RUNS} runs: before p50 ${latBefore.p50.toFixed(2)} p99 ${latBefore.p99.toFixed(2)}` +
    `   held p50 ${latHeld.p50.toFixed(2)} p99 ${latHeld.p99.toFixed(2)}`);
  if (gone.size > 0) console.log(`  gone during the run: pids ${[...gone].join(' ')}`);
  if (stillOpen !== STREAMS || gone.size > 0) process.exitCode = 1;
} finally {
  handles.forEach((h) => h.close());
  sessions.forEach((s) => s.close());
  await Promise.all(sandboxes.map((s) => s.kill().catch(() => {})));
  clearTimeout(watchdog);
}
