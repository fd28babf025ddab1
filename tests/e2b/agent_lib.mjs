// Helpers of the agent-mode tests (decision 0054): an agent-mode workerd of
// the test's own beside the stack, and what /proc says about its sessions.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { listedDataPort } from '../lib/data_ports.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
export const BIN = process.env.CORRAL_BUILD || `${ROOT}build/bin`;
const RUN = process.env.CORRAL_RUN;
// Where the gateways reach this machine's data ports: loopback, or with
// gateway hosts in network namespaces (tests/e2b/run.sh) the hosts' bridge;
// CORRAL_AGENT_DATA_HOST says otherwise.
const dataHost = process.env.CORRAL_AGENT_DATA_HOST
  || (process.env.CORRAL_GATEWAY_HOSTS ? `${process.env.CORRAL_HOSTS_NET || '10.233.0'}.1` : '127.0.0.1');

// dir/name/: its token file, workerd.conf (extra lines appended), state,
// gate dir and log.
export async function writeAgentConf(dir, name, token, extra = '') {
  const home = path.join(dir, name);
  fs.mkdirSync(path.join(home, 'state'), { recursive: true });
  const tokenFile = path.join(home, 'token');
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const conf = path.join(home, 'workerd.conf');
  fs.writeFileSync(conf, [
    `control_url = https://127.0.0.1:${process.env.CORRAL_PORT}`,
    `ca_file = ${RUN}/tls/ca.crt`,
    `join_token_file = ${tokenFile}`,
    `data_addr = ${dataHost}:${listedDataPort()}`, // listed for the gateway (run.sh)
    `state_dir = ${home}/state`,
    `gate_dir = ${home}/gate`,
    'mode = agent',
    'docker_socket = /nonexistent/docker.sock', // an agent needs no dockerd
    'slots = 4',
    extra,
  ].join('\n'));
  const log = path.join(home, 'workerd.log');
  return { home, conf, log, tokenFile, gate: path.join(home, 'gate'), read: () => fs.readFileSync(log, 'utf8') };
}

// Starts (or restarts) workerd on a written conf, in workTree.
export function launchAgent(w, workTree) {
  const out = fs.openSync(w.log, 'a');
  // A home of its own, as tests/security/machine.mjs gives its agents: a
  // command is `bash -l`, and this host's own login profile is not under
  // test (pyenv's rehash in root's, killed mid-way by a sandbox's kill,
  // leaves a lock that makes every later login shell wait 60 s).
  const home = path.join(w.home, 'home');
  fs.mkdirSync(home, { recursive: true });
  const proc = spawn(`${BIN}/workerd`, ['-c', w.conf],
    { cwd: workTree, env: { ...process.env, HOME: home }, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  // Should the test process end without its after(), workerd ends too (and
  // ends its sessions): never left retrying against a stack that is gone.
  const orphan = () => proc.kill('SIGTERM');
  process.on('exit', orphan);
  proc.on('exit', () => process.off('exit', orphan));
  return { ...w, proc, exited: new Promise((ok) => proc.on('exit', ok)) };
}

export async function startAgent(dir, name, token, workTree, extra = '') {
  return launchAgent(await writeAgentConf(dir, name, token, extra), workTree);
}

export async function stopAgent(w) {
  if (!w?.proc || w.proc.exitCode !== null) return;
  w.proc.kill('SIGTERM');
  await w.exited;
}

export function workerId(w) {
  const text = fs.readFileSync(path.join(w.home, 'state', 'worker'), 'utf8');
  return { id: /worker_id = (\S+)/.exec(text)[1], secret: /worker_secret = (\S+)/.exec(text)[1] };
}

// envd processes started with -agent by pid ppid, as /proc shows them.
export function agentEnvds(ppid) {
  const out = [];
  for (const p of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (argv[0].endsWith('/envd') && argv[1] === '-agent' && parent === ppid) out.push({ pid: Number(p), argv });
    } catch { /* gone meanwhile */ }
  }
  return out;
}

export const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
