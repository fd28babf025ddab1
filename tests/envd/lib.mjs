// Helpers shared by the envd integration tests: start the real binary, talk
// Connect JSON to it exactly as the e2b SDK does (unary JSON, server-streaming
// enveloped frames), and fail loudly when anything needed is missing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sleep } from '../lib/poll.mjs';

const repo = path.resolve(new URL('../..', import.meta.url).pathname);
export const ENVD_BIN = process.env.ENVD_BIN || path.join(repo, 'build/bin/envd');
export const TEST_UID = 1000;

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Starts envd in a temporary directory with its own passwd/group files: user
// "user" (uid 1000) whose home is inside the temporary directory.
export async function startEnvd({ token, tokenFile, extraEnv = {}, extraArgs = [], uid } = {}) {
  if (process.getuid() !== 0) throw new Error('envd tests must run as root (envd switches users)');
  if (!fs.existsSync(ENVD_BIN)) throw new Error(`envd binary not found at ${ENVD_BIN}; build it first`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envd-test-'));
  fs.chmodSync(dir, 0o755);
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  fs.chownSync(home, TEST_UID, TEST_UID);
  fs.writeFileSync(path.join(dir, 'passwd'),
    `root:x:0:0:root:/root:/bin/bash\nuser:x:${TEST_UID}:${TEST_UID}::${home}:/bin/bash\n`);
  fs.writeFileSync(path.join(dir, 'group'), `root:x:0:\nuser:x:${TEST_UID}:\n`);
  const port = await freePort();
  const args = ['-port', String(port), '-addr', '127.0.0.1', '-passwd', path.join(dir, 'passwd'),
    '-group', path.join(dir, 'group')];
  if (tokenFile) {
    fs.writeFileSync(path.join(dir, 'token'), tokenFile + '\n');
    args.push('-access-token-file', path.join(dir, 'token'));
  }
  args.push(...extraArgs);
  const env = { ...process.env, ...extraEnv };
  if (token) env.CORRAL_ENVD_ACCESS_TOKEN = token;
  // uid: envd run as that user (agent mode runs it as the person, not root)
  const ids = uid === undefined ? {} : { uid, gid: uid };
  const child = spawn(ENVD_BIN, args, { env, stdio: ['ignore', 'inherit', 'pipe'], ...ids });
  let log = '';
  child.stderr.on('data', (d) => { log += d.toString(); });
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, () => child.exitCode, () => log);
  return {
    base, dir, home, child, port, token: token || tokenFile,
    log: () => log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Waits until envd at base answers /health; exitCode() is non-null once it died.
export async function waitHealthy(base, exitCode, log) {
  const deadline = Date.now() + 5000;
  for (;;) {
    if (exitCode() !== null && exitCode() !== undefined) {
      throw new Error(`envd exited with ${exitCode()}: ${log()}`);
    }
    try {
      const res = await fetch(`${base}/health`);
      if (res.status === 204) return;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`envd did not become healthy: ${log()}`);
    // sleep: between tries of this loop, bounded by its deadline (5 s).
    await sleep(50);
  }
}

export function authHeaders(opts = {}) {
  const h = {};
  if (opts.user) h.Authorization = 'Basic ' + Buffer.from(`${opts.user}:`).toString('base64');
  if (opts.token) h['X-Access-Token'] = opts.token;
  return { ...h, ...(opts.headers || {}) };
}

// A unary Connect call: returns { status, body } (body parsed as JSON).
export async function unary(envd, method, msg, opts = {}) {
  const res = await fetch(`${envd.base}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1',
      ...authHeaders({ token: envd.token, ...opts }) },
    body: JSON.stringify(msg),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

function envelope(msg) {
  const json = Buffer.from(JSON.stringify(msg));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

// A server-streaming Connect call: an async iterator of messages; the end-stream
// frame's error (if any) is thrown. `controller` aborts the stream.
export async function* stream(envd, method, msg, opts = {}) {
  const controller = opts.controller || new AbortController();
  const res = await fetch(`${envd.base}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1',
      'Keepalive-Ping-Interval': String(opts.keepalive ?? 50),
      ...(opts.timeoutMs ? { 'Connect-Timeout-Ms': String(opts.timeoutMs) } : {}),
      ...authHeaders({ token: envd.token, ...opts }) },
    body: envelope(msg),
    signal: controller.signal,
  });
  if (res.status !== 200) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
  let buf = Buffer.alloc(0);
  for await (const chunk of res.body) {
    buf = Buffer.concat([buf, Buffer.from(chunk)]);
    while (buf.length >= 5) {
      const len = buf.readUInt32BE(1);
      if (buf.length < 5 + len) break;
      const flags = buf[0];
      const body = JSON.parse(buf.subarray(5, 5 + len).toString());
      buf = buf.subarray(5 + len);
      if (flags & 2) {
        if (body.error) throw Object.assign(new Error(body.error.message), { code: body.error.code });
        return;
      }
      yield body;
    }
  }
  throw new Error('stream ended without an end-stream frame');
}

export const b64 = (s) => Buffer.from(s).toString('base64');
export const unb64 = (s) => Buffer.from(s, 'base64').toString();

// Runs a command through Process.Start like commands.run does; collects everything.
export async function run(envd, cmd, opts = {}) {
  const out = { pid: 0, stdout: '', stderr: '', pty: '', end: null, keepalives: 0 };
  const req = {
    process: { cmd: '/bin/bash', args: ['-l', '-c', cmd], envs: opts.envs || {},
      ...(opts.cwd ? { cwd: opts.cwd } : {}) },
    stdin: opts.stdin ?? false,
    ...(opts.tag ? { tag: opts.tag } : {}),
    ...(opts.pty ? { pty: { size: opts.pty } } : {}),
  };
  for await (const m of stream(envd, 'process.Process/Start', req, opts)) {
    const ev = m.event;
    if (ev.start) { out.pid = ev.start.pid; opts.onStart?.(ev.start.pid); }
    if (ev.data?.stdout) out.stdout += unb64(ev.data.stdout);
    if (ev.data?.stderr) out.stderr += unb64(ev.data.stderr);
    if (ev.data?.pty) { out.pty += unb64(ev.data.pty); opts.onPty?.(out.pty); }
    if (ev.keepalive) out.keepalives++;
    if (ev.end) out.end = ev.end;
  }
  return out;
}

export { sleep };
