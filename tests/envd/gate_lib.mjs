// The permission gate's fixture for the envd tests: a temporary HOME with a
// fake SSH key (the "invoking user's" credentials), a work tree, a directory
// outside it, a policy that denies one directory and one command, a gate dir;
// envd started on it as a plain process (strict mode) or inside tmux, whose
// pane is the terminal the person answers on (prompt mode).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENVD_BIN, freePort, stream, unary, waitHealthy } from './lib.mjs';
import { until } from '../lib/poll.mjs';

// base: where the fixture's directory goes (bwrap's tests keep it out of /tmp, which
// bwrap replaces by a tmpfs: a key hidden by that would prove nothing).
export function gateFixture(base = os.tmpdir()) {
  if (process.getuid() !== 0) throw new Error('envd tests must run as root');
  if (!fs.existsSync(ENVD_BIN)) throw new Error(`envd binary not found at ${ENVD_BIN}; build it first`);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(base, 'envd-gate-')));
  fs.chmodSync(dir, 0o755);
  const p = (...rel) => path.join(dir, ...rel);
  const fx = {
    dir, home: p('home'), work: p('work'), outside: p('outside'), denied: p('denied'),
    gateDir: p('gate'), policy: p('policy'), key: p('home/.ssh/id_rsa'),
    secret: p('work/secrets.env'),
  };
  for (const d of [fx.home, fx.work, fx.outside, fx.denied]) fs.mkdirSync(d);
  fs.mkdirSync(path.join(fx.home, '.ssh'), { mode: 0o700 });
  fs.writeFileSync(fx.key, 'FAKE-PRIVATE-KEY\n', { mode: 0o600 });
  fs.writeFileSync(fx.secret, 'TOKEN=fake\n');
  fs.writeFileSync(fx.policy, `# the machine owner's denials\ndeny ${fx.denied}\ndeny-command curl *\n`);
  // envd runs as root here, standing in for the invoking user: root's home is the fake HOME.
  fs.writeFileSync(p('passwd'), `root:x:0:0:root:${fx.home}:/bin/bash\n`);
  fs.writeFileSync(p('group'), 'root:x:0:\n');
  fx.args = (mode, sandbox, extra = []) => ['-addr', '127.0.0.1', '-user', 'root',
    '-passwd', p('passwd'), '-group', p('group'), '-permission-mode', mode, '-work-tree', fx.work,
    '-gate-dir', fx.gateDir, '-policy', fx.policy, '-hardlock', fx.secret, '-sandbox-id', sandbox,
    ...extra];
  fx.audit = () => {
    const f = path.join(fx.gateDir, 'audit.jsonl');
    if (!fs.existsSync(f)) return [];
    return fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  };
  fx.cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  return fx;
}

// envd as a child process (strict mode: nothing is ever asked).
export async function startGated(fx, mode, sandbox, extra = []) {
  const port = await freePort();
  const child = spawn(ENVD_BIN, ['-port', String(port), ...fx.args(mode, sandbox, extra)], {
    env: { ...process.env, HOME: fx.home }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => { log += d.toString(); });
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, () => child.exitCode, () => log);
  return {
    base, log: () => log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    },
  };
}

// A tmux server of this test's own (its own socket), one session whose pane runs envd.
export class Tmux {
  constructor(name) {
    if (!fs.existsSync('/usr/bin/tmux')) throw new Error('tmux is not installed (tests/lib/deps.sh installs it)');
    this.sock = `envd-gate-${process.pid}-${name}`;
  }

  tmux(...args) {
    return execFileSync('tmux', ['-L', this.sock, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  // Runs argv (with env) as the pane's only process; its output goes to logFile so the pane
  // shows nothing but the gate's questions.
  start(argv, env, logFile) {
    const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
    const envs = Object.entries(env).map(([k, v]) => `${k}=${q(v)}`).join(' ');
    const cmd = `exec env ${envs} ${argv.map(q).join(' ')} >>${q(logFile)} 2>&1`;
    this.tmux('new-session', '-d', '-s', 'gate', '-x', '250', '-y', '50', cmd);
  }

  screen() { return this.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'gate'); }

  answer(text) { this.tmux('send-keys', '-t', 'gate', '-l', text); this.tmux('send-keys', '-t', 'gate', 'Enter'); }

  panePid() { return Number(this.tmux('list-panes', '-t', 'gate', '-F', '#{pane_pid}').trim()); }

  kill() {
    try { this.tmux('kill-server'); } catch { /* already gone */ }
  }
}

// envd in prompt mode inside tmux; returns { base, tmux, questions(), stop() }.
export async function startPrompting(fx, sandbox, extra = []) {
  const port = await freePort();
  const logFile = path.join(fx.dir, `envd-${sandbox}.log`);
  const tmux = new Tmux(sandbox);
  tmux.start([ENVD_BIN, '-port', port, ...fx.args('prompt', sandbox, extra)],
    { HOME: fx.home, PATH: process.env.PATH }, logFile);
  const base = `http://127.0.0.1:${port}`;
  const pid = tmux.panePid();
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const alive = () => { try { process.kill(pid, 0); return null; } catch { return 'gone'; } };
  await waitHealthy(base, alive, log);
  return {
    base, tmux, log,
    // The questions asked so far, one line each.
    questions: () => tmux.screen().split('\n').filter((l) => l.includes(' wants to ')),
    async stop() {
      try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ }
      await until(() => alive() !== null, { timeoutMs: 5000 });
      tmux.kill();
    },
  };
}

// Waits for question number n (1-based) and returns its line.
export async function nthQuestion(envd, n) {
  const qs = await until(() => { const q = envd.questions(); return q.length >= n ? q : null; });
  if (!qs) throw new Error(`question ${n} never appeared; screen:\n${envd.tmux.screen()}`);
  return qs[n - 1];
}

export const getFile = (envd, p) => fetch(`${envd.base}/files?path=${encodeURIComponent(p)}`);
export const putFile = (envd, p, body) => fetch(`${envd.base}/files?path=${encodeURIComponent(p)}`,
  { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body });
export const fsCall = (envd, m, body) => unary(envd, `filesystem.Filesystem/${m}`, body);

// Process.Start of argv in cwd: { started, stdout, stderr, end, code } (code: the stream's
// error code).
export async function startCmd(envd, argv, cwd, envs = {}) {
  const out = { started: false, stdout: '', stderr: '', end: null, code: null };
  const req = { process: { cmd: argv[0], args: argv.slice(1), envs, cwd }, stdin: false };
  try {
    for await (const m of stream(envd, 'process.Process/Start', req)) {
      if (m.event?.start) out.started = true;
      if (m.event?.data?.stdout) out.stdout += Buffer.from(m.event.data.stdout, 'base64').toString();
      if (m.event?.data?.stderr) out.stderr += Buffer.from(m.event.data.stderr, 'base64').toString();
      if (m.event?.end) out.end = m.event.end;
    }
  } catch (e) {
    out.code = e.code;
    out.message = e.message;
  }
  return out;
}

// The decisions an audit log holds, as [op, path or command, branch, answer, by].
export const decisions = (lines) => lines.map((l) => [l.op, l.path ?? l.command, l.branch, l.answer, l.by]);
