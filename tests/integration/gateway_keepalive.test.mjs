// nginx keeps its connections to workers' data ports (issue 12, decision
// 0051): the real gateway server (conf/nginx-gateway.conf.in, the module's
// corral_data_balancer under nginx's keepalive) in front of a stand-in data
// port that keeps connections and counts them. It checks what nginx does: one
// connection for many requests, several sandboxes on one connection each with
// its own signature, no error when the data port answers Connection: close
// (a workerd from before decision 0050) or drops a kept connection, and no
// replay of a POST. The real data port: tests/dataplane/keepalive.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createHmac } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { connect } from 'node:tls';
import { api, corralctl, newWorkspace, RUN, URL_BASE } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { listedDataPort } from '../lib/data_ports.mjs';

const GATEWAY_PORT = Number(new URL(URL_BASE).port) + 1;
const GATEWAY = `https://localhost:${GATEWAY_PORT}`;
const ERROR_LOG = `${RUN}/log/nginx-error.log`;
const A = newWorkspace();

// The stand-in data port. mode: 'keep' answers, vouches for the connection
// (X-Corral-Keep: the request's signature) and keeps it; 'close' answers with
// Connection: close, as a workerd from before decision 0050; 'unvouched' keeps the connection
// without vouching (a sandbox's own keep-alive answer relayed by an older
// workerd); 'forged' vouches with another request's signature; 'drop-reused'
// drops a connection that already served a request the moment the next one
// arrives (the data port closed it just as nginx reused it); 'drop' drops
// every connection without answering (a broken worker).
let mode = 'keep';
let lastSignature = '';
let connections = 0;
const seen = [];
const dataPort = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const s = req.socket;
    seen.push({ conn: s.cid, fresh: !s.served, method: req.method, sandbox: req.headers['x-corral-sandbox'],
      port: req.headers['x-corral-port'], signature: req.headers['x-corral-gateway'],
      connection: req.headers.connection, body: Buffer.concat(chunks).toString() });
    if (mode === 'drop' || (mode === 'drop-reused' && s.served)) {
      s.destroy();
      return;
    }
    s.served = (s.served || 0) + 1;
    if (mode === 'close') res.setHeader('Connection', 'close');
    else if (mode === 'forged') res.setHeader('X-Corral-Keep', lastSignature);
    else if (mode !== 'unvouched') res.setHeader('X-Corral-Keep', req.headers['x-corral-gateway']);
    lastSignature = req.headers['x-corral-gateway'];
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ sandbox: req.headers['x-corral-sandbox'], conn: s.cid }));
  });
});
// Longer than nginx's keepalive_timeout, as docs/data-plane.md asks of a data port.
dataPort.keepAliveTimeout = 120000;
dataPort.on('connection', (s) => { s.cid = ++connections; });
// A WebSocket-style upgrade: 101, then the connection echoes.
dataPort.on('upgrade', (req, s) => {
  seen.push({ conn: s.cid, fresh: !s.served, method: req.method, upgrade: req.headers.upgrade,
    connection: req.headers.connection });
  s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
    + `X-Corral-Keep: ${req.headers['x-corral-gateway']}\r\n\r\n`);
  s.on('data', (d) => s.write(d));
});

let worker, dataKey;
const sandboxes = [];

before(async () => {
  await new Promise((ok) => dataPort.listen(listedDataPort(), '127.0.0.1', ok));
  worker = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token,
    { dataAddr: `127.0.0.1:${dataPort.address().port}` });
  dataKey = (await worker.handshake()).data_key;
  worker.start();
  for (let i = 0; i < 2; i++) {
    const r = await api('POST', '/v2/sandboxes', { body: { templateID: 'base', secure: false }, headers: { 'X-API-KEY': A.member } });
    assert.equal(r.status, 201, r.raw);
    sandboxes.push(r.body.sandboxID);
  }
});
after(async () => {
  await worker.stop();
  dataPort.closeAllConnections();
  await new Promise((ok) => dataPort.close(ok));
});

// One request through the gateway to port 8080 of sandbox id (public, not secure: no token).
async function send(id, { method = 'GET', body } = {}) {
  const res = await fetch(`${GATEWAY}/probe`, { method, body,
    headers: { 'E2b-Sandbox-Id': id, 'E2b-Sandbox-Port': '8080' } });
  const raw = await res.text();
  return { status: res.status, raw, headers: res.headers };
}

// What the data port saw while fn ran, and the connections it accepted.
async function watch(fn) {
  const from = seen.length;
  const conns = connections;
  await fn();
  return { requests: seen.slice(from), accepted: connections - conns };
}

function signedFor(r, id, port) {
  const [secs, mac] = r.signature.split(':');
  const want = createHmac('sha256', dataKey).update(`${id}:${port}:${secs}`).digest('hex');
  return r.sandbox === id && r.port === port && mac === want;
}

test('50 sequential requests ride one kept connection to the data port (fails without keepalive)', async () => {
  mode = 'keep';
  await send(sandboxes[0]);
  const { requests, accepted } = await watch(async () => {
    for (let i = 0; i < 50; i++) assert.equal((await send(sandboxes[0])).status, 200);
  });
  assert.equal(requests.length, 50);
  assert.ok(accepted <= 1, `the data port accepted ${accepted} connections for 50 requests`);
  assert.equal(new Set(requests.map((r) => r.conn)).size, 1, 'all on one connection');
  assert.ok(requests.every((r) => r.connection === undefined || r.connection === 'keep-alive'),
    `nginx asked to close: ${requests.map((r) => r.connection)}`);
});

test('the data port\'s X-Corral-Keep never reaches the client', async () => {
  mode = 'keep';
  const r = await send(sandboxes[0]);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-corral-keep'), null);
});

for (const [what, m] of [['a keep-alive answer the data port did not vouch for (a sandbox\'s own, through an older workerd)', 'unvouched'],
  ['an X-Corral-Keep that is not this request\'s signature', 'forged']]) {
  test(`${what}: the connection is not kept`, async () => {
    mode = m;
    const { requests, accepted } = await watch(async () => {
      for (let i = 0; i < 10; i++) assert.equal((await send(sandboxes[i % 2])).status, 200);
    });
    assert.equal(requests.length, 10);
    assert.ok(accepted >= 9, `unvouched connections were reused: ${accepted} accepted for 10`);
    assert.equal(new Set(requests.slice(1).map((r) => r.conn)).size, 9, 'each on a connection of its own');
  });
}

test('two sandboxes down one connection: each request carries its own sandbox and signature', async () => {
  mode = 'keep';
  const [a, b] = sandboxes;
  const { requests } = await watch(async () => {
    for (let i = 0; i < 10; i++) {
      const id = i % 2 ? b : a;
      const r = await send(id);
      assert.equal(r.status, 200);
      assert.equal(JSON.parse(r.raw).sandbox, id);
    }
  });
  assert.equal(new Set(requests.map((r) => r.conn)).size, 1, 'both sandboxes on one upstream connection');
  requests.forEach((r, i) => assert.ok(signedFor(r, i % 2 ? b : a, '8080'), `request ${i} not signed for its own sandbox`));
});

test('a data port that answers Connection: close (an older workerd): no reuse, no error', async () => {
  mode = 'close';
  const logFrom = statSync(ERROR_LOG).size;
  const { requests, accepted } = await watch(async () => {
    for (let i = 0; i < 20; i++) assert.equal((await send(sandboxes[i % 2])).status, 200);
  });
  assert.equal(requests.length, 20);
  assert.ok(accepted >= 19, `closed connections were reused: ${accepted} accepted for 20`);
  assert.equal(readFileSync(ERROR_LOG).subarray(logFrom).toString().match(/upstream.*\n/g), null);
});

test('a kept connection the data port dropped: a GET goes again on a new one, the client sees 200', async () => {
  mode = 'keep';
  await send(sandboxes[0]);
  mode = 'drop-reused';
  const { requests } = await watch(async () => {
    const r = await send(sandboxes[0]);
    assert.equal(r.status, 200, r.raw);
  });
  assert.ok(requests.length >= 2, 'the dropped attempt and its retry');
  assert.equal(requests.filter((r) => r.fresh).length, 1, 'retried once on a new connection');
  assert.ok(requests.every((r) => signedFor(r, sandboxes[0], '8080')), 'to the same sandbox only');
});

test('a POST on a kept connection the data port dropped is not replayed: 503 with Retry-After', async () => {
  mode = 'keep';
  await send(sandboxes[0]);
  mode = 'drop-reused';
  const { requests } = await watch(async () => {
    const r = await send(sandboxes[0], { method: 'POST', body: 'run-once' });
    assert.equal(r.status, 503, r.raw);
    assert.equal(JSON.parse(r.raw).code, 503);
    assert.equal(r.headers.get('retry-after'), '1');
  });
  assert.equal(requests.length, 1, 'the POST reached the data port once');
  assert.equal(requests[0].body, 'run-once');
});

test('a new connection that fails is tried once: 503, no second attempt', async () => {
  mode = 'drop';
  const { requests } = await watch(async () => {
    const r = await send(sandboxes[1]);
    assert.equal(r.status, 503, r.raw);
  });
  assert.equal(requests.filter((r) => r.fresh).length, 1, `new connections tried: ${requests.length}`);
  mode = 'keep';
  assert.equal((await send(sandboxes[1])).status, 200, 'the next request gets through');
});

// An upgrade over HTTP/1.1 through the gateway; resolves with what came back
// after sending `ping` on the upgraded connection.
function upgradeAndPing(id) {
  return new Promise((resolve, reject) => {
    const c = connect({ host: 'localhost', port: GATEWAY_PORT, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => {
      c.write(`GET /ws HTTP/1.1\r\nHost: localhost\r\nE2b-Sandbox-Id: ${id}\r\nE2b-Sandbox-Port: 8080\r\n`
        + 'Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    });
    let got = '';
    c.on('data', (d) => {
      got += d;
      if (/^HTTP\/1\.1 101/.test(got) && got.includes('\r\n\r\n') && !c.pinged) {
        c.pinged = true;
        got = '';
        c.write('ping');
      } else if (c.pinged && got === 'ping') {
        c.end();
        resolve(got);
      }
    });
    c.on('error', reject);
    setTimeout(() => { c.destroy(); reject(new Error(`no echo; got ${JSON.stringify(got)}`)); }, 5000);
  });
}

test('an upgrade goes up with Connection: upgrade, works, and its connection is never kept', async () => {
  mode = 'keep';
  const { requests } = await watch(async () => {
    assert.equal(await upgradeAndPing(sandboxes[0]), 'ping');
  });
  assert.equal(requests.length, 1);
  assert.equal(requests[0].upgrade, 'websocket');
  assert.match(requests[0].connection, /^upgrade$/i);
  const after = await watch(async () => {
    for (let i = 0; i < 3; i++) assert.equal((await send(sandboxes[0])).status, 200);
  });
  assert.ok(after.requests.every((r) => r.conn !== requests[0].conn), 'a plain request rode the upgraded connection');
});
