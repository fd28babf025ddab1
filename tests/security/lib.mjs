// The attacker's view of a running stack (tests/security/run.sh starts it):
// two workspaces, a sandbox of every kind in each, and what the host offers.
// Nothing is mocked: the real SDK over HTTPS, real dockerd, real workerd.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Sandbox, ALL_TRAFFIC, Volume, Template } from '../e2b/sdk.mjs';
import { docker, sandboxContainer } from '../lib/engine.mjs';
import { until } from '../lib/poll.mjs';
import { PC, sessions, startAgent } from './machine.mjs';

export { Sandbox, Volume };
export { PC, startAgent, startDevServer, stopAll, AGENT_APP_PORTS, CLOSED_PORT, DEV_PORT } from './machine.mjs';
const RUN = process.env.CORRAL_RUN;
const API = process.env.E2B_API_URL;
export const DATA_URL = process.env.E2B_SANDBOX_URL;
if (!RUN || !API || !DATA_URL) throw new Error('run through tests/security/run.sh: CORRAL_RUN, E2B_API_URL and E2B_SANDBOX_URL must be set');
const BIN = process.env.CORRAL_BUILD || new URL('../../build/bin', import.meta.url).pathname;
export const APP_PORT = 8000;
export const ENVD_PORT = 49983;
export const PROXY_PORT = 3128;

export function corralctl(...args) {
  return JSON.parse(execFileSync(`${BIN}/corralctl`, ['-c', `${RUN}/corral.conf`, '--json', ...args], { encoding: 'utf8' }));
}

// {status, body, raw} of one control-plane call; headers as given.
export async function call(method, path, { key, headers = {}, body } = {}) {
  const h = { ...headers };
  if (key) h['X-API-Key'] = key;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const r = await fetch(API + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const raw = await r.text();
  let parsed = null;
  try { parsed = raw ? JSON.parse(raw) : null; } catch { parsed = raw; }
  return { status: r.status, body: parsed, raw };
}

export function workspace(name) {
  const ws = corralctl('workspace', 'create', `${name}-${Date.now().toString(36)}`);
  const member = corralctl('key', 'create', '--workspace', ws.workspace, '--role', 'member').key;
  return { name, id: ws.workspace, owner: ws.owner_key, member };
}

// A native (/v1) create, then the SDK connected to it.
async function native(ws, body) {
  const r = await call('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', timeout: 600, ...body } });
  if (r.status !== 201) throw new Error(`native create ${r.status}: ${r.raw}`);
  return Sandbox.connect(r.body.sandbox_id, { apiKey: ws.member });
}

// Every kind of sandbox the walls must hold for (issue 25). Each makes one in
// ws and returns the SDK's Sandbox, connected with ws's member key.
export const KINDS = {
  plain: (ws, o) => Sandbox.create('base', o),
  insecure: (ws, o) => Sandbox.create('base', { ...o, secure: false }),
  private: (ws, o) => Sandbox.create('base', { ...o, network: { allowPublicTraffic: false } }),
  native: (ws) => native(ws, {}),
  // Claimed from a worker's warm pool (decision 0082): started before it was
  // anybody's, told its token and env at the claim, renamed to this sandbox
  // just after.
  warm: async (ws, o) => {
    const ready = async () => {
      const f = encodeURIComponent(JSON.stringify({ label: ['corral.role=warm'], name: ['^/corral-warm_'] }));
      return (await docker('GET', `/containers/json?filters=${f}`)).body.length > 0;
    };
    if (!(await until(ready, { timeoutMs: 60_000, everyMs: 250 }))) throw new Error('no warm sandbox was made');
    const s = await Sandbox.create('warm', o);
    const c = await sandboxContainer(s.sandboxId);
    if (c.Labels['corral.role'] !== 'warm') throw new Error(`warm kind: ${s.sandboxId} was made cold`);
    return s;
  },
  allowlist: (ws, o) => Sandbox.create('base', { ...o, network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }),
  // Its proxy intercepts HTTPS to a host with rules, holds a CA of its own and
  // asks its worker for identity tokens (issue 31, decision 0091).
  rules: (ws, o) => Sandbox.create('base', { ...o,
    iam: { tokens: { t: { audience: 'matrix.test', tokenType: 'JWT-SVID' } } },
    network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'],
      rules: { 'api.allowed.test': [{ transform: ({ iam }) => ({ headers: { 'X-Token': iam.tokens.t, 'X-Lit': 'matrix' } }) }] } } }),
  denyall: (ws, o) => Sandbox.create('base', { ...o, allowInternetAccess: false }),
  denyout: (ws, o) => Sandbox.create('base', { ...o, network: { denyOut: ['8.8.8.8'] } }),
  resumed: async (ws, o) => {
    const s = await Sandbox.create('base', o);
    if (!(await s.pause())) throw new Error('pause said the sandbox was paused already');
    return Sandbox.connect(s.sandboxId, o);
  },
  // Paused without its memory, then booted afresh (decision 0074).
  rebooted: async (ws, o) => {
    const s = await Sandbox.create('base', o);
    if (!(await s.pause({ keepMemory: false }))) throw new Error('pause said the sandbox was paused already');
    return Sandbox.connect(s.sandboxId, o);
  },
  // Created open, given an allow-list while running, paused without its
  // memory: booted afresh on the internal network it was moved to, behind a
  // proxy made at the resume (decision 0074's egress change).
  policyAdded: async (ws, o) => {
    const s = await Sandbox.create('base', o);
    await s.updateNetwork({ denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] });
    if (!(await s.pause({ keepMemory: false }))) throw new Error('pause said the sandbox was paused already');
    return Sandbox.connect(s.sandboxId, o);
  },
  forked: async (ws, o) => {
    const s = await Sandbox.create('base', o);
    try {
      const [f] = await Sandbox.fork(s.sandboxId, { ...o, count: 1 });
      return Sandbox.connect(f.sandboxId, o);
    } finally { await s.kill().catch(() => {}); }
  },
  snapshot: async (ws, o) => {
    const s = await Sandbox.create('base', o);
    try {
      const snap = await s.createSnapshot();
      return await Sandbox.create(snap.snapshotId, o);
    } finally { await s.kill().catch(() => {}); }
  },
  // ws.volume: the volume (and its file API token) the matrix attacks too.
  volume: async (ws, o) => {
    const vol = await Volume.create(`sec-${ws.name}-${Date.now().toString(36)}`, o);
    ws.volume = vol;
    return Sandbox.create('base', { ...o, volumeMounts: { '/data': vol } });
  },
  gvisor: (ws) => native(ws, { require_isolation: 'GVISOR' }),
  // The code interpreter's template (issue 30, decision 0088): envd starts
  // corral-interp on INTERP_PORT as the sandbox's user, its kernels beside it.
  interp: (ws, o) => Sandbox.create('code-interpreter-v1', o),
  // On the worker reached only through its tunnel (workerd-2, env.sh;
  // decision 0087): the template only it offers.
  tunnelled: async (ws, o) => {
    const s = await Sandbox.create('tunnelled', o);
    const c = await sandboxContainer(s.sandboxId);
    const wid = tunnelledWorker().id;
    if (c.Labels['corral.worker'] !== wid) throw new Error(`tunnelled kind: ${s.sandboxId} is on ${c.Labels['corral.worker']}, not ${wid}`);
    return s;
  },
  // From a template the workspace built (issue 28, decision 0080): its image
  // pulled from Corral's registry, its start command run as the template's
  // user; the build itself ran in a sandbox of this workspace.
  templated: async (ws, o) => {
    const name = `sec-${ws.name}`;
    await Template.build(Template().fromTemplate('base').runCmd('echo built > /etc/built', { user: 'root' })
      .setStartCmd('sleep infinity', 'test -f /etc/built'), name, o);
    return Sandbox.create(name, o);
  },
  // A session on the person's machine (machine.mjs): its agent enrols with a
  // join token of ws (ws.agentSlot: which of the machine's users and ports)
  // and offers a template no other worker has. It enrols here, after ws's
  // other kinds were made: a volume is pinned when it is created to a worker
  // of the workspace's own pool first, an agent too, which can never mount it
  // (then the volume kind's create is "template 'base' not found").
  agent: async (ws, o) => {
    ws.agent ||= await startAgent(ws, ws.agentSlot, corralctl('join-token', 'create', '--workspace', ws.id).token);
    return Sandbox.create(ws.agent.template, o);
  },
};

// workerd-2's {id, secret, conf}: the stack's worker with `tunnel = on`.
export function tunnelledWorker() {
  const conf = readFileSync(`${RUN}/workerd-2.conf`, 'utf8');
  if (!/^tunnel = on$/m.test(conf)) throw new Error('workerd-2 is not tunnelled: env.sh sets CORRAL_TUNNEL_WORKERS=2');
  const w = readFileSync(`${RUN}/workerd-2-state/worker`, 'utf8');
  const field = (k) => w.match(new RegExp(`^${k} = (\\S+)$`, 'm'))[1];
  return { id: field('worker_id'), secret: field('worker_secret'), conf };
}

// The platform's own services on this host, besides nginx's public ports:
// Redis, its replica and sentinels, the workerd data ports, and dockerd's
// TCP ports should anyone open them.
export function platformPorts() {
  const redis = Number(process.env.CORRAL_REDIS_PORT), wd = Number(process.env.CORRAL_WORKERD_DATA_PORT);
  const registry = Number(process.env.CORRAL_PORT) + 3; // conf/stack.sh's, off the default port
  return [redis, redis + 1, redis + 2, redis + 3, redis + 4, wd, wd + 1, 2375, 2376, registry];
}

// The sandbox's container address, its bridge's (the host's) address, and
// its neighbours on its network: its egress proxy when it has a policy (a
// proxy from the pool keeps the pool's labels, so it is found by network).
async function addresses(id) {
  // By label or name: a claimed warm sandbox keeps its warm id's labels (0082).
  const own = await sandboxContainer(id);
  // One network, whatever it went through (an egress change at a resume
  // moves it: never onto the new one while still on the old).
  const nets = Object.values(own.NetworkSettings.Networks);
  if (nets.length !== 1) throw new Error(`sandbox ${id} is on ${nets.length} networks, not 1`);
  const [net] = nets;
  const { body } = await docker('GET', `/networks/${net.NetworkID}`);
  const proxy = Object.entries(body.Containers || {}).filter(([cid]) => cid !== own.Id)
    .map(([, c]) => c.IPv4Address.split('/')[0]);
  return { ip: net.IPAddress, gw: net.Gateway, proxy };
}

const SERVICE = readFileSync(new URL('./machine_service.py', import.meta.url), 'utf8');

// One sandbox of kind in ws, serving a marker on APP_PORT as root; an agent
// session serves it on its workerd's exposed port, from a service that also
// says whom it sees (machine_service.py), started through envd as the SDK
// would. ip: where another sandbox would try it (a session's loopback
// address means nothing elsewhere: its machine's LAN address); scratch: where
// the probe's files go (another user's /tmp/probe.py is not ours to replace).
export async function make(kind, ws) {
  const sbx = await KINDS[kind](ws, { apiKey: ws.member, timeoutMs: 600_000 });
  const marker = `marker-${kind}-${ws.name}-${sbx.sandboxId}`;
  const s = { kind, ws, sbx, id: sbx.sandboxId, marker };
  if (kind === 'agent') {
    const ag = ws.agent, dir = `${ag.home}/app`;
    const mine = sessions(ag);
    if (mine.length !== 1) throw new Error(`agent of ${ws.name}: ${mine.length} sessions, not 1`);
    await sbx.files.write(`${dir}/service.py`, SERVICE);
    await sbx.files.write(`${dir}/marker.txt`, marker);
    await sbx.commands.run(`exec python3 ${dir}/service.py ${ag.appPort} ${marker} ${dir}/peers.log`,
      { background: true, timeoutMs: 0 });
    return { ...s, ip: PC.addr, session: mine[0].addr, gw: null, proxy: [], appPort: ag.appPort, agent: ag,
      markerFile: `${dir}/marker.txt`, peersLog: `${dir}/peers.log`, scratch: ag.home };
  }
  await sbx.files.write('/srv/app/index.html', marker, { user: 'root' });
  await sbx.commands.run(`cd /srv/app && exec python3 -m http.server ${APP_PORT}`, { background: true, user: 'root', timeoutMs: 0 }); // 0: it lives as long as the sandbox (E2B's default ends it at 60 s)
  return { ...s, ...(await addresses(sbx.sandboxId)), appPort: APP_PORT, markerFile: '/srv/app/index.html', scratch: '/tmp' };
}

// The host's addresses (not loopback: inside a sandbox that is its own; not
// the sandbox bridges': the matrix tries a sandbox's own and one other) and
// every TCP port something listens on here, whatever it is.
export function hostFacts() {
  const links = JSON.parse(execFileSync('ip', ['-j', 'addr'], { encoding: 'utf8' }));
  const all = links.flatMap((l) => (l.addr_info || []).map((a) => ({ dev: l.ifname, addr: a.local, family: a.family })));
  const ports = new Set();
  for (const line of execFileSync('ss', ['-ltnH'], { encoding: 'utf8' }).split('\n')) {
    const m = line.trim().split(/\s+/)[3]?.match(/:(\d+)$/);
    if (m) ports.add(Number(m[1]));
  }
  return {
    addrs: all.filter((a) => a.family === 'inet' && !a.addr.startsWith('127.') && !/^cr[il]/.test(a.dev)),
    ports: [...ports].sort((a, b) => a - b),
  };
}

const PROBE = readFileSync(new URL('./probe.py', import.meta.url), 'utf8');

// From inside s, as root where it can be: probe.py's answer for targets
// ([[host, port], ...], or {tcp, http, files, unix}: see probe.py).
export async function probe(s, targets) {
  await s.sbx.files.write(`${s.scratch}/probe.py`, PROBE, { user: 'root' });
  await s.sbx.files.write(`${s.scratch}/targets.json`, JSON.stringify(targets), { user: 'root' });
  const r = await s.sbx.commands.run(`python3 ${s.scratch}/probe.py ${s.scratch}/targets.json`, { user: 'root', timeoutMs: 90_000 });
  return JSON.parse(r.stdout);
}

export const trafficToken = (s) => ({ 'e2b-traffic-access-token': s.sbx.trafficAccessToken ?? '' });

// Waits until s's marker is served: a container's straight from its address
// by the test host (root, outside every sandbox); an agent session's through
// the gateway with its traffic token (the only way in from here).
export async function serving(s) {
  const ok = await until(async () => {
    if (s.kind === 'agent') {
      const r = await viaGateway(s.id, s.appPort, trafficToken(s)).catch(() => null);
      return r?.status === 200 && JSON.parse(r.text).marker === s.marker;
    }
    const r = await fetch(`http://${s.ip}:${APP_PORT}/`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    return r && (await r.text()) === s.marker;
  }, { timeoutMs: 20000, everyMs: 200 });
  if (!ok) throw new Error(`${s.kind}/${s.ws.name}: its app is not served`);
}

// The data plane, by headers (E2B_SANDBOX_URL): {status, text}.
export const INTERP_PORT = 49999;

export async function viaGateway(id, port, headers = {}, path = '/', { method = 'GET', body } = {}) {
  const r = await fetch(`${DATA_URL}${path}`, { method, body, headers: { 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': String(port), ...headers } });
  return { status: r.status, text: await r.text() };
}

export async function killAll(list) {
  await Promise.all(list.map((s) => s.sbx.kill().catch(() => {})));
}
