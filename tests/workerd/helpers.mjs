// Helpers for workerd's tests: real dockerd (Engine API over its unix socket,
// with node:http), real workerd processes, bounded waits.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, chmodSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, corralctl, eventually, redis } from '../lib/corral.mjs';
import { docker, SOCK } from '../lib/engine.mjs';
import { sleep } from '../lib/poll.mjs';
import { listedDataPort } from '../lib/data_ports.mjs';

export { docker, SOCK };
import { stream as envdStream, unary as envdUnary, unb64 } from '../envd/lib.mjs';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const WORKERD = process.env.WORKERD_BIN || `${ROOT}build/bin/workerd`;
// envd is static and built without sanitizers: always the one next to the plain build.
export const ENVD = process.env.ENVD_BIN || `${ROOT}build/bin/envd`;

// Containers carrying a label (all states).
export async function containersLabelled(...labels) {
  const f = encodeURIComponent(JSON.stringify({ label: labels }));
  const r = await docker('GET', `/containers/json?all=1&filters=${f}`);
  if (r.status !== 200) throw new Error(`list: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function inspect(id) {
  const r = await docker('GET', `/containers/${id}/json`);
  return r.status === 200 ? r.body : null;
}

// Containers, then networks (the egress pool makes networks ahead of need).
export async function removeLabelled(...labels) {
  for (const c of await containersLabelled(...labels)) await docker('DELETE', `/containers/${c.Id}?force=1`);
  const f = encodeURIComponent(JSON.stringify({ label: labels }));
  for (const n of (await docker('GET', `/networks?filters=${f}`)).body || []) await docker('DELETE', `/networks/${n.Id}`);
}

export { sleep };

// Each workerd serves its own data port: one of those the stack lists for
// the gateway (run.sh, decision 0061), in turn.

// A config file and token file for one workerd; returns paths.
export function workerdFiles({ url, ca, token, extra = '' }) {
  const dir = mkdtempSync(join(tmpdir(), 'corral-wd-'));
  const dataAddr = `127.0.0.1:${listedDataPort()}`;
  writeFileSync(`${dir}/token`, `${token}\n`);
  chmodSync(`${dir}/token`, 0o600);
  writeFileSync(`${dir}/workerd.conf`, [
    `control_url = ${url}`, `ca_file = ${ca}`, `join_token_file = ${dir}/token`,
    `state_dir = ${dir}/state`, `docker_socket = ${SOCK}`, `data_addr = ${dataAddr}`,
    'slots = 8', 'cpu_cores = 4', 'memory_mb = 4096', 'backoff_max_ms = 2000',
    `envd_bin = ${ENVD}`, 'template.base = corral/base', 'template.noimg = corral/no-such-image',
    // No warm pool unless a test asks for one: most count this worker's
    // containers and networks (the stack's own workerd keeps the default).
    ...(extra.includes('warm_pool') ? [] : ['warm_pool =']),
    extra, ''].join('\n'));
  return { dir, conf: `${dir}/workerd.conf`, token: `${dir}/token`, log: `${dir}/workerd.log`, dataAddr };
}

// Starts workerd; its log goes to files.log. Returns {proc, exited (promise)}.
export function startWorkerd(files, args = []) {
  const out = openSync(files.log, 'a');
  const proc = spawn(WORKERD, ['-c', files.conf, ...args], { stdio: ['ignore', out, out] });
  const exited = new Promise((ok) => proc.on('exit', (code, signal) => ok({ code, signal })));
  return { proc, exited };
}

// Runs workerd expecting a refusal: {code, stderr}.
export function runToExit(args, timeoutMs = 20000) {
  return new Promise((ok, fail) => {
    const proc = spawn(WORKERD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (c) => { err += c; });
    const t = setTimeout(() => { proc.kill('SIGKILL'); fail(new Error(`workerd did not exit: ${err}`)); }, timeoutMs);
    proc.on('exit', (code) => { clearTimeout(t); ok({ code, stderr: err }); });
  });
}

export async function stopWorkerd(w, signal = 'SIGTERM') {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return w.exited;
  w.proc.kill(signal);
  return w.exited;
}

// dockerd must answer: a test that cannot reach it fails, it never skips.
export async function requireDocker() {
  const r = await docker('GET', '/_ping').catch((e) => { throw new Error(`dockerd unreachable on ${SOCK}: ${e.message}`); });
  if (r.status !== 200) throw new Error(`dockerd /_ping answered ${r.status}`);
  const img = await docker('GET', '/images/corral%2Fbase/json');
  if (img.status !== 200) throw new Error('image corral/base missing: run tests/lib/docker.sh ensure-image');
}

// ---- workerd against the real stack (conf/stack.sh, started by run.sh) ----
// Join tokens come from corralctl, sandboxes from the native API; Redis is only
// ever read, to observe what the control plane holds.

const started = [];

// Starts a workerd enrolled in workspace ws (owner/member keys from newWorkspace).
export async function stackWorker(ws, { extra = '', args = [] } = {}) {
  await requireDocker();
  const token = corralctl('join-token', 'create', '--workspace', ws.id).token;
  const files = workerdFiles({ url: process.env.CORRAL_URL, ca: process.env.NODE_EXTRA_CA_CERTS, token, extra });
  const s = { ws, files, args, wd: startWorkerd(files, args) };
  started.push(s);
  s.id = await eventually(() => enrolledAs(files.log)[0], { timeout: 30000, what: `workerd enrolment (${files.log})` });
  return s;
}

// Worker ids this workerd enrolled as, in order.
export const enrolledAs = (log) => [...readFileSync(log, 'utf8').matchAll(/enrolled as (?:new )?worker (\S+)/g)].map((m) => m[1]);
export const logOf = (s) => readFileSync(s.files.log, 'utf8');
// workerd logs one JSON object per line (decision 0046); a line that is not
// one (a sanitizer's report) is kept as its msg.
export const logLines = (text) => text.split('\n').filter(Boolean)
  .map((t) => { try { return JSON.parse(t); } catch { return { msg: t }; } });
// The messages of the lines about one sandbox (of one tier when given), one a line.
export const sandboxLog = (s, sbid, tier) => logLines(logOf(s))
  .filter((l) => l.sandbox === sbid && (!tier || l.tier === tier)).map((l) => l.msg).join('\n');
export function restartWorker(s, args = s.args) { s.wd = startWorkerd(s.files, args); return s.wd; }

// Kills every workerd the file started and removes the containers they made.
export async function cleanupWorkers() {
  for (const s of started.splice(0)) {
    await stopWorkerd(s.wd, 'SIGKILL');
    for (const id of new Set([s.id, ...enrolledAs(s.files.log)])) await removeLabelled(`corral.worker=${id}`);
    // CORRAL_KEEP_WD=1 keeps its config, state and log, for a post-mortem.
    if (!process.env.CORRAL_KEEP_WD) rmSync(s.files.dir, { recursive: true, force: true });
  }
}

export const createSb = (ws, body = {}) => api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', ...body } });
export const getSb = (ws, id) => api('GET', `/v1/sandboxes/${id}`, { key: ws.member });
export const deleteSb = (ws, id) => api('DELETE', `/v1/sandboxes/${id}`, { key: ws.member });
export const ctrsOf = (wid, sbid) => containersLabelled(`corral.worker=${wid}`, ...(sbid ? [`corral.sandbox=${sbid}`] : []));
export async function workerView(ws, wid) {
  const r = await api('GET', '/v1/workers', { key: ws.member });
  if (r.status !== 200) throw new Error(`GET /v1/workers: ${r.status} ${r.raw}`);
  return wid ? r.body.workers.find((w) => w.worker_id === wid) : r.body.workers;
}

// Observation only: commands of a worker delivered and not yet acknowledged.
export function pendingCommands(ws, wid) {
  const out = redis('XPENDING', `corral:{ws:${ws.id}}:worker:${wid}:cmds`, 'workerd');
  return Number(out.split('\n')[0]) || 0;
}

// Observation only: commands on a worker's stream, delivered or not, not yet
// acknowledged (an acknowledged one is deleted from it).
export const queuedCommands = (ws, wid) => Number(redis('XLEN', `corral:{ws:${ws.id}}:worker:${wid}:cmds`));

// Waits for n fresh lease renewals from now. n = 1: a heartbeat that just
// began, the point from which a pause of the worker is safe for lease_ms minus
// the margin. n = 2: the first heartbeat after the call has been applied (a
// heartbeat renews, then applies its reports) and, as a long-poll is shorter
// than a third of the lease (tests/workerd/run.sh; else the lease thread
// renews meanwhile), answered: the second began after its answer.
export async function freshLease(ws, wid, n = 1) {
  const key = `corral:{ws:${ws.id}}:worker:${wid}`;
  let last = redis('HGET', key, 'lease_until');
  let seen = 0;
  return eventually(() => {
    const now = redis('HGET', key, 'lease_until');
    if (now !== last) { seen++; last = now; }
    return seen >= n;
  }, { timeout: 10000 * n, every: n > 1 ? 100 : 10, what: n > 1 ? `${n} heartbeats of worker ${wid}` : 'a heartbeat' });
}

// Waits for a long-poll of worker wid to begin waiting at the control plane
// (each takes a new poll_seq: store/command_poll.c). From then until its
// poll_ms, a command queued for the worker goes into that poll's answer: the
// point at which to freeze a worker (SIGSTOP) that must receive one. A
// heartbeat is not enough: it may come from the main thread while the
// poller thread is between two polls (decision 0084).
export async function pollBegan(ws, wid) {
  const key = `corral:{ws:${ws.id}}:worker:${wid}`;
  const last = redis('HGET', key, 'poll_seq');
  return eventually(() => redis('HGET', key, 'poll_seq') !== last,
    { timeout: 10000, every: 5, what: `a long-poll of worker ${wid} waiting` });
}

// ---- envd inside a sandbox, reached on the container's bridge address ----
// Every native sandbox is secure: the token defaults to the one the control plane derives.
export async function envdOf(wid, sbid, token = envdToken(sbid)) {
  // By name: a claimed warm sandbox carries its warm id's labels, and gets
  // its sandbox's name just after its create is answered (decision 0082).
  const info = await eventually(() => inspect(`corral-${sbid}-${wid}`),
    { timeout: 10_000, what: `a container named for sandbox ${sbid}` });
  const ip = info.NetworkSettings.IPAddress || Object.values(info.NetworkSettings.Networks)[0]?.IPAddress;
  return { base: `http://${ip}:49983`, token, info };
}

// Runs cmd through process.Process/Start (as the SDK's commands.run does).
export async function envdRun(envd, cmd, { user = 'user', envs = {}, token = envd.token } = {}) {
  const out = { stdout: '', stderr: '', end: null };
  const req = { process: { cmd: '/bin/bash', args: ['-l', '-c', cmd], envs }, stdin: false };
  for await (const m of envdStream(envd, 'process.Process/Start', req, { user, token })) {
    const ev = m.event;
    if (ev.data?.stdout) out.stdout += unb64(ev.data.stdout);
    if (ev.data?.stderr) out.stderr += unb64(ev.data.stderr);
    if (ev.end) out.end = ev.end;
  }
  return out;
}
export { envdUnary };

// The envd access token of a secure sandbox, as docs/data-plane.md derives it.
export function envdToken(sbid) {
  const g = readFileSync(`${process.env.CORRAL_RUN}/gateway-secret`, 'utf8').trim();
  return createHmac('sha256', g).update(`envd:${sbid}`).digest('hex');
}

// A shell command that forks sleepers until fork fails, bounded to 2000 tries
// and 20 s, and prints how many lived and why the next fork failed.
// redirect: e.g. ' >/tmp/out', where the caller reads the count from a file.
export const forkBomb = (redirect = '') => `python3 - <<'PY'${redirect}
import os, time, signal
kids, err = [], ''
for i in range(2000):
    try:
        pid = os.fork()
    except OSError as e:
        err = e.strerror; break
    if pid == 0:
        time.sleep(20); os._exit(0)
    kids.append(pid)
print(len(kids), err)
for k in kids: os.kill(k, signal.SIGKILL)
for k in kids: os.waitpid(k, 0)
PY`;
