// A worker out of file descriptors must say so and get no more sandboxes.
//
// A second workerd (the stack's own keeps serving the fleet) is enrolled in a
// workspace of its own under a low descriptor limit (prlimit --nofile=LIMIT).
// While it is healthy a create of that workspace lands on it (it is the least
// loaded worker the workspace can use). Then data-plane connections to its
// data port, each a request whose head never completes, are opened and kept
// topped up until it has no descriptor left and accept(2) fails. From then on:
//  - it must say so itself: GET /v1/workers shows it still "alive" (its
//    heartbeats go on over the connection it has) with "healthy": false and a
//    "problem" naming the descriptors. A worker that merely goes silent and is
//    declared dead fails this: that takes a lease and strands its sandboxes;
//  - a create of that workspace must not be placed on it: it lands on the
//    fleet's worker (201), or is refused at once with a clear 503/409; never a
//    504 after waiting on a worker that cannot make it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { appendFileSync, openSync, readFileSync, rmSync } from 'node:fs';
import { api, eventually, newWorkspace, corralctl } from '../lib/corral.mjs';
import { workerdFiles, enrolledAs, workerView, removeLabelled, docker } from '../workerd/helpers.mjs';
import { fdCount } from '../lib/procstat.mjs';
import { removalsDone } from '../lib/churn.mjs';

const RUN = process.env.CORRAL_RUN;
const BIN = process.env.CORRAL_BUILD;
const LIMIT = Number(process.env.SOAK_FD_LIMIT || 160);

let ws, files, proc, wid, exited, flood;
const made = [];

const healthy = (w) => w?.state === 'alive' && w.healthy === true && w.problem === '';
const saysFdTrouble = (w) => w?.state === 'alive' && w.healthy === false && /open files|file descriptors/i.test(w.problem || '');
const logText = () => readFileSync(files.log, 'utf8');

// Opens connections to the data port that send half a request head and wait,
// and keeps opening them while the worker has descriptors left (each one holds
// a descriptor and a thread in workerd until its 30 s head timeout).
function startFlood(addr) {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  const socks = new Set();
  let opened = 0, stopped = false;
  const open = () => {
    const s = net.connect(port, host);
    s.on('error', () => {});
    s.on('close', () => socks.delete(s));
    s.write('GET /health HTTP/1.1\r\nHost: sandbox\r\n');
    socks.add(s);
    opened++;
  };
  const tick = setInterval(() => {
    if (stopped) return;
    let fds;
    try { fds = fdCount(proc.pid); } catch { return; }
    // Past the limit too: what waits in the listen backlog makes accept fail.
    const want = Math.max(10, LIMIT - fds + 10);
    for (let i = 0; i < want && socks.size < LIMIT * 3; i++) open();
  }, 250);
  return {
    get opened() { return opened; },
    stop() { stopped = true; clearInterval(tick); for (const s of socks) s.destroy(); socks.clear(); },
  };
}

before(async () => {
  ws = newWorkspace();
  const token = corralctl('join-token', 'create', '--workspace', ws.id).token;
  files = workerdFiles({ url: process.env.CORRAL_URL, ca: process.env.NODE_EXTRA_CA_CERTS, token });
  const out = openSync(files.log, 'a');
  proc = spawn('prlimit', [`--nofile=${LIMIT}:${LIMIT}`, `${BIN}/workerd`, '-c', files.conf], { stdio: ['ignore', out, out] });
  exited = new Promise((ok) => {
    proc.on('exit', (code, signal) => ok({ code, signal }));
    proc.on('error', (error) => ok({ error })); // prlimit or workerd missing
  });
  // For tests/soak/run.sh's cleanup, should this process die before after() runs.
  appendFileSync(`${RUN}/extra-workerd.pids`, `${proc.pid}\n`);
  wid = await eventually(() => enrolledAs(files.log)[0], { timeout: 30000, what: `enrolment (${files.log})` });
  appendFileSync(`${RUN}/extra-workers`, `${wid}\n`);
});

after(async () => {
  flood?.stop();
  for (const id of made) await api('DELETE', `/v1/sandboxes/${id}`, { key: ws.member }).catch(() => {});
  if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  await exited;
  if (wid) {
    await removeLabelled(`corral.worker=${wid}`);
    const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${wid}`] }));
    for (const n of (await docker('GET', `/networks?filters=${f}`)).body || []) await docker('DELETE', `/networks/${n.Id}`);
  }
  if (files) rmSync(files.dir, { recursive: true, force: true });
});

test(`a healthy workerd under --nofile=${LIMIT} takes its workspace's creates`, { timeout: 90000 }, async () => {
  const limits = readFileSync(`/proc/${proc.pid}/limits`, 'utf8');
  assert.match(limits, new RegExp(`Max open files\\s+${LIMIT}\\s+${LIMIT}`), 'prlimit did not apply');
  const view = await workerView(ws, wid);
  assert.ok(healthy(view), `worker should be healthy before the flood: ${JSON.stringify(view)}`);
  const r = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', timeout: 120 } });
  assert.equal(r.status, 201, r.raw);
  made.push(r.body.sandbox_id);
  assert.equal(r.body.worker_id, wid, 'the create went elsewhere: this test could not tell a healthy worker from an unhealthy one');
  assert.equal((await api('DELETE', `/v1/sandboxes/${r.body.sandbox_id}`, { key: ws.member })).status, 204);
  assert.equal(await removalsDone([wid], { timeoutMs: 30000 }), 0, 'the sandbox was not removed');
});

test('data-plane connections exhaust its descriptors', { timeout: 60000 }, async () => {
  flood = startFlood(files.dataAddr);
  await eventually(() => /dataport: accept: Too many open files/.test(logText()),
    { timeout: 30000, what: `workerd (pid ${proc.pid}) to run out of descriptors` });
  console.log(`# flood: ${flood.opened} connections opened; workerd holds ${fdCount(proc.pid)} fds of ${LIMIT}`);
});

test('the worker reports itself unhealthy: GET /v1/workers shows it alive, healthy false, the problem named', { timeout: 60000 }, async () => {
  let last;
  try {
    await eventually(async () => saysFdTrouble(last = await workerView(ws, wid)), { timeout: 20000, every: 500, what: 'unhealthy' });
  } catch {
    assert.fail(`20 s after it ran out of fds GET /v1/workers shows ${last?.state === 'alive' ? 'it healthy' : 'it gone silent, not reporting'}: ${JSON.stringify(last)}`);
  }
  console.log(`# worker view: ${JSON.stringify(last)}`);
});

test('no create is placed on it: 201 elsewhere or a clear 503/409, never a 504', { timeout: 120000 }, async () => {
  const results = await Promise.all([0, 1, 2].map(async () => {
    const t = performance.now();
    const r = await api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', timeout: 120 } });
    if (r.body?.sandbox_id) made.push(r.body.sandbox_id);
    return { status: r.status, ms: Math.round(performance.now() - t), worker: r.body?.worker_id, raw: r.raw.slice(0, 300) };
  }));
  console.log(`# creates: ${JSON.stringify(results.map(({ raw, ...x }) => x))}`);
  for (const r of results) {
    assert.notEqual(r.status, 504, `a create waited on the exhausted worker and timed out: ${r.raw}`);
    assert.ok([201, 409, 503].includes(r.status), `create answered ${r.status}: ${r.raw}`);
    if (r.status === 201) assert.notEqual(r.worker, wid, `a create was placed on the exhausted worker: ${r.raw}`);
  }
});
