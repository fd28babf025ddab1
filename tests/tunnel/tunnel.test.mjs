// A worker reached only through its tunnel (issue 29, decision 0087), tested
// as an attacker would: a worker with credentials of its own, another
// workspace's join token, a tunnel that opens streams itself, a tunnel cut
// under a stream in flight. Run by tests/tunnel/run.sh (the stack's workerd
// has `tunnel = on`; corral-tunneld holds its tunnel).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { RUN, api, corralctl, redis, stack, eventually } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { listeningTcp, socketsOf, tcpSockets } from '../lib/sockets.mjs';
import { upgrade } from '../lib/tunnel_client.mjs';
import { Sandbox, sleep } from '../e2b/lib.mjs';

const PORT = Number(process.env.CORRAL_PORT);
const SANDBOX_URL = `https://localhost:${PORT + 1}`;
const workerdPid = () => Number(readFileSync(`${RUN}/pids/workerd.pid`, 'utf8'));
const workerdId = () => /worker_id = (\w+)/.exec(readFileSync(`${RUN}/workerd-state/worker`, 'utf8'))[1];
const tunnelRecord = (pool, wid) => redis('GET', `corral:{ws:${pool}}:worker:${wid}:tunnel`);
const [TUNNEL_LO, TUNNEL_HI] = [PORT + 50, PORT + 81];

const sandboxes = [];
after(async () => { for (const s of sandboxes) await s.kill().catch(() => {}); });
async function sandbox(opts = {}) {
  const s = await Sandbox.create('base', { timeoutMs: 300_000, ...opts });
  sandboxes.push(s);
  return s;
}

// A tunnelled worker of its own: the join token of pool (a workspace id, or
// '' for the fleet) and a handshake with "tunnel": true.
async function tunnelledWorker(workspace) {
  const jt = corralctl('join-token', 'create', ...(workspace ? ['--workspace', workspace] : [])).token;
  const w = new TestWorker(jt, { handshakeExtra: { tunnel: true, data_addr: undefined }, name: 'tw-tunnel' });
  await w.handshake();
  return w;
}

// HTTP/2 frames read off a raw socket, after the client's connection
// preface that the daemon (the HTTP/2 client) sends first: [{type, flags, stream}].
const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
function frames(socket) {
  const seen = [];
  let buf = socket.rest || Buffer.alloc(0), preface = false;
  const parse = () => {
    if (!preface) {
      if (buf.length < PREFACE.length) return;
      assert.equal(buf.subarray(0, PREFACE.length).toString(), PREFACE, 'the daemon\'s connection preface');
      buf = buf.subarray(PREFACE.length);
      preface = true;
    }
    while (buf.length >= 9) {
      const len = buf.readUIntBE(0, 3);
      if (buf.length < 9 + len) return;
      seen.push({ type: buf[3], flags: buf[4], stream: buf.readUInt32BE(5) & 0x7fffffff });
      buf = buf.subarray(9 + len);
    }
  };
  parse();
  socket.on('data', (d) => { buf = Buffer.concat([buf, d]); parse(); });
  socket.resume();
  return seen;
}
const closed = (socket) => new Promise((r) => { if (socket.destroyed) r(); socket.once('close', r); });

async function envdHealth(sbx) {
  const res = await fetch(`${SANDBOX_URL}/health`, { headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' } });
  return { status: res.status, text: await res.text() };
}

test('workerd listens on no TCP port: its sandboxes are reached through corral-tunneld\'s port', async () => {
  assert.deepEqual(listeningTcp(workerdPid()), [], 'workerd holds a listening TCP socket');
  const addr = tunnelRecord('', workerdId());
  const m = /^127\.0\.0\.1:(\d+)$/.exec(addr);
  assert.ok(m && Number(m[1]) >= TUNNEL_LO && Number(m[1]) <= TUNNEL_HI, `the tunnel's record: "${addr}"`);
  const tunneld = Number(readFileSync(`${RUN}/pids/tunneld.pid`, 'utf8'));
  assert.ok(listeningTcp(tunneld).length >= 1, 'corral-tunneld listens on the worker\'s port');
  const sbx = await sandbox();
  const r = await sbx.commands.run('echo through-the-tunnel', { user: 'root' });
  assert.equal(r.stdout, 'through-the-tunnel\n');
  await sbx.files.write('/tmp/t.bin', 'x'.repeat(1 << 20));
  assert.equal((await sbx.files.read('/tmp/t.bin')).length, 1 << 20);
});

test('a tunnel needs a tunnelled worker\'s own credentials: none, a wrong secret, another workspace\'s token, a worker with a data port', async () => {
  const ws = corralctl('workspace', 'create', 'tun-attacker').workspace;
  const other = corralctl('workspace', 'create', 'tun-victim').workspace;
  const victim = await tunnelledWorker(other);
  const mine = corralctl('join-token', 'create', '--workspace', ws).token;
  const cases = [
    [{}, [401, 403]],
    [{ Authorization: `Bearer ${mine}`, 'X-Worker-Id': victim.id, 'X-Worker-Secret': victim.secret }, [403]],
    [{ Authorization: `Bearer ${victim.joinToken}`, 'X-Worker-Id': victim.id, 'X-Worker-Secret': 'f'.repeat(64) }, [403]],
  ];
  for (const [headers, statuses] of cases) {
    const r = await upgrade(headers);
    r.socket.destroy();
    assert.ok(statuses.includes(r.status), `${JSON.stringify(Object.keys(headers))}: ${r.head}`);
  }
  assert.equal(tunnelRecord(other, victim.id), '', 'a refused upgrade left a record');
  // enrolled with a data port: no tunnel to hold
  const direct = new TestWorker(mine, { name: 'tw-direct' });
  await direct.handshake();
  const r = await upgrade(direct.headers());
  r.socket.destroy();
  assert.equal(r.status, 403, r.head);
});

test('the worker nginx authenticated is the one held: a forged X-Corral-Tunnel-Worker changes nothing', async () => {
  const w = await tunnelledWorker('');
  const real = workerdId(), before = tunnelRecord('', real);
  const r = await upgrade({ ...w.headers(), 'X-Corral-Tunnel-Worker': real, 'X-Corral-Tunnel-Pool': 'fleet' });
  try {
    assert.equal(r.status, 101, r.head);
    await eventually(() => tunnelRecord('', w.id) !== '', { what: 'the forger\'s own record' });
    assert.equal(tunnelRecord('', real), before, 'the real worker\'s tunnel record changed');
    assert.notEqual(tunnelRecord('', w.id), before);
    // and the real worker's sandboxes still answer through its own tunnel
    const sbx = await sandbox();
    assert.equal((await sbx.commands.run('echo still-mine')).stdout, 'still-mine\n');
  } finally {
    r.socket.destroy();
  }
  await eventually(() => tunnelRecord('', w.id) === '', { what: 'the record deleted with the tunnel' });
});

test('a tunnel carries streams only for its own worker\'s sandboxes, and one that opens a stream itself is ended', async () => {
  const w = await tunnelledWorker('');
  const r = await upgrade(w.headers());
  assert.equal(r.status, 101, r.head);
  const seen = frames(r.socket);
  r.socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])); // our SETTINGS, empty
  const sbx = await sandbox();
  for (let i = 0; i < 3; i++) assert.equal((await sbx.commands.run(`echo ${i}`)).stdout, `${i}\n`);
  assert.ok(seen.some((f) => f.type === 4 && f.stream === 0), 'the daemon\'s SETTINGS');
  const headers = seen.filter((f) => f.type === 1);
  assert.deepEqual(headers, [], 'the gateway opened a stream on another worker\'s tunnel');
  // HEADERS opening stream 2, as if this end were the gateway: a protocol error
  const block = Buffer.from([0x82, 0x87, 0x84, 0x41, 0x01, 0x78]); // :method GET, :scheme https, :path /, :authority x
  const h = Buffer.alloc(9);
  h.writeUIntBE(block.length, 0, 3);
  h[3] = 1; h[4] = 0x5; h.writeUInt32BE(2, 5);
  r.socket.write(Buffer.concat([h, block]));
  // sleep: a bound on the wait for the close, not a wait for it
  await Promise.race([closed(r.socket), sleep(5000).then(() => { throw new Error('the tunnel was not ended'); })]);
  assert.ok(seen.some((f) => f.type === 7), 'no GOAWAY before the end');
  await eventually(() => tunnelRecord('', w.id) === '', { what: 'its record deleted' });
});

// The body of a refused upgrade (its Content-Length's bytes); the
// connection ended after it.
function bodyOf(r) {
  const want = Number(/\r\ncontent-length: *(\d+)/i.exec(r.head)?.[1] ?? -1);
  return new Promise((resolve, reject) => {
    let body = r.socket.rest || Buffer.alloc(0);
    const done = () => { r.socket.destroy(); resolve(body.toString()); };
    if (want < 0) reject(new Error(`no Content-Length in ${r.head}`));
    else if (body.length >= want) done();
    else {
      r.socket.on('data', (d) => { body = Buffer.concat([body, d]); if (body.length >= want) done(); });
      r.socket.once('close', done);
      r.socket.resume();
    }
  });
}

test('the tunnel ports: one another process holds is skipped, none left is a 503 in the error shape, one freed is held again', async () => {
  const tunneld = Number(readFileSync(`${RUN}/pids/tunneld.pid`, 'utf8'));
  const held = new Set(listeningTcp(tunneld).map((a) => Number(a.split(':').pop())));
  const free = [];
  for (let p = TUNNEL_LO; p <= TUNNEL_HI; p++) if (!held.has(p)) free.push(p);
  const last = free.pop();
  const squatters = new Map();
  const squat = (port) => new Promise((ok) => {
    const srv = net.createServer();
    srv.once('error', () => ok(false));
    srv.listen(port, '127.0.0.1', () => { squatters.set(port, srv); ok(true); });
  });
  try {
    for (const p of free) assert.ok(await squat(p), `port ${p} could not be taken for the test`);
    // Every port but one held by another process: the tunnel lands on that one.
    const w = await tunnelledWorker('');
    const r = await upgrade(w.headers());
    assert.equal(r.status, 101, r.head);
    await eventually(() => tunnelRecord('', w.id) === `127.0.0.1:${last}`, { what: `its tunnel held at the one free port ${last}` });
    r.socket.destroy();
    await eventually(() => tunnelRecord('', w.id) === '', { what: 'its record deleted' });
    await eventually(() => squat(last), { what: `port ${last} let go by the daemon` });
    // None left: the upgrade is refused, in the error shape, and nothing held.
    const w2 = await tunnelledWorker('');
    const full = await upgrade(w2.headers());
    const body = await bodyOf(full);
    assert.equal(full.status, 503, full.head);
    assert.deepEqual(JSON.parse(body), { code: 503, message: 'no free tunnel port on this gateway host' });
    assert.equal(tunnelRecord('', w2.id), '', 'a refused tunnel left a record');
    // One port given back: the same worker's next try is held there.
    await new Promise((ok) => squatters.get(last).close(ok));
    squatters.delete(last);
    const again = await upgrade(w2.headers());
    assert.equal(again.status, 101, again.head);
    await eventually(() => tunnelRecord('', w2.id) === `127.0.0.1:${last}`, { what: `held at ${last} once it was free` });
    again.socket.destroy();
  } finally {
    for (const srv of squatters.values()) srv.close();
  }
  // The real worker's tunnel was never touched.
  assert.equal((await (await sandbox()).commands.run('echo untouched')).stdout, 'untouched\n');
});

test('the tunnel cut: a stream in flight fails, new requests get 502 worker unreachable, the same sandbox is back within seconds', async () => {
  const sbx = await sandbox({ secure: false });
  assert.equal((await envdHealth(sbx)).status, 204);
  const inflight = sbx.commands.run('sleep 40', { timeoutMs: 60_000 }).then(() => 'finished', (e) => e);
  // sleep: the command's stream is open and running before the cut
  await sleep(500);
  stack('kill-tunneld', 'TERM');
  // sleep: a bound on the failure's wait, so that a hang fails the test
  const err = await Promise.race([inflight, sleep(20_000).then(() => 'hung')]);
  assert.ok(err instanceof Error, `the stream in flight: ${err}`);
  // once the gateways' route cache (2 s) has let the daemon's port go
  let r;
  await eventually(async () => (r = await envdHealth(sbx)).status === 502, { what: '502 from the gateway' });
  assert.deepEqual(JSON.parse(r.text), { code: 502, message: 'worker unreachable: its tunnel is down; retry shortly' });
  const info = await api('GET', `/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-Key': process.env.E2B_API_KEY } });
  assert.equal(info.body.state, 'running', 'a tunnel down is not a lost sandbox');
  stack('start-tunneld');
  await eventually(async () => (await envdHealth(sbx)).status === 204, { timeout: 40_000, what: 'envd through the new tunnel' });
  assert.equal((await sbx.commands.run('echo back')).stdout, 'back\n');
});

test('the tunnel\'s TCP connection killed under it (ss -K): a stream in flight fails, the same sandbox answers again within seconds', async () => {
  const sbx = await sandbox({ secure: false });
  const inflight = sbx.commands.run('sleep 40', { timeoutMs: 60_000 }).then(() => 'finished', (e) => e);
  // sleep: the command's stream is open and running before the cut
  await sleep(500);
  // workerd's connections to nginx's port: its tunnel (and its long poll)
  const mine = socketsOf(workerdPid());
  const conns = tcpSockets().filter((c) => mine.has(c.inode) && c.remote === `127.0.0.1:${PORT}`);
  assert.ok(conns.length >= 1, 'workerd holds no connection to nginx');
  for (const c of conns) {
    execFileSync('ss', ['-K', 'src', '127.0.0.1', 'sport', '=', `:${c.local.split(':')[1]}`, 'dst', '127.0.0.1', 'dport', '=', `:${PORT}`]);
  }
  // sleep: a bound on the failure's wait, so that a hang fails the test
  const err = await Promise.race([inflight, sleep(20_000).then(() => 'hung')]);
  assert.ok(err instanceof Error, `the stream in flight: ${err}`);
  const t0 = Date.now();
  await eventually(async () => (await envdHealth(sbx)).status === 204, { timeout: 30_000, what: 'envd through the tunnel dialled again' });
  console.log(`tunnel cut by ss -K: envd answered again after ${Date.now() - t0} ms`);
  assert.equal((await sbx.commands.run('echo redialled')).stdout, 'redialled\n');
  const info = await api('GET', `/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-Key': process.env.E2B_API_KEY } });
  assert.equal(info.body.state, 'running', 'a tunnel cut is not a lost sandbox');
});

test('corral-tunneld killed -9: the worker is back through a new daemon within seconds', async () => {
  const sbx = await sandbox({ secure: false });
  stack('kill-tunneld', 'KILL');
  // until its record expires the route names a port nobody listens on: the
  // gateway's own answer for a worker it cannot reach, in the error shape
  const r = await envdHealth(sbx);
  assert.ok([502, 503].includes(r.status), r.text);
  assert.ok(/unreachable/.test(JSON.parse(r.text).message), r.text);
  stack('start-tunneld');
  await eventually(async () => (await envdHealth(sbx)).status === 204, { timeout: 40_000, what: 'envd through the new tunnel' });
  assert.equal((await sbx.commands.run('echo again')).stdout, 'again\n');
});
