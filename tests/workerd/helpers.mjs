// Helpers for workerd's tests: real dockerd (Engine API over its unix socket,
// with node:http), real workerd processes, bounded waits.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, chmodSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const WORKERD = process.env.WORKERD_BIN || `${ROOT}build/bin/workerd`;
export const SOCK = process.env.DOCKER_SOCK || '/var/run/docker.sock';

export function docker(method, path, body) {
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: SOCK, method, path: `/v1.41${path}`,
      headers: data ? { 'Content-Type': 'application/json' } : {} }, (res) => {
      let raw = '';
      res.on('data', (c) => { raw += c; });
      res.on('end', () => {
        let json = null;
        try { json = raw ? JSON.parse(raw) : null; } catch { json = raw; }
        ok({ status: res.statusCode, body: json });
      });
    });
    req.setTimeout(60000, () => req.destroy(new Error(`dockerd ${method} ${path}: timeout`)));
    req.on('error', fail);
    req.end(data);
  });
}

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

export async function removeLabelled(...labels) {
  for (const c of await containersLabelled(...labels)) await docker('DELETE', `/containers/${c.Id}?force=1`);
}

export async function waitFor(what, fn, timeoutMs = 30000, stepMs = 200) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await new Promise((s) => setTimeout(s, stepMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

export const sleep = (ms) => new Promise((s) => setTimeout(s, ms));

// A config file and token file for one workerd; returns paths.
export function workerdFiles({ url, ca, token, extra = '' }) {
  const dir = mkdtempSync(join(tmpdir(), 'corral-wd-'));
  writeFileSync(`${dir}/token`, `${token}\n`);
  chmodSync(`${dir}/token`, 0o600);
  writeFileSync(`${dir}/workerd.conf`, [
    `control_url = ${url}`, `ca_file = ${ca}`, `join_token_file = ${dir}/token`,
    `state_dir = ${dir}/state`, `docker_socket = ${SOCK}`, 'data_addr = 127.0.0.1:7001',
    'slots = 8', 'cpu_cores = 4', 'memory_mb = 4096', 'backoff_max_ms = 2000',
    'template.base = corral/base', 'template.base.cmd = ["sleep", "infinity"]',
    'template.exit3 = corral/base', 'template.exit3.cmd = ["sh", "-c", "sleep 1; exit 3"]',
    'template.oom = corral/base',
    'template.oom.cmd = ["python3", "-c", "import time; time.sleep(1); b = bytearray(512 * 1024 * 1024); time.sleep(60)"]',
    extra, ''].join('\n'));
  return { dir, conf: `${dir}/workerd.conf`, token: `${dir}/token`, log: `${dir}/workerd.log` };
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
