// workerd -mode agent (issue 13, decision 0054) through the real e2b SDK: the
// test starts its own agent-mode workerd beside the stack's Docker one,
// enrolled with a join token of a fresh workspace, so that workspace's pool
// holds only this worker. Its sandboxes are envd sessions on this machine, as
// the user running the test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { until } from '../lib/poll.mjs';
import { Sandbox, MODE, gatewayUrl } from './lib.mjs';
import { startAgent, stopAgent, launchAgent, workerId, agentEnvds, alive } from './agent_lib.mjs';

process.env.CORRAL_URL ||= process.env.E2B_API_URL;
const { api, corralctl, newWorkspace } = await import('../lib/corral.mjs');

let dir, workTree, ws, other, agent;

const native = (id, key) => api('GET', `/v1/sandboxes/${id}`, { key });

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-agent-'));
  workTree = path.join(dir, 'tree');
  fs.mkdirSync(workTree);
  fs.writeFileSync(path.join(workTree, 'marker.txt'), 'made by the test\n');
  ws = newWorkspace();
  other = newWorkspace();
  agent = await startAgent(dir, 'agent', corralctl('join-token', 'create', '--workspace', ws.id).token, workTree);
  await until(() => /enrolled as worker/.test(agent.read()), { timeoutMs: 15000 });
});

after(async () => {
  await stopAgent(agent);
  if (dir && !process.env.CORRAL_KEEP) fs.rmSync(dir, { recursive: true, force: true });
});

test(`[${MODE}] agent: joins its workspace with tier NONE and advertises template base`, async () => {
  const r = await api('GET', '/v1/workers', { key: ws.member });
  assert.equal(r.status, 200, r.raw);
  const mine = (r.body.workers || r.body).filter((w) => w.worker_id === workerId(agent).id);
  assert.equal(mine.length, 1, r.raw);
  assert.deepEqual(mine[0].runtimes, [{ name: 'agent', tier: 'NONE' }]);
  assert.deepEqual(mine[0].templates, ['base']);
});

test(`[${MODE}] agent: with os_sandbox = bwrap it reports tier CONTAINER`, async () => {
  const alone = newWorkspace();
  const w = await startAgent(dir, 'bwrap', corralctl('join-token', 'create', '--workspace', alone.id).token, workTree,
    'os_sandbox = bwrap');
  try {
    await until(() => /enrolled as worker/.test(w.read()), { timeoutMs: 15000 });
    const r = await api('GET', '/v1/workers', { key: alone.member });
    assert.deepEqual((r.body.workers || r.body).map((x) => x.runtimes), [[{ name: 'agent', tier: 'CONTAINER' }]]);
  } finally {
    await stopAgent(w);
  }
});

test(`[${MODE}] agent: commands, files, watch and a PTY run on this machine as its user`, async () => {
  const sbx = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 60_000 });
  try {
    const rec = await native(sbx.sandboxId, ws.member);
    assert.equal(rec.body.worker_id, workerId(agent).id);
    assert.equal(rec.body.runtime, 'agent');
    assert.equal(rec.body.isolation, 'NONE');

    // The invoking user, whatever name the SDK sends; the host's files.
    for (const user of ['user', 'root']) {
      const id = await sbx.commands.run('id -u', { user });
      assert.equal(id.stdout.trim(), String(process.getuid()));
    }
    const cat = await sbx.commands.run(`cat ${workTree}/marker.txt && hostname`);
    assert.equal(cat.stdout, `made by the test\n${os.hostname()}\n`);

    // Files, both ways between the SDK and this machine.
    await sbx.files.write(`${workTree}/from-sdk.txt`, 'written through envd');
    assert.equal(fs.readFileSync(path.join(workTree, 'from-sdk.txt'), 'utf8'), 'written through envd');
    assert.equal(await sbx.files.read(`${workTree}/marker.txt`), 'made by the test\n');
    const names = (await sbx.files.list(workTree)).map((e) => e.name).sort();
    assert.deepEqual(names, ['from-sdk.txt', 'marker.txt']);

    // watchDir sees a file this process makes.
    const events = [];
    const h = await sbx.files.watchDir(workTree, (e) => events.push(e));
    fs.writeFileSync(path.join(workTree, 'watched.txt'), 'x');
    await until(() => events.some((e) => e.name === 'watched.txt'), { timeoutMs: 10000 });
    await h.stop();

    // A PTY.
    let out = '';
    const dec = new TextDecoder();
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += dec.decode(d); } });
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode(`cat ${workTree}/marker.txt; id -u\n`));
    await until(() => /made by the test/.test(out) && new RegExp(`\\b${process.getuid()}\\b`).test(out),
      { timeoutMs: 10000 });
    await sbx.pty.kill(pty.pid);

    // Pause and snapshots are refused by name, nothing changed.
    const p = await api('POST', `/sandboxes/${sbx.sandboxId}/pause`, { key: ws.member });
    assert.equal(p.status, 409, p.raw);
    assert.match(p.body.message, /agent mode/);
    const s = await api('POST', `/sandboxes/${sbx.sandboxId}/snapshots`, { key: ws.member, body: {} });
    assert.equal(s.status, 409, s.raw);
    assert.equal((await native(sbx.sandboxId, ws.member)).body.state, 'running');
  } finally {
    await sbx.kill().catch(() => {});
  }
});

test(`[${MODE}] agent: the token is never in argv; a kill ends envd and everything it started`, async () => {
  const before = new Set(agentEnvds(agent.proc.pid).map((p) => p.pid));
  const sbx = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 60_000, secure: true });
  const envd = agentEnvds(agent.proc.pid).filter((p) => !before.has(p.pid));
  assert.equal(envd.length, 1, 'one envd per sandbox, started by workerd');
  const { pid, argv } = envd[0];
  assert.ok(argv.includes('-addr') && /^127\./.test(argv[argv.indexOf('-addr') + 1]), argv.join(' '));
  // envd wiped the value in its original environment block (what /proc shows).
  assert.doesNotMatch(fs.readFileSync(`/proc/${pid}/environ`, 'utf8'), /CORRAL_ENVD_ACCESS_TOKEN=[^\0]/);
  if (sbx.envdAccessToken) assert.ok(!argv.join(' ').includes(sbx.envdAccessToken));
  // Its own session (setsid), so only the tree walk finds it.
  const bg = await sbx.commands.run('sleep 300', { background: true });
  assert.ok(alive(bg.pid));
  await sbx.kill();
  await until(() => !alive(pid) && !alive(bg.pid), { timeoutMs: 10000 });
  assert.equal(alive(pid), false, 'envd ended');
  assert.equal(alive(bg.pid), false, 'the command it started ended');
});

test(`[${MODE}] agent: a sandbox's timeout ends its envd too`, async () => {
  const before = new Set(agentEnvds(agent.proc.pid).map((p) => p.pid));
  const sbx = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 2_000 });
  const [{ pid }] = agentEnvds(agent.proc.pid).filter((p) => !before.has(p.pid));
  const bg = await sbx.commands.run('sleep 300', { background: true });
  await until(() => !alive(pid) && !alive(bg.pid), { timeoutMs: 15000 });
  assert.equal(alive(pid), false, 'envd ended at the timeout');
  assert.equal(alive(bg.pid), false, 'and what it started');
});

test(`[${MODE}] agent: an envd that dies on its own ends its sandbox`, async () => {
  const before = new Set(agentEnvds(agent.proc.pid).map((p) => p.pid));
  const sbx = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 60_000 });
  const [{ pid }] = agentEnvds(agent.proc.pid).filter((p) => !before.has(p.pid));
  process.kill(pid, 'SIGKILL');
  let rec;
  await until(async () => { rec = (await native(sbx.sandboxId, ws.member)).body; return rec.state !== 'running'; },
    { timeoutMs: 10000 });
  assert.equal(rec.state, 'exited', JSON.stringify(rec));
  assert.match(rec.reason, /signal 9/);
});

test(`[${MODE}] agent: gate decisions reach the workspace audit; not another workspace's`, async () => {
  const sbx = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 60_000 });
  try {
    const wid = workerId(agent);
    // As the gate writes it (the contract of issue 13), appended.
    fs.mkdirSync(agent.gate, { recursive: true });
    const line = { time: new Date().toISOString(), sandbox: sbx.sandboxId, op: 'read',
      path: '/home/someone/.ssh/id_rsa', branch: 'hardlock', answer: 'deny', by: 'gate' };
    fs.appendFileSync(path.join(agent.gate, 'audit.jsonl'), `${JSON.stringify(line)}\n`);
    let ev;
    await until(async () => {
      const r = await api('GET', `/v1/audit?event=gate_denied&sandbox=${sbx.sandboxId}`, { key: ws.owner });
      ev = r.body.events?.[0];
      return !!ev;
    }, { timeoutMs: 10000 });
    assert.equal(ev.actor, `worker:${wid.id}`);
    assert.equal(ev.worker_id, wid.id);
    assert.deepEqual(JSON.parse(ev.reason), line);

    // As an attacker holding this worker's token and secret: a decision about
    // another workspace's sandbox is refused, and nothing lands in its audit.
    const victim = await Sandbox.create('base', { apiKey: other.member, timeoutMs: 60_000 });
    try {
      const headers = { Authorization: `Bearer ${fs.readFileSync(agent.tokenFile, 'utf8').trim()}`,
        'X-Worker-Id': wid.id, 'X-Worker-Secret': wid.secret };
      const forged = JSON.stringify({ ...line, sandbox: victim.sandboxId });
      const r = await api('POST', '/v1/worker/audit', { headers, body: { lines: [forged] } });
      assert.equal(r.status, 200, r.raw);
      assert.deepEqual(r.body, { accepted: 0, refused: [0] });
      const bad = await api('POST', '/v1/worker/audit', { headers, body: { lines: ['{"op":"read"}'] } });
      assert.equal(bad.status, 400, bad.raw);
      const theirs = await api('GET', '/v1/audit?event=gate_denied', { key: other.owner });
      assert.equal(theirs.status, 200, theirs.raw);
      assert.deepEqual(theirs.body.events, []);
    } finally {
      await victim.kill().catch(() => {});
    }
  } finally {
    await sbx.kill().catch(() => {});
  }
});

// The walls of decision 0062, tried as an attacker who learned a sandbox id:
// services of this machine listening on all addresses (a dev server, a
// database) must not be served through the gateway, and none may see a
// remote caller as 127.0.0.1.
const through = async (sbx, port, headers = {}) => {
  const g = gatewayUrl(sbx, port);
  const r = await fetch(`${g.url}/who`, { headers: { ...g.headers, ...headers } });
  return { status: r.status, text: await r.text() };
};

// A service of "the person's machine" on 0.0.0.0: answers with the address
// it sees the caller at, and counts its connections.
async function machineService() {
  const seen = [];
  const srv = http.createServer((req, res) => res.end(JSON.stringify({ peer: req.socket.remoteAddress })));
  srv.on('connection', (s) => seen.push(s.remoteAddress));
  await new Promise((ok) => srv.listen(0, '0.0.0.0', ok));
  return { port: srv.address().port, seen, close: () => new Promise((ok) => srv.close(ok)) };
}

test(`[${MODE}] agent: only envd and the exposed ports are served, privately, never as localhost`, async () => {
  const exposed = await machineService();
  const hidden = await machineService();
  const free = await machineService();
  await free.close(); // a port nothing listens on, for the answer's shape
  const mine = newWorkspace();
  const w = await startAgent(dir, 'walls', corralctl('join-token', 'create', '--workspace', mine.id).token, workTree,
    `expose_ports = ${exposed.port}`);
  try {
    await until(() => /enrolled as worker/.test(w.read()), { timeoutMs: 15000 });
    const before = new Set(agentEnvds(w.proc.pid).map((p) => p.pid));
    const sbx = await Sandbox.create('base', { apiKey: mine.member, timeoutMs: 60_000 });
    try {
      const [{ argv }] = agentEnvds(w.proc.pid).filter((p) => !before.has(p.pid));
      const sessionAddr = argv[argv.indexOf('-addr') + 1];
      const token = sbx.trafficAccessToken;
      const tok = { 'e2b-traffic-access-token': token ?? '' };

      // A port the person did not expose: never connected to, with or without
      // the token, and answered as a port nothing listens on.
      for (const [h, status] of [[{}, 403], [tok, 502]]) {
        const r = await through(sbx, hidden.port, h);
        assert.equal(r.status, status, `hidden port ${hidden.port} was served: ${r.text}`);
      }
      const refusedHidden = await through(sbx, hidden.port, tok);
      const refusedFree = await through(sbx, free.port, tok);
      assert.equal(refusedHidden.text.replace(String(hidden.port), 'P'), refusedFree.text.replace(String(free.port), 'P'));
      assert.deepEqual(hidden.seen, [], 'nothing connected to the unexposed service');

      // Private by default: the SDK got a traffic token, the record says so.
      assert.ok(token, 'an agent sandbox is private by default: the create gave a traffic token');
      assert.equal((await api('GET', `/sandboxes/${sbx.sandboxId}`, { key: mine.member })).body.network
        .allowPublicTraffic, false);

      // The exposed port: refused without the token (403, as E2B: decision
      // 0069), served with it, and the service sees the session's own
      // address, not localhost.
      const anon = await through(sbx, exposed.port);
      assert.equal(anon.status, 403, anon.text);
      assert.equal(JSON.parse(anon.text).code, 403);
      assert.deepEqual(exposed.seen, [], 'nothing reached the exposed service without the token');
      const ok = await through(sbx, exposed.port, tok);
      assert.equal(ok.status, 200, ok.text);
      const { peer } = JSON.parse(ok.text);
      assert.ok(!['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(peer), `the service saw the caller as ${peer}`);
      assert.equal(peer, sessionAddr, 'the caller comes from the session\'s own address');

      // envd works for the SDK as before (its token, no traffic token).
      assert.equal((await sbx.commands.run('echo walls')).stdout, 'walls\n');
      await sbx.files.write(`${workTree}/walls.txt`, 'through envd');
      assert.equal(await sbx.files.read(`${workTree}/walls.txt`), 'through envd');
    } finally {
      await sbx.kill().catch(() => {});
    }

    // Asking for public traffic does not make it public on this machine;
    // secure: false (an envd anyone could drive) is refused outright.
    const asked = await Sandbox.create('base', { apiKey: mine.member, timeoutMs: 60_000,
      network: { allowPublicTraffic: true } });
    try {
      assert.ok(asked.trafficAccessToken);
      assert.equal((await through(asked, exposed.port)).status, 403);
    } finally {
      await asked.kill().catch(() => {});
    }
    // (The SDK 2.x never sends secure: false; a raw client can.)
    const insecure = await api('POST', '/sandboxes', { key: mine.member, body: { templateID: 'base', secure: false } });
    assert.equal(insecure.status, 502, insecure.raw);
    assert.match(insecure.body.message, /must be secure/);
  } finally {
    await stopAgent(w);
    await exposed.close();
    await hidden.close();
  }
});

test(`[${MODE}] agent: allow_public_traffic = yes lets its sandboxes be public, still only exposed ports`, async () => {
  const exposed = await machineService();
  const hidden = await machineService();
  const mine = newWorkspace();
  const w = await startAgent(dir, 'public', corralctl('join-token', 'create', '--workspace', mine.id).token, workTree,
    `expose_ports = ${exposed.port}\nallow_public_traffic = yes`);
  try {
    await until(() => /enrolled as worker/.test(w.read()), { timeoutMs: 15000 });
    const sbx = await Sandbox.create('base', { apiKey: mine.member, timeoutMs: 60_000 });
    try {
      assert.equal(sbx.trafficAccessToken, undefined, 'public: no traffic token');
      const r = await through(sbx, exposed.port);
      assert.equal(r.status, 200, r.text);
      assert.notEqual(JSON.parse(r.text).peer, '127.0.0.1');
      assert.equal((await through(sbx, hidden.port)).status, 502);
      assert.deepEqual(hidden.seen, []);
    } finally {
      await sbx.kill().catch(() => {});
    }
  } finally {
    await stopAgent(w);
    await exposed.close();
    await hidden.close();
  }
});

test(`[${MODE}] agent: an unscoped join token is refused at handshake, nothing registered`, async () => {
  const fleetToken = corralctl('join-token', 'create').token;
  const body = { hostname: 'x', runtimes: [{ name: 'agent', tier: 'NONE' }], egress: false, cpu_cores: 1,
    memory_mb: 1024, slots: 1, data_addr: '127.0.0.1:7001', templates: ['base'], mode: 'agent' };
  const r = await api('POST', '/v1/worker/handshake', { body, headers: { Authorization: `Bearer ${fleetToken}` } });
  assert.equal(r.status, 403, r.raw);
  assert.match(r.body.message, /workspace-scoped join token/);
  // workerd itself says so, and never enrols.
  const w = await startAgent(dir, 'unscoped', fleetToken, workTree);
  try {
    await until(() => /handshake answered 403: an agent-mode worker needs a workspace-scoped/.test(w.read()),
      { timeoutMs: 15000 });
    assert.doesNotMatch(w.read(), /enrolled as worker/);
    assert.equal(fs.existsSync(path.join(w.home, 'state', 'worker')), false);
  } finally {
    await stopAgent(w);
  }
});

test(`[${MODE}] agent: another workspace's sandbox never lands on it, even as the only eligible worker`, async () => {
  // Restarted with a template no other worker has: for that template it is
  // the only eligible worker of the whole platform.
  const old = agent;
  const first = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 60_000 });
  const [{ pid }] = agentEnvds(old.proc.pid);
  await stopAgent(old);
  assert.equal(alive(pid), false, 'sessions end with workerd (decision 0054)');
  const tmpl = `agent-only-${Date.now().toString(36)}`;
  fs.appendFileSync(old.conf, `\ntemplate = ${tmpl}\n`);
  agent = launchAgent(old, workTree);
  await until(() => (old.read().match(/enrolled as worker/g) || []).length >= 2, { timeoutMs: 15000 });
  // The session of before the restart is gone for the control plane too.
  await until(async () => (await native(first.sandboxId, ws.member)).body.state !== 'running', { timeoutMs: 15000 });

  await assert.rejects(Sandbox.create(tmpl, { apiKey: other.member, timeoutMs: 30_000 }));
  const mine = await Sandbox.create(tmpl, { apiKey: ws.member, timeoutMs: 60_000 });
  try {
    assert.equal((await native(mine.sandboxId, ws.member)).body.worker_id, workerId(agent).id);
  } finally {
    await mine.kill().catch(() => {});
  }
});
