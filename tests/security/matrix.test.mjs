// The attacker's matrix (issue 25), over a sandbox of every kind in each of
// two workspaces. What a sandbox can reach, tried from inside as root: every other sandbox of both workspaces (envd's port and an app
// port it serves), every egress proxy, every address of the host with every
// port something listens on there (Redis, its sentinels, workerd's data ports,
// nginx, sshd, ...). Prints the whole matrix, then fails on every cell that
// was reached and should not have been. Each sandbox reaching its own app and,
// with a policy, its own proxy is the control: the probe works, the app runs.
// Then the control plane (every sandbox route with another workspace's keys,
// a join token, a worker's secret, no key, a forged key) and the data plane
// (envd and app ports without, or with another sandbox's, tokens; the
// gateway host's ports by a sandbox's host name).
//
// The agent-mode kind (decisions 0054, 0062) is a session on a person's
// machine (machine.sh, machine.mjs): a host of its own on the platform's LAN,
// with one agent per workspace, each as its own non-root user. What its
// sandbox reaches, and why, is not a container's:
// - its machine, by design: the session is the person's user on the person's
//   machine (tier NONE), so its own and the other agent's sessions, their
//   apps, the person's dev server and the agents' data ports are reached
//   (column "machine"). The wall there is what each service asks: another
//   session's envd answers 401 without its token, a data port 403 without the
//   gateway's signature; the other agent's worker secret and join token are
//   not readable (another user's). Its own worker's secret, join token and
//   workerd.conf are its person's files: a session reads them, and could
//   widen expose_ports for workerd's next start, unless the gate hardlocks
//   them (0054). 0062's walls hold against remote callers, not against the
//   session itself; its worker's credentials reach no user route (below).
// - the platform, only as any machine on its LAN does: no sandbox's address
//   or proxy (nothing routed into the sandbox networks), no platform service
//   of the host served (Redis, its replica and sentinels, the workerd data
//   ports, dockerd's ports: a "closed" answer is the host's kernel, as a LAN
//   neighbour gets; "open" fails), none of its files or dockerd's socket.
// - through the gateway (its own id and token, as the SDK calls it): its own
//   app, seeing it at its session's address; no port its workerd did not
//   expose (502): not the gateway host's loopback ports, nor the person's dev
//   server, nor the other agent's app (column "gateway").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { listeningTcp as listening } from '../lib/sockets.mjs';
import { KINDS, APP_PORT, ENVD_PORT, PROXY_PORT, Sandbox, workspace, make, hostFacts, probe, serving, killAll, call,
  corralctl, viaGateway, PC, startDevServer, stopAll, CLOSED_PORT, DEV_PORT, platformPorts, trafficToken, Volume,
  tunnelledWorker, INTERP_PORT } from './lib.mjs';

let all = [], a, b, dev;
const host = hostFacts();
const RUN = process.env.CORRAL_RUN;
const DATA_PORT = Number(process.env.CORRAL_PORT) + 1;

before(async () => {
  a = workspace('a'); b = workspace('b');
  // One agent per workspace on the person's machine (KINDS.agent), a's as
  // its first user, b's as its second.
  a.agentSlot = 0; b.agentSlot = 1;
  // Serially: a create's wait is the thing under test elsewhere, not here.
  for (const ws of [a, b]) for (const kind of Object.keys(KINDS)) all.push(await make(kind, ws));
  // The person's own dev server, as a's user, on all of the machine's addresses.
  dev = await startDevServer(a.agent);
  for (const s of all) await serving(s);
}, { timeout: 600_000 });

after(async () => {
  await killAll(all);
  await stopAll(); // the agents and the dev server
});

// What a cell's result must be. A container's wall is that nothing of the
// target answers ("reset" is a packet that crossed it); a LAN neighbour may
// be told "closed" by the host, never be served.
const CROSSED = new Set(['open', 'reset']);
const walled = (r) => !CROSSED.has(r);
const notServed = (r) => r !== 'open';
const opened = (r) => r === 'open';
const byDesign = () => true;
const status = (code) => (r) => r.status === code;
const unreadable = (r) => r !== 'read';

const tcp = (host_, port, label, col, want) => ({ type: 'tcp', key: `${host_}:${port}`, args: [host_, port], label, col, want });
const get = (key, url, headers, label, col, want, method = 'GET', body = null, cafile = null) =>
  ({ type: 'http', key, args: [key, url, method, headers, body, cafile], label, col, want });
const file = (path, label, col, want) => ({ type: 'files', key: path, args: path, label, col, want });
const who = (o) => `${o.kind}/${o.ws.name}`;

// The cells of one source, each {type, key, args, label, col, want}.
function targetsOf(src) {
  return src.kind === 'agent' ? agentTargetsOf(src) : containerTargetsOf(src);
}

function containerTargetsOf(src) {
  const t = [tcp(src.ip, APP_PORT, 'itself', 'self', opened)];
  for (const p of src.proxy) t.push(tcp(p, PROXY_PORT, 'its own proxy', 'self', opened));
  for (const o of all) {
    if (o === src) continue;
    t.push(tcp(o.ip, ENVD_PORT, `sandbox ${who(o)} envd`, 'sandboxes', walled),
      tcp(o.ip, o.appPort, `sandbox ${who(o)} app`, 'sandboxes', walled));
    for (const p of o.proxy) t.push(tcp(p, PROXY_PORT, `proxy of ${who(o)}`, 'proxies', walled));
    if (o.kind === 'interp') t.push(tcp(o.ip, INTERP_PORT, `sandbox ${who(o)} code interpreter`, 'sandboxes', walled));
  }
  // The agents' machine: its data ports and the person's dev server.
  for (const port of [...PC.dataPorts, DEV_PORT]) t.push(tcp(PC.addr, port, `the agents' machine, port ${port}`, 'sandboxes', walled));
  const boxes = all.filter((o) => o.gw);
  const next = boxes[(boxes.indexOf(src) + 1) % boxes.length];
  const hostAddrs = [...host.addrs, { addr: src.gw, dev: 'its own bridge' }, { addr: next.gw, dev: `bridge of ${who(next)}` }];
  for (const h of hostAddrs) for (const port of host.ports) t.push(tcp(h.addr, port, `host ${h.dev}`, 'host', walled));
  return t;
}

function agentTargetsOf(src) {
  const ca = `${src.agent.home}/ca.crt`;
  const gw = (port, label, want) => get(`gateway ${port}`, `https://127.0.0.1:${DATA_PORT}/who`,
    { 'E2b-Sandbox-Id': src.id, 'E2b-Sandbox-Port': String(port), ...trafficToken(src) }, label, 'gateway', want, 'GET', null, ca);
  const seenAtSession = (r) => { try { return r.status === 200 && JSON.parse(r.body).peer === src.session; } catch { return false; } };
  const t = [tcp('127.0.0.1', src.appPort, 'itself', 'self', opened), tcp(src.session, ENVD_PORT, 'its own envd', 'self', opened),
    // Its own app through the gateway, as a remote caller: seen at its session's address.
    { ...gw(src.appPort, 'its own app through the gateway', seenAtSession), col: 'self' }];
  for (const o of all) {
    if (o === src) continue;
    if (o.kind === 'agent') {
      t.push(tcp(o.session, ENVD_PORT, `${who(o)}'s envd`, 'machine', byDesign),
        get(`envd ${who(o)}`, `http://${o.session}:${ENVD_PORT}/process.Process/List`, { 'Content-Type': 'application/json' },
          `${who(o)}'s envd without its token`, 'machine', status(401), 'POST', '{}'),
        tcp('127.0.0.1', o.appPort, `${who(o)}'s app`, 'machine', byDesign),
        file(o.agent.stateFile, `${who(o)}'s worker secret`, 'files', unreadable),
        file(`${o.agent.home}/token`, `${who(o)}'s join token`, 'files', unreadable),
        ...(o.agent.tunnel ? [{ type: 'unix', key: `${o.agent.home}/state/dataport.sock`, args: `${o.agent.home}/state/dataport.sock`,
          label: `${who(o)}'s data port (its tunnel's far end, a socket)`, col: 'files', want: (r) => r !== 'open' }] : []),
        gw(o.appPort, `${who(o)}'s app port, by its own id`, status(502)));
      continue;
    }
    t.push(tcp(o.ip, ENVD_PORT, `sandbox ${who(o)} envd`, 'sandboxes', walled),
      tcp(o.ip, o.appPort, `sandbox ${who(o)} app`, 'sandboxes', walled));
    for (const p of o.proxy) t.push(tcp(p, PROXY_PORT, `proxy of ${who(o)}`, 'proxies', walled));
  }
  for (const port of PC.listening) {
    t.push(get(`data port ${port}`, `http://${PC.addr}:${port}/`, {}, `data port ${port} without the gateway's signature`, 'machine', status(403)));
  }
  t.push(tcp('127.0.0.1', DEV_PORT, "the person's dev server", 'machine', byDesign),
    file(src.agent.stateFile, 'its own worker secret (the same user)', 'machine', byDesign));
  const bridge = all.find((o) => o.gw);
  for (const h of [...host.addrs, { addr: bridge.gw, dev: `bridge of ${who(bridge)}` }]) {
    for (const port of platformPorts()) t.push(tcp(h.addr, port, `host ${h.dev}`, 'host', notServed));
  }
  for (const f of ['secret', 'gateway-secret', 'redis-password', 'redis-admin-password', 'redis-sentinel-password',
    'corral.conf', 'workerd.token', 'workerd-state/worker', 'tls/ca.key'].map((x) => `${RUN}/${x}`).filter(existsSync)) {
    t.push(file(f, `the platform's ${f.slice(RUN.length + 1)}`, 'files', unreadable));
  }
  t.push({ type: 'unix', key: '/var/run/docker.sock', args: '/var/run/docker.sock', label: "dockerd's socket", col: 'files', want: (r) => r !== 'open' });
  for (const [what, port] of [["Redis's port", Number(process.env.CORRAL_REDIS_PORT)], ["workerd's data port", Number(process.env.CORRAL_WORKERD_DATA_PORT)],
    ["nginx's port", Number(process.env.CORRAL_PORT)], ["the person's dev server", DEV_PORT]]) {
    t.push(gw(port, `${what}, by its own id`, status(502)));
  }
  return t;
}

// One probe of src over its cells: [{...cell, result}].
async function run(src) {
  const cells = [...new Map(targetsOf(src).map((c) => [`${c.type} ${c.key}`, c])).values()];
  if (src.kind !== 'agent') {
    const got = await probe(src, cells.map((c) => c.args));
    return cells.map((c) => ({ ...c, result: got[c.key] }));
  }
  const req = { tcp: [], http: [], files: [], unix: [] };
  for (const c of cells) req[c.type].push(c.args);
  const got = await probe(src, req);
  return cells.map((c) => ({ ...c, result: got[c.type][c.key] }));
}

const shown = (r) => (r && typeof r === 'object' ? String(r.status) : String(r));
const told = (r) => (r && typeof r === 'object' ? `${r.status} ${r.body.slice(0, 120)}` : String(r));

test('from every kind of sandbox, as root where it can be: no other sandbox, no proxy but its own, no port of the host', async () => {
  const rows = [], bad = [], agentCells = [];
  for (const src of all) {
    const row = { from: who(src), self: '', sandboxes: '.', proxies: '.', host: '.' };
    if (src.kind === 'agent') Object.assign(row, { machine: '', files: '.', gateway: '.' });
    let design = 0, broke = false;
    for (const c of await run(src)) {
      const ok = c.result !== undefined && c.want(c.result);
      if (src.kind === 'agent') agentCells.push({ from: row.from, cell: c.label, col: c.col, result: shown(c.result), ok: ok ? 'ok' : 'FAIL' });
      if (c.col === 'self') {
        row.self += ok ? 'ok ' : 'FAIL ';
        if (!ok) bad.push(`${row.from} -> ${c.label} ${c.key}: ${told(c.result)} (the control: it must be reached${c.type === 'http' ? `, the caller seen at ${src.session}` : ''})`);
      } else if (c.col === 'machine') {
        // Reached by design; the wall there is the service's own answer.
        design++;
        if (!ok) { broke = true; bad.push(`${row.from} -> ${c.label} ${c.key}: ${told(c.result)}`); }
      } else if (!ok) {
        row[c.col] = c.col === 'files' || c.col === 'gateway' ? 'BROKE' : 'REACHED';
        bad.push(`${row.from} -> ${c.label} ${c.key}: ${told(c.result)}`);
      }
    }
    if (src.kind === 'agent') row.machine = `${design} by design, walls ${broke ? 'BROKE' : 'held'}`;
    rows.push(row);
  }
  console.log(`\nreachability (from x to; '.' = every target walled), ${host.addrs.length} host addresses x ${host.ports.length} ports:`);
  console.table(rows);
  console.log('\nthe agent-mode rows, cell by cell (machine: reached by design, the service\'s own answer is the wall):');
  console.table(agentCells.filter((c) => c.col !== 'host' && c.col !== 'sandboxes' && c.col !== 'proxies' || c.ok !== 'ok'));
  const walledCells = agentCells.filter((c) => ['host', 'sandboxes', 'proxies'].includes(c.col) && c.ok === 'ok');
  const by = {};
  for (const c of walledCells) by[`${c.col} ${c.result}`] = (by[`${c.col} ${c.result}`] || 0) + 1;
  console.log(`(and ${walledCells.length} cells of the platform's sandboxes, proxies and host services, walled: ${JSON.stringify(by)})`);
  assert.deepEqual(bad, [], `cells reached that must not be:\n${bad.join('\n')}`);
});

// Every route that names a sandbox, with a body it would accept from its owner.
const ROUTES = [
  ['GET', '/v1/sandboxes/{id}'], ['GET', '/v1/sandboxes/{id}/metrics'],
  ['PUT', '/v1/sandboxes/{id}/network', { allowed_domains: ['evil.test'] }],
  ['POST', '/v1/sandboxes/{id}/pause'], ['POST', '/v1/sandboxes/{id}/resume'],
  ['POST', '/v1/sandboxes/{id}/snapshots', { name: 'stolen' }],
  ['GET', '/sandboxes/{id}'], ['GET', '/sandboxes/{id}/metrics'], ['GET', '/sandboxes/{id}/logs'],
  ['GET', '/v2/sandboxes/{id}/logs'], ['POST', '/sandboxes/{id}/timeout', { timeout: 1 }],
  ['PUT', '/sandboxes/{id}/network', { allowOut: ['evil.test'] }], ['POST', '/sandboxes/{id}/pause'],
  ['POST', '/sandboxes/{id}/resume', { timeout: 1 }], ['POST', '/sandboxes/{id}/refreshes', { duration: 1 }],
  ['POST', '/sandboxes/{id}/snapshots', {}], ['POST', '/sandboxes/{id}/fork', { count: 1 }],
  ['POST', '/sandboxes/{id}/connect', { timeout: 1 }], ['POST', '/v2/sandboxes/{id}/connect', { timeout: 1 }],
  ['GET', '/v1/internal/route/{id}'],
  ['DELETE', '/v1/sandboxes/{id}'], ['DELETE', '/sandboxes/{id}'],
];

// The credentials of everyone who is not workspace a's: {name: headers}.
function strangers() {
  const w = readFileSync(`${process.env.CORRAL_RUN}/workerd-state/worker`, 'utf8');
  const field = (k) => w.match(new RegExp(`^${k} = (\\S+)$`, 'm'))[1];
  const fleetToken = readFileSync(`${process.env.CORRAL_RUN}/workerd.token`, 'utf8').trim();
  const join = corralctl('join-token', 'create', '--workspace', a.id).token;
  const forged = a.member.slice(0, -8) + [...a.member.slice(-8)].map((c) => (c === '0' ? '1' : '0')).join('');
  // An agent's worker credentials: its workspace's join token, id and
  // secret, which any session of that agent can read (the same user).
  const agentWorker = (ws) => ({ Authorization: `Bearer ${ws.agent.token}`, 'X-Worker-Id': ws.agent.worker().id,
    'X-Worker-Secret': ws.agent.worker().secret });
  return {
    'b member': { 'X-API-Key': b.member },
    'b owner': { 'X-API-Key': b.owner },
    "a's join token": { Authorization: `Bearer ${join}` },
    'a worker': { Authorization: `Bearer ${fleetToken}`, 'X-Worker-Id': field('worker_id'), 'X-Worker-Secret': field('worker_secret') },
    "a's agent worker": agentWorker(a),
    "b's agent worker": agentWorker(b),
    'forged a key': { 'X-API-Key': forged },
    'no key': {},
  };
}

// The tunnelled workers (decision 0087): workerd-2 on this host and one
// agent on the person's machine offer no port at all; what reaches their
// sandboxes is their tunnel. The direct ones beside them are the control:
// ss sees their data ports.
test('a tunnelled worker, on the fleet or a person\'s machine, listens on no TCP port; a direct one does', () => {
  const wd2 = readFileSync(`${RUN}/pids/workerd-2.pid`, 'utf8').trim();
  const wd1 = readFileSync(`${RUN}/pids/workerd.pid`, 'utf8').trim();
  const agents = [a, b].map((ws) => ws.agent);
  const rows = [
    { worker: 'workerd (direct)', tunnel: false, ports: listening(wd1) },
    { worker: 'workerd-2 (tunnel)', tunnel: true, ports: listening(wd2) },
    ...agents.map((ag) => ({ worker: `agent/${ag.ws.name} (${ag.tunnel ? 'tunnel' : 'direct'})`, tunnel: ag.tunnel,
      ports: listening(ag.proc.pid) })),
  ];
  console.table(rows.map((r) => ({ ...r, ports: r.ports.join(' ') || '(none)' })));
  assert.ok(tunnelledWorker().id, 'workerd-2 has enrolled');
  assert.ok(agents.some((ag) => ag.tunnel) && agents.some((ag) => !ag.tunnel), 'one agent of each (env.sh)');
  for (const r of rows) {
    if (r.tunnel) assert.deepEqual(r.ports, [], `${r.worker} listens on ${r.ports.join(' ')}`);
    else assert.ok(r.ports.length > 0, `${r.worker}: its data port is not seen listening (the control)`);
  }
  // Its sandboxes were served all the same (the matrix's control cells and
  // the data-plane test): here, that the tunnelled kind was made at all.
  assert.ok(all.some((s) => s.kind === 'tunnelled'), 'the tunnelled kind was made');
});


test('the control plane: no route answers a stranger about, or changes, a sandbox of another workspace', async () => {
  const mine = all.filter((s) => s.ws === a);
  const before = new Map();
  for (const s of mine) before.set(s.id, (await call('GET', `/v1/sandboxes/${s.id}`, { key: a.member })).body);
  const bad = [], table = {};
  for (const [who, headers] of Object.entries(strangers())) {
    table[who] = {};
    for (const [method, route, body] of ROUTES) {
      const codes = new Set();
      for (const s of mine) {
        const r = await call(method, route.replace('{id}', s.id), { headers, body });
        codes.add(r.status);
        if (![401, 403, 404].includes(r.status)) bad.push(`${who}: ${method} ${route} on ${s.kind}: ${r.status} ${r.raw.slice(0, 120)}`);
        else if (typeof r.body !== 'object' || r.body?.code !== r.status) bad.push(`${who}: ${method} ${route}: not the error shape: ${r.raw.slice(0, 120)}`);
        if (s.sbx.envdAccessToken && r.raw.includes(s.sbx.envdAccessToken)) bad.push(`${who}: ${method} ${route} answered with ${s.kind}'s envd token`);
      }
      table[who][`${method} ${route}`] = [...codes].join(',');
    }
    // Lists and the batch metrics route: a's sandboxes never show.
    for (const path of ['/v1/sandboxes', '/v2/sandboxes', '/sandboxes', `/sandboxes/metrics?sandbox_ids=${mine.map((s) => s.id).slice(0, 100).join(',')}`]) {
      const r = await call('GET', path, { headers });
      if (mine.some((s) => r.raw.includes(s.id))) bad.push(`${who}: GET ${path} lists a sandbox of a`);
    }
  }
  console.log('\ncontrol plane: every stranger x route over the', mine.length, "kinds of a's sandboxes (statuses seen):");
  console.table(Object.fromEntries(ROUTES.map(([m, r]) => [`${m} ${r}`, Object.fromEntries(Object.keys(table).map((w) => [w, table[w][`${m} ${r}`]]))])));
  // Nothing changed: every sandbox runs, with the same deadline and policy, and answers.
  for (const s of mine) {
    const now = (await call('GET', `/v1/sandboxes/${s.id}`, { key: a.member })).body;
    const was = before.get(s.id);
    for (const k of ['state', 'expires_at', 'allowed_domains', 'egress_next']) {
      if (JSON.stringify(now[k]) !== JSON.stringify(was[k])) bad.push(`${s.kind}: ${k} changed from ${JSON.stringify(was[k])} to ${JSON.stringify(now[k])}`);
    }
    assert.equal(await s.sbx.files.read(s.markerFile, { user: 'root' }), s.marker);
  }
  // b's own snapshot kind made one of its own sandboxes; none of a's.
  const ids = new Set(mine.map((s) => s.id));
  for (const key of [a.member, b.member]) {
    const snaps = (await call('GET', '/v1/snapshots', { key })).body.snapshots;
    const stolen = snaps.filter((x) => x.name === 'stolen' || (key === b.member && ids.has(x.sandbox_id)));
    if (stolen.length) bad.push(`snapshots a stranger made: ${JSON.stringify(stolen)}`);
  }
  assert.deepEqual(bad, [], bad.join('\n'));
});

test("a member key: none of the owner's routes", async () => {
  const routes = [['PATCH', '/v1/workspace', { max_concurrent_sandboxes: 1000 }], ['POST', '/v1/keys', { role: 'owner' }],
    ['POST', '/v1/join-tokens', { ttl_seconds: 3600 }], ['GET', '/v1/audit'], ['DELETE', '/v1/workers/0000000000000000']];
  for (const [method, path, body] of routes) {
    const r = await call(method, path, { key: a.member, body });
    assert.equal(r.status, 403, `${method} ${path}: ${r.raw}`);
  }
});

// What the gateway answers with a sandbox's id and no token, or the token of
// another sandbox; the marker must never come back but where it should.
// Private kinds: 'private', and an agent session (decision 0062: private
// unless its workerd.conf says otherwise, whatever the caller asked).
const PRIVATE = new Set(['private', 'agent']);
test('the data plane: envd and app ports need their own sandbox\'s tokens; the host\'s ports are never behind a sandbox name', async () => {
  const bad = [], rows = [];
  const redisPort = Number(process.env.CORRAL_REDIS_PORT);
  // corral-tunneld's port holding a tunnel (the far end's of workerd-2's and
  // b's agent's): by a sandbox's name, no way into another worker's tunnel.
  const held = listening(readFileSync(`${RUN}/pids/tunneld.pid`, 'utf8').trim());
  assert.ok(held.length >= 2, `corral-tunneld holds ${held.length} tunnels' ports, not workerd-2's and b's agent's`);
  const tunneldPort = Number(held[0].split(':').pop());
  const other = (s) => all.find((o) => o.ws !== s.ws && o.kind === s.kind);
  // a's every kind, and b's agent too: one agent dials out through its
  // tunnel, the other offers its data port (env.sh), and both must hold.
  for (const s of all.filter((x) => x.ws === a || x.kind === 'agent')) {
    const o = other(s);
    const row = { kind: who(s) };
    const envd = async (h) => (await viaGateway(s.id, ENVD_PORT, { 'Content-Type': 'application/json', ...h }, '/process.Process/List')).status;
    row['envd, no token'] = await envd({});
    row["envd, b's token"] = await envd({ 'X-Access-Token': o.sbx.envdAccessToken || 'f'.repeat(64) });
    // A known sandbox, no or a foreign token: E2B's 401 (decision 0069).
    const secure = s.kind !== 'insecure';
    if (secure && row['envd, no token'] !== 401) bad.push(`${s.kind}: envd without a token: ${row['envd, no token']}, not 401`);
    if (secure && row["envd, b's token"] !== 401) bad.push(`${s.kind}: envd with b's token: ${row["envd, b's token"]}, not 401`);
    const priv = PRIVATE.has(s.kind);
    const app = await viaGateway(s.id, s.appPort);
    row['app, no traffic token'] = app.status;
    if (priv && app.status !== 403) bad.push(`${s.kind}: app without the traffic token: ${app.status}, not 403`);
    if (!priv && !app.text.includes(s.marker)) bad.push(`${s.kind}: its public app not served (${app.status} ${app.text.slice(0, 100)})`);
    if (priv) {
      const theirs = await viaGateway(s.id, s.appPort, { 'e2b-traffic-access-token': o.sbx.trafficAccessToken });
      row["app, b's traffic token"] = theirs.status;
      if (theirs.status !== 403) bad.push(`${s.kind}: app with b's traffic token: ${theirs.status}, not 403`);
    }
    // A host port by a sandbox's name reaches that sandbox's port, where
    // nothing listens (502), or, for a private one, the traffic token is
    // asked for before anything is connected (403): never the host's service.
    const refusal = priv ? 403 : 502;
    for (const port of [redisPort, Number(process.env.CORRAL_WORKERD_DATA_PORT), Number(process.env.CORRAL_PORT), tunneldPort]) {
      const r = await viaGateway(s.id, port, {}, '/');
      row[`host port ${port}`] = r.status;
      if (r.status !== refusal || !r.text.includes(`"code":${refusal}`)) bad.push(`${s.kind}: port ${port} by its name answered ${r.status} ${r.text.slice(0, 80)}`);
    }
    if (s.kind === 'agent') bad.push(...(await intoAgent(s, o, row)));
    if (s.kind === 'interp') bad.push(...(await intoInterp(s, o, row)));
    rows.push(row);
  }
  console.log('\ndata plane: statuses through the gateway, by header routing:');
  console.table(rows);
  assert.deepEqual(bad, [], bad.join('\n'));
});

// The code interpreter's server: running code needs the sandbox's own envd
// token, like envd (decision 0088); with it, the control, code runs.
async function intoInterp(s, o, row) {
  const bad = [];
  const run = async (h) => (await viaGateway(s.id, INTERP_PORT, { 'Content-Type': 'application/json', ...h }, '/execute',
    { method: 'POST', body: JSON.stringify({ code: 'print("ran")' }) }));
  row['interp, no token'] = (await run({})).status;
  row["interp, b's token"] = (await run({ 'X-Access-Token': o.sbx.envdAccessToken })).status;
  const own = await run({ 'X-Access-Token': s.sbx.envdAccessToken });
  row['interp, own token'] = own.status;
  if (row['interp, no token'] !== 401) bad.push(`interp: /execute without a token: ${row['interp, no token']}, not 401`);
  if (row["interp, b's token"] !== 401) bad.push(`interp: /execute with b's token: ${row["interp, b's token"]}, not 401`);
  if (own.status !== 200 || !own.text.includes('ran')) bad.push(`interp: its own token did not run code: ${own.status} ${own.text.slice(0, 100)}`);
  return bad;
}

// Into an agent session from outside, with its own traffic token (the
// walls of decision 0062 that a token does not open): only envd and the
// exposed ports are served; a port not exposed, where the person's dev
// server (0.0.0.0) or the other agent's app listens on the same machine, is answered
// as a port nothing listens on and never connected to; the app served sees
// the caller at the session's own address, not as localhost.
async function intoAgent(s, o, row) {
  const bad = [];
  const tok = trafficToken(s);
  if (!s.sbx.trafficAccessToken) bad.push(`${who(s)}: the create gave no traffic token: public by default`);
  const rec = (await call('GET', `/sandboxes/${s.id}`, { key: s.ws.member })).body;
  row['allowPublicTraffic'] = String(rec?.network?.allowPublicTraffic);
  if (rec?.network?.allowPublicTraffic !== false) bad.push(`${who(s)}: its record says allowPublicTraffic ${JSON.stringify(rec?.network)}`);
  const devBefore = dev.peers().length;
  const theirsBefore = readFileSync(o.peersLog, 'utf8');
  const served = await viaGateway(s.id, s.appPort, tok, '/who');
  let peer = null;
  try { peer = JSON.parse(served.text).peer; } catch { /* not the app */ }
  row['app, its token'] = served.status;
  row['the app saw'] = peer;
  if (served.status !== 200 || !served.text.includes(s.marker)) bad.push(`${who(s)}: its exposed app with its token: ${served.status} ${served.text.slice(0, 100)}`);
  if (['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(peer) || peer !== s.session) {
    bad.push(`${who(s)}: its app saw the gateway's caller as ${peer}, not at the session's own address ${s.session}`);
  }
  const closed = await viaGateway(s.id, CLOSED_PORT, tok);
  const same = (r, port) => r.text.replace(String(port), 'P') === closed.text.replace(String(CLOSED_PORT), 'P');
  const notExposed = [["the dev server", DEV_PORT], [`${who(o)}'s app`, o.appPort], ['Redis', Number(process.env.CORRAL_REDIS_PORT)],
    ["workerd's data port", Number(process.env.CORRAL_WORKERD_DATA_PORT)], ['nginx', Number(process.env.CORRAL_PORT)]];
  for (const [what, port] of notExposed) {
    const r = await viaGateway(s.id, port, tok, '/who');
    row[`${what}, its token`] = r.status;
    if (r.status !== 502 || !same(r, port)) bad.push(`${who(s)}: ${what} (port ${port}, not exposed) with its token: ${r.status} ${r.text.slice(0, 100)}, not as a closed port (${closed.status} ${closed.text.slice(0, 100)})`);
  }
  const devSeen = dev.peers().slice(devBefore);
  if (devSeen.length) bad.push(`${who(s)}: the dev server (not exposed) was connected to from ${devSeen.join(', ')}`);
  const theirsSeen = readFileSync(o.peersLog, 'utf8').slice(theirsBefore.length).split('\n').filter(Boolean);
  if (theirsSeen.length) bad.push(`${who(s)}: ${who(o)}'s app was connected to from ${theirsSeen.join(', ')}`);
  return bad;
}

// The volume file API (decision 0071), as an attacker would try it: a's
// volume (the volume kind's, mounted by a's sandbox) by every credential
// but its own token; traversal with its own token; what a's sandbox, root
// in the volume, can plant to lead workerd (root on this host) out of it;
// b's own volume token aimed at a's volume's directory on the host by path;
// a deleted volume's token; the worker's data port without corral-api's
// signature. Every answer is the error shape, and a's files are unchanged.
const volumeCall = async (id, op, query, { token, headers = {}, method = 'GET', body } = {}) => {
  const h = { ...headers };
  if (token !== undefined) h.Authorization = `Bearer ${token}`;
  const r = await fetch(`${process.env.E2B_API_URL}/volumecontent/${id}/${op}?${query}`, { method, headers: h, body });
  const raw = await r.text();
  let parsed = null;
  try { parsed = JSON.parse(raw); } catch { parsed = raw; }
  return { status: r.status, body: parsed, raw };
};

test("the volume file API: a's volume opens to its own token only, and nothing in it or in a path leads out", async () => {
  const vol = a.volume, theirs = b.volume;
  const src = all.find((s) => s.ws === a && s.kind === 'volume');
  assert.ok(vol && theirs && src, 'the volume kind made a volume in each workspace');
  const bad = [], table = {};
  const marker = `volume-marker-${randomBytes(4).toString('hex')}`;
  assert.equal((await volumeCall(vol.volumeId, 'file', 'path=%2Fmarker.txt', { token: vol.token, method: 'PUT', body: marker })).status, 201);
  const q = 'path=%2Fmarker.txt';
  const expect = (who, r, codes, pattern) => {
    table[who] = r.status;
    if (!codes.includes(r.status) || r.body?.code !== r.status || (pattern && !pattern.test(r.body?.message ?? ''))) {
      bad.push(`${who}: ${r.status} ${r.raw.slice(0, 160)}`);
    }
    if (r.raw.includes(marker)) bad.push(`${who}: answered with a's file`);
  };
  // Every credential that is not a's volume token, on a read and a write.
  const [, ws, id, exp, mac] = vol.token.split('.');
  const w = readFileSync(`${RUN}/workerd-state/worker`, 'utf8');
  const field = (k) => w.match(new RegExp(`^${k} = (\\S+)$`, 'm'))[1];
  const creds = {
    'no token': undefined,
    "a's member key": a.member,
    "a's owner key": a.owner,
    "b's member key": b.member,
    "a's sandbox's envd token": src.sbx.envdAccessToken ?? 'none',
    "a's join token": corralctl('join-token', 'create', '--workspace', a.id).token,
    "a worker's secret": field('worker_secret'),
    "a's token, b's workspace": ['cvt1', theirs.token.split('.')[1], id, exp, mac].join('.'),
    "a's token, a day later": ['cvt1', ws, id, String(Number(exp) + 86400), mac].join('.'),
    "a's token, another MAC": ['cvt1', ws, id, exp, [...mac].reverse().join('')].join('.'),
  };
  for (const [who, token] of Object.entries(creds)) {
    expect(`${who}: read`, await volumeCall(vol.volumeId, 'file', q, { token }), [401]);
    expect(`${who}: write`, await volumeCall(vol.volumeId, 'file', q, { token, method: 'PUT', body: 'stolen' }), [401]);
  }
  // b's own, valid token on a's volume: for another volume.
  for (const [op, method, query, body] of [['file', 'GET', q], ['file', 'PUT', q, 'stolen'], ['dir', 'GET', 'path=%2F'],
    ['path', 'DELETE', q], ['path', 'PATCH', q, JSON.stringify({ mode: 0o777 })]]) {
    expect(`b's volume token: ${method} ${op}`, await volumeCall(vol.volumeId, op, query, { token: theirs.token, method, body }), [403], /another volume/);
  }
  // b, with its own token on its own volume, asks for a's volume by its
  // directory on the host: every path is inside b's volume.
  const hostDir = `/var/lib/docker/volumes/corral-${vol.volumeId}/_data`;
  for (const path of [`${hostDir}/marker.txt`, `../../corral-${vol.volumeId}/_data/marker.txt`, `/../corral-${vol.volumeId}/_data/marker.txt`]) {
    expect(`b's token, path ${path.slice(0, 40)}`, await volumeCall(theirs.volumeId, 'file', `path=${encodeURIComponent(path)}`, { token: theirs.token }), [400, 404]);
  }
  // What a's sandbox, root in the volume, can leave there.
  const hostFile = `corral-sec-${randomBytes(4).toString('hex')}`;
  await src.sbx.commands.run(['ln -sfn / /data/sec-root', 'ln -sfn /etc /data/sec-etc', 'ln -sfn /proc/1/root /data/sec-proc',
    'ln -sfn ../../../../../../../../../etc/hostname /data/sec-up', 'rm -f /data/sec-fifo', 'mkfifo /data/sec-fifo',
    `ln -sfn /var/lib/docker/volumes/corral-${theirs.volumeId}/_data /data/sec-theirs`].join(' && '), { user: 'root' });
  expect('through a link to /', await volumeCall(vol.volumeId, 'file', 'path=%2Fsec-root%2Fetc%2Fhostname', { token: vol.token }), [404]);
  expect('through a link to /etc', await volumeCall(vol.volumeId, 'file', 'path=%2Fsec-etc%2Fpasswd', { token: vol.token }), [404]);
  expect('through a link up', await volumeCall(vol.volumeId, 'file', 'path=%2Fsec-up', { token: vol.token }), [404]);
  expect('through /proc/1/root', await volumeCall(vol.volumeId, 'dir', 'path=%2Fsec-proc', { token: vol.token }), [404]);
  expect("through a link to b's volume", await volumeCall(vol.volumeId, 'dir', 'path=%2Fsec-theirs', { token: vol.token }), [404]);
  expect('a write through a link to /etc', await volumeCall(vol.volumeId, 'file', `path=%2Fsec-etc%2F${hostFile}`, { token: vol.token, method: 'PUT', body: 'x' }), [404]);
  expect('a directory through a link to /etc', await volumeCall(vol.volumeId, 'dir', `path=%2Fsec-etc%2F${hostFile}&force=true`, { token: vol.token, method: 'POST' }), [404]);
  if (existsSync(`/etc/${hostFile}`)) bad.push(`/etc/${hostFile} was made on the host`);
  const rootMode = statSync('/').mode;
  expect("a mode on a link to /", await volumeCall(vol.volumeId, 'path', 'path=%2Fsec-root', { token: vol.token, method: 'PATCH', body: JSON.stringify({ mode: 0o777 }) }), [400]);
  if (statSync('/').mode !== rootMode) bad.push("the host's / changed mode");
  const t0 = Date.now();
  expect('a FIFO', await volumeCall(vol.volumeId, 'file', 'path=%2Fsec-fifo', { token: vol.token }), [400], /not a regular file/);
  if (Date.now() - t0 > 5000) bad.push(`a FIFO's read took ${Date.now() - t0} ms`);
  // Traversal with a's own token, however spelled.
  for (const path of ['..%2F..%2Fetc%2Fpasswd', '%2F..', 'a%2F..%2F..%2Fb', '%2e%2e%2Fetc']) {
    expect(`'..' as ${path}`, await volumeCall(vol.volumeId, 'file', `path=${path}`, { token: vol.token }), [400], /'\.\.'/);
  }
  // A deleted volume's token opens nothing.
  const gone = await Volume.create(`sec-gone-${randomBytes(3).toString('hex')}`, { apiKey: a.member });
  await Volume.destroy(gone.volumeId, { apiKey: a.member });
  expect("a deleted volume's token", await volumeCall(gone.volumeId, 'dir', 'path=%2F', { token: gone.token }), [404], /volume not found/);
  // The worker's data port, straight: a volume request with no valid
  // signature (corral-api's, under the worker's data key) is refused there.
  for (const gateway of [null, `${Math.floor(Date.now() / 1000)}:${'0'.repeat(64)}`]) {
    const headers = { 'X-Corral-Volume': `corral-${vol.volumeId}`, 'X-Corral-Workspace': a.id, ...(gateway ? { 'X-Corral-Gateway': gateway } : {}) };
    for (const host_ of ['127.0.0.1', ...host.addrs.map((x) => x.addr)]) {
      const r = await fetch(`http://${host_}:${process.env.CORRAL_WORKERD_DATA_PORT}/volumecontent/${vol.volumeId}/file?${q}`, { headers })
        .then(async (x) => ({ status: x.status, raw: await x.text() }), () => null);
      if (!r) continue; // not listening there
      table[`data port ${host_}, ${gateway ? 'forged' : 'no'} signature`] = r.status;
      if (r.status !== 403 || r.raw.includes(marker)) bad.push(`data port ${host_}: ${r.status} ${r.raw.slice(0, 120)}`);
    }
  }
  console.log("\nthe volume file API against a's volume (statuses):");
  console.table(table);
  const now = await volumeCall(vol.volumeId, 'file', q, { token: vol.token });
  if (now.raw !== marker) bad.push(`a's file changed: ${now.raw.slice(0, 80)}`);
  assert.deepEqual(bad, [], bad.join('\n'));
});

// A worker's reach into the secrets of the sandboxes it does not run
// (decisions 0090, 0091): a proxy's placeholders and its transform counts are
// asked for by its worker, for a sandbox running there, and by no other
// worker: the fleet's two, and each agent's (whose credentials any session of
// that agent can read). The positive control: the rules kind's own worker
// gets a token.
test('a worker resolves placeholders, and reports transforms, only for sandboxes it runs', async () => {
  const read = (f) => readFileSync(`${RUN}/${f}`, 'utf8');
  const field = (w, k) => w.match(new RegExp(`^${k} = (\\S+)$`, 'm'))[1];
  const fleet = read('workerd.token').trim();
  const creds = {
    workerd: { id: field(read('workerd-state/worker'), 'worker_id'), secret: field(read('workerd-state/worker'), 'worker_secret'), token: fleet },
    'workerd-2': { ...tunnelledWorker(), token: fleet },
    "a's agent": { ...a.agent.worker(), token: a.agent.token },
    "b's agent": { ...b.agent.worker(), token: b.agent.token },
  };
  const bad = [], table = {};
  const runsOn = {};
  let controls = 0;
  for (const s of all.filter((x) => x.kind !== 'agent')) {
    const view = (await call('GET', `/v1/sandboxes/${s.id}`, { key: s.ws.member })).body;
    runsOn[s.id] = view.worker_id;
    for (const [who, c] of Object.entries(creds)) {
      const headers = { Authorization: `Bearer ${c.token}`, 'X-Worker-Id': c.id, 'X-Worker-Secret': c.secret };
      const resolve = await call('POST', '/v1/worker/egress-resolve', { headers,
        body: { sandbox: s.id, host: 'api.allowed.test', tokens: s.kind === 'rules' ? ['t'] : [] } });
      const audit = await call('POST', '/v1/worker/egress-audit', { headers,
        body: { sandbox: s.id, audit: [{ host: 'forged.test', headers: ['X-Forged'], count: 1 }] } });
      table[`${who} -> ${s.kind}/${s.ws.name}`] = `${resolve.status} ${audit.status}`;
      if (view.worker_id === c.id && view.state === 'running') {
        if (s.kind === 'rules' && (resolve.status !== 200 || !/^ey/.test(resolve.body?.tokens?.t ?? ''))) bad.push(`${who}: its own rules sandbox got ${resolve.status}`);
        controls += s.kind === 'rules';
        continue;
      }
      for (const [route, r] of [['egress-resolve', resolve], ['egress-audit', audit]]) {
        if (![401, 403, 404].includes(r.status)) bad.push(`${who}: ${route} for ${s.kind}/${s.ws.name} it does not run: ${r.status} ${r.raw.slice(0, 120)}`);
      }
    }
  }
  console.log('\nworker credentials x sandboxes: egress-resolve, egress-audit statuses');
  console.table(table);
  assert.ok(controls >= 2, 'the rules kind of both workspaces was resolved by its own worker (the control)');
  // Recorded only from the worker that runs the sandbox (its own counts).
  for (const ws of [a, b]) {
    const events = (await call('GET', '/v1/audit?event=egress_transform&limit=1000', { key: ws.owner })).body.events ?? [];
    for (const e of events) {
      if (e.reason.includes('forged.test') && e.worker_id !== runsOn[e.sandbox_id]) bad.push(`recorded from a worker that does not run ${e.sandbox_id}: ${JSON.stringify(e)}`);
    }
  }
  assert.deepEqual(bad, [], bad.join('\n'));
});
