// The person's machine of the agent-mode rows (decisions 0054, 0062): the
// network namespace tests/security/machine.sh made, and on it one agent-mode
// workerd per workspace, each as a user of its own (not root: a person's
// account), enrolled with its workspace's join token, as a person enrols a
// laptop. Its sandboxes are envd sessions on that machine, as that user.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { until } from '../lib/poll.mjs';
import { agentEnvds } from '../e2b/agent_lib.mjs';

const RUN = process.env.CORRAL_RUN;
const BIN = process.env.CORRAL_BUILD || new URL('../../build/bin', import.meta.url).pathname;
const env = (k) => {
  if (!process.env[k]) throw new Error(`${k} is not set: run through tests/security/run.sh (env.sh, machine.sh)`);
  return process.env[k];
};

export const PC = {
  ns: env('CORRAL_SEC_PC_NS'),
  addr: env('CORRAL_SEC_PC_ADDR'), // the machine's LAN address
  host: env('CORRAL_SEC_PC_HOST'), // this host's end of the veth
  dataPorts: env('CORRAL_SEC_PC_DATA_PORTS').split(/\s+/).map(Number),
  uids: env('CORRAL_SEC_PC_UIDS').split(/\s+/).map(Number),
  homes: env('CORRAL_SEC_PC_HOMES'),
  // Agents that dial out through a tunnel (decision 0087) and offer no port.
  tunnelSlots: (process.env.CORRAL_SEC_PC_TUNNEL_SLOTS || '').split(/\s+/).filter(Boolean).map(Number),
};
// The data ports something on the machine listens on: the direct agents'.
PC.listening = PC.dataPorts.filter((p, i) => !PC.tunnelSlots.includes(i));
// Ports on the machine: agent i's sandbox serves its app on APP_PORTS[i],
// which its workerd exposes with CLOSED_PORT (where nothing listens: the
// answer a refused port must look like); the person's own dev server on
// DEV_PORT, on all addresses, exposed by nobody.
export const AGENT_APP_PORTS = [8001, 8002];
export const CLOSED_PORT = 8009;
export const DEV_PORT = 3000;

const started = new Set();

// Ends everything started on the machine (the after() hooks: a child left
// running would keep the test process alive).
export async function stopAll() {
  await Promise.all([...started].map((p) => p.stop()));
}

// argv on the machine as uid (no groups, no capabilities), in home with a
// person's environment (not the test's: workerd hands its own to envd).
function onMachine(uid, home, argv, logFile) {
  const out = fs.openSync(logFile, 'a');
  const proc = spawn('ip', ['netns', 'exec', PC.ns, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups',
    '--inh-caps=-all', ...argv], {
    cwd: home, stdio: ['ignore', out, out],
    env: { HOME: home, PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
  });
  fs.closeSync(out);
  // `ip netns exec` and setpriv exec in place: proc.pid is argv[0]'s.
  const orphan = () => proc.kill('SIGTERM');
  process.on('exit', orphan);
  const exited = new Promise((ok) => proc.on('exit', ok));
  proc.on('exit', () => process.off('exit', orphan));
  const p = {
    proc, exited,
    stop: async () => {
      started.delete(p);
      if (proc.exitCode === null && proc.signalCode === null) { proc.kill('SIGTERM'); await exited; }
    },
  };
  started.add(p);
  return p;
}

function homeOf(name, uid) {
  const home = path.join(PC.homes, name);
  fs.rmSync(home, { recursive: true, force: true }); // a fresh enrolment, not an earlier run's worker
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.chownSync(home, uid, uid);
  return home;
}

function own(file, uid, text, mode) {
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
  fs.chownSync(file, uid, uid);
}

// Agent i of the machine, joined to ws with a join token of ws's: its
// workerd runs as PC.uids[i], exposes its app port and CLOSED_PORT, private
// (allow_public_traffic's default), with a template only it offers (so that
// ws's other creates go to the Docker fleet and this kind only here). An
// agent of PC.tunnelSlots dials out through its tunnel, with no data port.
export async function startAgent(ws, i, joinToken) {
  const uid = PC.uids[i];
  const home = homeOf(`agent-${ws.name}`, uid);
  const template = `sec-agent-${ws.name}-${Date.now().toString(36)}`;
  const appPort = AGENT_APP_PORTS[i];
  const tunnel = PC.tunnelSlots.includes(i);
  const dataPort = tunnel ? null : PC.dataPorts[i];
  for (const d of ['state', 'gate', 'app']) {
    fs.mkdirSync(path.join(home, d), { recursive: true, mode: 0o700 });
    fs.chownSync(path.join(home, d), uid, uid);
  }
  own(path.join(home, 'ca.crt'), uid, fs.readFileSync(`${RUN}/tls/ca.crt`), 0o644);
  own(path.join(home, 'token'), uid, `${joinToken}\n`, 0o600);
  const conf = path.join(home, 'workerd.conf');
  own(conf, uid, [
    `control_url = https://127.0.0.1:${process.env.CORRAL_PORT}`, // relay.py: nginx, as the machine reaches it
    `ca_file = ${home}/ca.crt`,
    `join_token_file = ${home}/token`,
    tunnel ? 'tunnel = on' : `data_addr = ${PC.addr}:${dataPort}`,
    `state_dir = ${home}/state`,
    `gate_dir = ${home}/gate`,
    `work_tree = ${home}`,
    'mode = agent',
    'docker_socket = /nonexistent/docker.sock',
    'slots = 4',
    `template = ${template}`,
    `expose_ports = ${appPort} ${CLOSED_PORT}`,
    '',
  ].join('\n'), 0o600);
  const log = `${RUN}/log/agent-${ws.name}.log`;
  const p = onMachine(uid, home, [`${BIN}/workerd`, '-c', conf], log);
  const read = () => fs.readFileSync(log, 'utf8');
  const stateFile = path.join(home, 'state', 'worker');
  const state = () => fs.readFileSync(stateFile, 'utf8');
  const enrolled = () => /enrolled as worker/.test(read()) && fs.existsSync(stateFile);
  await until(() => enrolled() || p.proc.exitCode !== null, { timeoutMs: 30000, everyMs: 100 });
  if (!enrolled()) {
    await p.stop();
    throw new Error(`the agent of ${ws.name} did not enrol:\n${read().slice(-2000)}`);
  }
  // Placeable once its workspace sees it with a free slot and its template
  // (enrolled is not yet polling): what a create needs.
  const id = /worker_id = (\S+)/.exec(state())[1];
  const placeable = async () => {
    const r = await fetch(`${process.env.E2B_API_URL}/v1/workers`, { headers: { 'X-API-Key': ws.member } });
    const w = (await r.json()).workers?.find((x) => (x.worker_id || x.id) === id);
    return w && w.free_slots > 0 && (w.templates || []).includes(template);
  };
  if (!(await until(placeable, { timeoutMs: 30000, everyMs: 200 }))) {
    await p.stop();
    throw new Error(`the agent of ${ws.name} is not placeable`);
  }
  return {
    ws, uid, home, conf, log, template, appPort, dataPort, tunnel, token: joinToken, ...p, read,
    worker: () => ({ id: /worker_id = (\S+)/.exec(state())[1], secret: /worker_secret = (\S+)/.exec(state())[1] }),
    stateFile,
  };
}

// The person's own dev server: on all addresses of the machine, as agent's
// user, in agent's home, exposed by no workerd. Every connection it accepts
// is a line of its log (the address it saw).
export async function startDevServer(agent) {
  const log = path.join(agent.home, 'dev-peers.log');
  own(log, agent.uid, '', 0o644);
  const p = onMachine(agent.uid, agent.home,
    ['python3', new URL('./machine_service.py', import.meta.url).pathname, String(DEV_PORT), 'dev-server', log],
    `${RUN}/log/dev-server.log`);
  const listening = () => new Promise((ok) => {
    const c = net.connect(DEV_PORT, PC.addr, () => { c.destroy(); ok(true); });
    c.on('error', () => ok(false));
  });
  if (!(await until(listening, { timeoutMs: 10000, everyMs: 100 }))) {
    await p.stop();
    throw new Error('the dev server did not listen');
  }
  return { ...p, log, port: DEV_PORT, peers: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

// The envd sessions agent's workerd runs: [{pid, addr}] (tests/e2b/agent_lib.mjs
// reads /proc; the namespace has its own network, not its own pids).
export function sessions(agent) {
  return agentEnvds(agent.proc.pid).map(({ pid, argv }) => ({ pid, addr: argv[argv.indexOf('-addr') + 1] }));
}
