// Stray bytes on a kept connection (issue 25, decision 0066). Hostile code in
// a sandbox serves an app whose answers carry more than their response: a 204,
// a 304 or an answer to HEAD with a body length and those bytes, or a complete
// second response written after the first, on a connection the data port
// keeps (and nginx keeps its own to the data port). Another client's request
// to that sandbox must get its own answer, never those bytes, and a 204's body
// length and body never reach a client. Through the real gateway (nginx with
// the module), the real data port (dataport_main) and a raw TCP app here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import https from 'node:https';
import path from 'node:path';
import tls from 'node:tls';
import { corralctl, eventually, newWorkspace } from '../lib/corral.mjs';
import { tcpSockets, unread } from '../lib/sockets.mjs';
import {
  DATAPORT, DEADPORT, DP_DIR, GW_PORT, Worker, createSandbox, gatewaySignature, gw, rawDataport, setDataport, setupWorld,
} from './lib.mjs';

const APP_PORT = 8101;
const DP_PID = Number(process.env.DP_PID);
const CA = fs.readFileSync(process.env.DP_GATEWAY_CA);
// what the attacker wants another client to read as its answer
const EVIL = 'HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nSECRET';
let w, app;

// The hostile app on sandbox B's address: each request head is answered by
// answer(path); every request is recorded with the number of the connection
// it came on, and the sockets stay at hand for writing bytes nobody asked for.
function hostileApp(answer) {
  const seen = [];
  const socks = [];
  const srv = net.createServer((sock) => {
    const n = socks.push(sock);
    let got = '';
    sock.on('data', (d) => {
      got += d;
      for (let end; (end = got.indexOf('\r\n\r\n')) >= 0; got = got.slice(end + 4)) {
        const path = got.slice(0, end).split(' ')[1];
        seen.push({ path, conn: n });
        sock.write(answer(path));
      }
    });
    sock.on('error', () => {});
  });
  return new Promise((resolve) => srv.listen(APP_PORT, '127.0.0.3', () => resolve({
    seen, socks,
    close: () => new Promise((r) => { for (const s of socks) s.destroy(); srv.close(r); }),
  })));
}

const ok = (path) => `HTTP/1.1 200 OK\r\nContent-Length: ${`answer ${path}`.length}\r\n\r\nanswer ${path}`;

const ANSWERS = {
  '/204': 'HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n0123456789',
  '/204-evil': `HTTP/1.1 204 No Content\r\nContent-Length: ${EVIL.length}\r\n\r\n${EVIL}`,
  '/204-chunked': `HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nSECRET\r\n0\r\n\r\n`,
  '/304-evil': `HTTP/1.1 304 Not Modified\r\nContent-Length: ${EVIL.length}\r\n\r\n${EVIL}`,
  '/head-evil': `HTTP/1.1 200 OK\r\nContent-Length: ${EVIL.length}\r\n\r\n${EVIL}`,
  '/204-claims': 'HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n', // and sends nothing (yet)
  '/first': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
};

before(async () => {
  w = await setupWorld();
  // B's address answered from the data port's cache, as workerd's is for a
  // running sandbox: a request is matched with a kept connection at once
  setDataport(w.worker, { [w.A.id]: '127.0.0.2', [w.B.id]: '127.0.0.3 cached' });
  app = await hostileApp((path) => ANSWERS[path] ?? ok(path));
});
after(async () => {
  await app?.close();
  await w?.teardown();
});

const B = () => ({ id: w.B.id, port: APP_PORT });

// One request through the gateway on a TLS connection of its own that asks
// to close, read raw to its end: every byte the client gets.
function rawGateway(method, path) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port: GW_PORT, servername: 'localhost', ca: CA }, () =>
      s.write(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\nE2b-Sandbox-Id: ${w.B.id}\r\n` +
        `E2b-Sandbox-Port: ${APP_PORT}\r\nConnection: close\r\n\r\n`));
    let out = '';
    const cut = setTimeout(() => { s.destroy(); resolve(out); }, 5000); // bounded
    s.on('data', (d) => { out += d; });
    s.on('end', () => { clearTimeout(cut); resolve(out); });
    s.on('error', (e) => { clearTimeout(cut); reject(e); });
  });
}

// What the data port itself answers (what nginx reads), on a connection that ends after it.
function rawDataportGet(path) {
  return rawDataport(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Corral-Sandbox: ${w.B.id}\r\n` +
    `X-Corral-Port: ${APP_PORT}\r\nX-Corral-Gateway: ${gatewaySignature(w.worker.dataKey, w.B.id, APP_PORT)}\r\n\r\n`);
}

test('a 204 with a body length: neither the length nor the body reaches anyone', async () => {
  for (const path of ['/204', '/204-evil', '/204-chunked']) {
    const client = await rawGateway('GET', path);
    assert.match(client, /^HTTP\/1.1 204 /, `${path}: ${client}`);
    assert.doesNotMatch(client, /content-length|transfer-encoding|0123456789|SECRET/i, `${path}: ${client}`);
    const nginxGot = await rawDataportGet(path);
    assert.match(nginxGot, /^HTTP\/1.1 204 /, `${path}: ${nginxGot}`);
    assert.doesNotMatch(nginxGot, /content-length|transfer-encoding|0123456789|SECRET/i, `${path}: ${nginxGot}`);
    // another client, on a connection of its own: its own answer
    const next = await gw('GET', `/after${path}`, { target: B() });
    assert.equal(next.status, 200);
    assert.equal(next.body, `answer /after${path}`);
  }
});

test('a 304 or an answer to HEAD with a body behind it: the next client gets its own answer', async () => {
  for (const [method, path] of [['GET', '/304-evil'], ['HEAD', '/head-evil']]) {
    const client = await rawGateway(method, path);
    assert.match(client, /^HTTP\/1.1 (304|200) /, `${path}: ${client}`);
    assert.doesNotMatch(client, /SECRET/, `${path}: ${client}`);
    for (let i = 0; i < 3; i++) {
      const next = await gw('GET', `/after${path}/${i}`, { target: B() });
      assert.equal(next.body, `answer /after${path}/${i}`);
    }
  }
});

test('a bodiless answer claiming a body closes its connection: the next request goes on a new one', async () => {
  await gw('GET', '/204-claims', { target: B() });
  await gw('GET', '/after-claims', { target: B() });
  const [claims, after] = app.seen.slice(-2);
  assert.equal(claims.path, '/204-claims');
  assert.equal(after.path, '/after-claims');
  assert.notEqual(after.conn, claims.conn, 'the connection whose framing lied was reused');
});

// The data port is frozen for a moment (SIGSTOP, as a busy loop would hold
// it), so that when it wakes, the next client's request and the sandbox's
// unasked bytes wait for it together, the request first: the order in which
// a busy data port would meet them. What waits for a frozen process is seen
// in its sockets' receive queues.
// A sum of the bytes waiting would miss a request that arrives while a socket
// that held bytes leaves (its peer closed it: no longer ESTABLISHED), as a CI
// run met once: each socket is compared with itself instead.
const waitingAt = (addr) => new Map(tcpSockets().filter((s) => s.local === addr).map((s) => [`${s.local} ${s.remote}`, s.unread]));
const moreAt = (addr, before) => [...waitingAt(addr)].some(([pair, n]) => n > (before.get(pair) ?? 0));
// Each open socket at the other end of socks (a frozen process's) holds n
// bytes unread. A socket is named by both its ends: the kernel hands the same
// local port to connections with other peers (a CI run met one, with nothing
// unread, and waited in vain).
const reached = (socks, n) => {
  const pairs = new Set(socks.map((x) => `${x.remoteAddress}:${x.remotePort} ${x.localAddress}:${x.localPort}`));
  const ends = tcpSockets().filter((s) => pairs.has(`${s.local} ${s.remote}`));
  return ends.length === pairs.size && ends.every((s) => s.unread >= n);
};

async function frozen(during) {
  process.kill(DP_PID, 'SIGSTOP');
  try {
    await during();
  } finally {
    process.kill(DP_PID, 'SIGCONT');
  }
}

test('a second response written after the first, on the kept connection, is never another client\'s answer', async () => {
  for (let round = 0; round < 3; round++) {
    const first = await gw('GET', '/first', { target: B() });
    assert.equal(first.body, 'ok');
    const kept = app.socks[app.seen.at(-1).conn - 1];
    let victim;
    await frozen(async () => {
      const queued = waitingAt(DATAPORT);
      victim = gw('GET', `/victim/${round}`, { target: B() }); // another client, its own connection
      await eventually(() => moreAt(DATAPORT, queued), { what: 'nginx to send the victim\'s request to the data port' });
      kept.write(EVIL); // the sandbox speaks unasked on the kept connection
      await eventually(() => reached([kept], EVIL.length), { what: 'the stray bytes to reach the data port' });
    });
    const v = await victim;
    assert.doesNotMatch(String(v.raw), /SECRET/, `round ${round}: the victim got the sandbox's stray bytes`);
    assert.equal(v.status, 200);
    assert.equal(v.body, `answer /victim/${round}`);
    // and the next one as well
    const again = await gw('GET', `/again/${round}`, { target: B() });
    assert.equal(again.body, `answer /again/${round}`);
  }
});

test('a 204 whose claimed body comes late is never another client\'s answer', async () => {
  const first = await gw('GET', '/204-claims', { target: B() });
  assert.equal(first.status, 204);
  const sock = app.socks[app.seen.at(-1).conn - 1];
  let victim;
  await frozen(async () => {
    const queued = waitingAt(DATAPORT);
    victim = gw('GET', '/victim-late', { target: B() });
    await eventually(() => moreAt(DATAPORT, queued), { what: 'nginx to send the victim\'s request to the data port' });
    if (!sock.destroyed) { // the claimed body, shaped as a response
      sock.write(EVIL);
      await eventually(() => reached([sock], EVIL.length), { what: 'the late body to reach the data port' });
    }
  });
  const v = await victim;
  assert.doesNotMatch(String(v.raw), /SECRET/);
  assert.equal(v.body, 'answer /victim-late');
});

// The other hop: nginx keeps its connections to data ports, across clients.
// A data port writes nothing between answers, but nginx must not count on
// it: here one that does (played on the listed address where nothing
// listens otherwise: it vouches for its answers, then speaks unasked on the
// connection nginx keeps). nginx's workers are frozen for a moment, so that
// the next client's request (on its own kept connection to the gateway) and
// the stray bytes wait for them together, the request first.
function fakeDataport() {
  const socks = [];
  const [host, port] = DEADPORT.split(':');
  const srv = net.createServer((sock) => {
    socks.push(sock);
    let got = '';
    sock.on('data', (d) => {
      got += d;
      for (let end; (end = got.indexOf('\r\n\r\n')) >= 0; got = got.slice(end + 4)) {
        const head = got.slice(0, end);
        const sig = /\r\nX-Corral-Gateway: *(\S+)/i.exec(head)?.[1] ?? '';
        const body = `answer ${head.split(' ')[1]}`;
        sock.write(`HTTP/1.1 200 OK\r\nX-Corral-Keep: ${sig}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      }
    });
    sock.on('error', () => {});
  });
  return new Promise((resolve) => srv.listen(Number(port), host, () => resolve({
    socks, close: () => new Promise((r) => { for (const x of socks) x.destroy(); srv.close(r); }),
  })));
}

const nginxWorkers = () => {
  const master = fs.readFileSync(path.join(DP_DIR, 'nginx.pid'), 'utf8').trim();
  return fs.readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).map(Number);
};

test('bytes on a connection nginx keeps to a data port are never another client\'s answer', async () => {
  const ws = newWorkspace();
  const join = corralctl('join-token', 'create', '--workspace', ws.id).token;
  const worker = await new Worker(join, DEADPORT).handshake();
  worker.start();
  const dp = await fakeDataport();
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const sb = await createSandbox(ws.member, {});
    const target = { id: sb.sandboxID, port: 49983 };
    for (let round = 0; round < 3; round++) {
      // the victim's connection to the gateway, and nginx's kept one to the data port
      const warm = await gw('GET', `/warm/${round}`, { target, agent });
      assert.equal(warm.body, `answer /warm/${round}`);
      const kept = dp.socks.filter((x) => !x.destroyed);
      const workers = nginxWorkers();
      let victim;
      for (const pid of workers) process.kill(pid, 'SIGSTOP');
      try {
        const queued = waitingAt(`127.0.0.1:${GW_PORT}`);
        victim = gw('GET', `/victim/${round}`, { target, agent });
        // a failure below must not surface as this request's hang-up
        victim.catch(() => {});
        await eventually(() => moreAt(`127.0.0.1:${GW_PORT}`, queued), { what: 'the victim\'s request to reach nginx' });
        for (const x of kept) x.write(EVIL);
        await eventually(() => reached(kept, EVIL.length), { what: 'the stray bytes to reach nginx' });
      } finally {
        for (const pid of workers) process.kill(pid, 'SIGCONT');
      }
      const v = await victim;
      assert.doesNotMatch(String(v.raw), /SECRET/, `round ${round}: the victim got the stray bytes`);
      assert.equal(v.body, `answer /victim/${round}`);
    }
  } finally {
    agent.destroy();
    await dp.close();
    await worker.stop();
  }
});
