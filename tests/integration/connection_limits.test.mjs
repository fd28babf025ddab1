// One client may not hold every connection (issue 25, decision 0068): nginx
// counts the requests each client address has in progress, on the API and on
// the data plane apart, and those of each sandbox on the data plane
// (limit_conn); over a budget the answer is 429 {code, message} naming the
// limit, while another address, or another sandbox, is still served. And a
// connection that sends nothing, or stops sending its body, is closed within
// its timeout. The real stack's nginx (the snippets of conf/nginx/, rendered
// by conf/stack.sh), a stand-in data port that holds streams open as a
// process's output does, and clients on other loopback addresses (the whole
// of 127.0.0.0/8 is this host's: a socket bound to 127.0.0.3 reaches nginx on
// 127.0.0.1, which sees 127.0.0.3 as the client; no listen change needed).
// Budgets and timeouts are read from the rendered snippets, so the test
// follows the profile's numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { api, corralctl, newWorkspace, RUN, URL_BASE } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';
import { listedDataPort } from '../lib/data_ports.mjs';
import { sleep, until } from '../lib/poll.mjs';

const API_PORT = Number(new URL(URL_BASE).port);
const GATEWAY_PORT = API_PORT + 1;

function directive(file, re) {
  const text = readFileSync(`${RUN}/snippets/${file}`, 'utf8');
  const m = text.match(re);
  assert.ok(m, `${re} not in ${RUN}/snippets/${file}: the stack does not render it`);
  return Number(m[1]);
}
const API_BUDGET = directive('corral-api.conf', /^limit_conn corral_api_conns (\d+);/m);
const DATA_BUDGET = directive('corral-gateway.conf', /^\s*limit_conn corral_data_conns (\d+);/m);
const SANDBOX_BUDGET = directive('corral-gateway.conf', /^\s*limit_conn corral_sandbox_conns (\d+);/m);
const API_HEADER_S = directive('corral-api.conf', /^client_header_timeout (\d+)s;/m);
const API_BODY_S = directive('corral-api.conf', /^client_body_timeout (\d+)s;/m);
const GW_HEADER_S = directive('corral-gateway.conf', /^client_header_timeout (\d+)s;/m);
// Loud rather than slow: the test opens budget + 1 connections.
assert.ok(API_BUDGET <= 1024 && DATA_BUDGET <= 1024 && SANDBOX_BUDGET <= DATA_BUDGET / 2,
  `budgets too large for this test: ${API_BUDGET} ${DATA_BUDGET} ${SANDBOX_BUDGET}`);

// A TLS connection from `from` (a loopback address) to nginx, HTTP/1.1. The
// socket records when it was opened and when nginx closed it.
function connect(port, from) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port, host: '127.0.0.1', localAddress: from, servername: 'localhost',
      ALPNProtocols: ['http/1.1'] });
    s.data = Buffer.alloc(0);
    s.on('data', (d) => { s.data = Buffer.concat([s.data, d]); });
    s.ended = new Promise((ok) => s.on('close', () => { s.closedAt = Date.now(); ok(); }));
    s.on('error', () => { /* seen as close */ });
    s.once('secureConnect', () => { s.openedAt = Date.now(); resolve(s); });
    s.once('error', reject);
  });
}

// Opens n connections from `from`, each sending head(i) and then nothing
// more; resolves once every head is written.
async function hold(port, from, n, head) {
  const socks = [];
  for (let i = 0; i < n; i += 32) {
    socks.push(...await Promise.all(Array.from({ length: Math.min(32, n - i) }, async (_, j) => {
      const s = await connect(port, from);
      await new Promise((ok) => s.write(head(i + j), ok));
      s.sentAt = Date.now();
      return s;
    })));
  }
  return socks;
}

// One request from `from` on a fresh connection: {status, headers, body}.
async function once(port, from, head) {
  const s = await connect(port, from);
  s.write(head);
  const parse = () => {
    const end = s.data.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const lines = s.data.subarray(0, end).toString().split('\r\n');
    const headers = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const body = s.data.subarray(end + 4).toString();
    if (body.length < Number(headers['content-length'] || 0)) return null;
    return { status: Number(lines[0].split(' ')[1]), headers, raw: body };
  };
  const deadline = Date.now() + 10000;
  while (!parse() && s.closedAt === undefined && Date.now() < deadline) await sleep(10);
  s.destroy();
  const r = parse();
  assert.ok(r, `no answer from nginx to ${from}: ${s.data}`);
  return r;
}

function assert429(r, re, what) {
  assert.equal(r.status, 429, `${what}: expected 429, got ${r.status}: ${r.raw}`);
  assert.equal(r.headers['content-type'], 'application/json', what);
  assert.equal(r.headers['retry-after'], '1', what);
  const body = JSON.parse(r.raw);
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message'], what);
  assert.equal(body.code, 429, what);
  assert.match(body.message, re, what);
}

const health = 'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';

// nginx reads the held heads in its own time: the limit holds once it has
// counted them all. Asks again for a little while, never past a 429.
async function untilRefused(ask) {
  let r;
  for (let i = 0; i < 20; i++) {
    r = await ask();
    if (r.status === 429) return r;
    // sleep: between tries of this bounded loop (20 of them).
    await sleep(150);
  }
  return r;
}

// ---- the data plane's stand-in: a worker's data port holding streams -----

let held = 0;
const streams = new Set();
const dataPort = createServer((req, res) => {
  if (req.url === '/hold') {
    // A process's output: the head and a first chunk, then nothing until the
    // test lets go (nginx waits up to proxy_read_timeout, 1 h).
    held++;
    streams.add(res);
    res.on('close', () => { held--; streams.delete(res); });
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('started\n');
    return;
  }
  res.end('ok');
});

const A = newWorkspace();
let worker;
const sandboxes = [];

before(async () => {
  await new Promise((ok) => dataPort.listen(listedDataPort(), '127.0.0.1', ok));
  worker = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token,
    { dataAddr: `127.0.0.1:${dataPort.address().port}`, slots: 10 });
  await worker.handshake();
  worker.start();
  for (let i = 0; i < 6; i++) {
    const r = await api('POST', '/v2/sandboxes', { body: { templateID: 'base', secure: false }, headers: { 'X-API-KEY': A.member } });
    assert.equal(r.status, 201, r.raw);
    sandboxes.push(r.body.sandboxID);
  }
});

after(async () => {
  for (const res of streams) res.end();
  await worker.stop();
  dataPort.closeAllConnections();
  await new Promise((ok) => dataPort.close(ok));
});

const stream = (id, path = '/hold') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nE2b-Sandbox-Id: ${id}\r\nE2b-Sandbox-Port: 8080\r\n\r\n`;

async function release(socks) {
  for (const s of socks) s.destroy();
  for (const res of streams) res.end();
  const deadline = Date.now() + 10000;
  while (held > 0 && Date.now() < deadline) await sleep(50);
  assert.equal(held, 0, 'streams still open after the clients left');
}

async function untilHeld(n) {
  const deadline = Date.now() + 20000;
  while (held < n && Date.now() < deadline) await sleep(50);
  assert.equal(held, n, `the data port holds ${held} streams, not ${n}`);
}

test(`data plane: ${SANDBOX_BUDGET} streams to one sandbox, from any addresses, are all it gets; another sandbox is served`, async () => {
  // Two addresses, neither at its own budget: the sandbox's limit refuses.
  const half = SANDBOX_BUDGET / 2;
  const socks = [...await hold(GATEWAY_PORT, '127.0.0.5', half, () => stream(sandboxes[0])),
    ...await hold(GATEWAY_PORT, '127.0.0.6', SANDBOX_BUDGET - half, () => stream(sandboxes[0]))];
  try {
    await untilHeld(SANDBOX_BUDGET);
    const r = await untilRefused(() => once(GATEWAY_PORT, '127.0.0.7', stream(sandboxes[0], '/probe')));
    assert429(r, new RegExp(`too many requests at once: at most ${DATA_BUDGET} from one address and ${SANDBOX_BUDGET} to one sandbox`), 'over the sandbox budget');
    const other = await once(GATEWAY_PORT, '127.0.0.7', stream(sandboxes[1], '/probe'));
    assert.equal(other.status, 200, `another sandbox, same client: ${other.raw}`);
  } finally {
    await release(socks);
  }
  // The budget comes back with the streams.
  assert.equal((await once(GATEWAY_PORT, '127.0.0.7', stream(sandboxes[0], '/probe'))).status, 200);
});

test(`data plane: ${DATA_BUDGET} streams from one address are all it gets; another address is served`, async () => {
  // Spread over five sandboxes, each under its own budget.
  const socks = await hold(GATEWAY_PORT, '127.0.0.8', DATA_BUDGET, (i) => stream(sandboxes[1 + (i % 5)]));
  try {
    await untilHeld(DATA_BUDGET);
    const r = await untilRefused(() => once(GATEWAY_PORT, '127.0.0.8', stream(sandboxes[0], '/probe')));
    assert429(r, /too many requests at once/, 'over the address budget');
    const other = await once(GATEWAY_PORT, '127.0.0.9', stream(sandboxes[0], '/probe'));
    assert.equal(other.status, 200, `another address: ${other.raw}`);
    // The API keeps its own budget: the data plane's streams take none of it.
    assert.equal((await once(API_PORT, '127.0.0.8', health)).status, 204);
  } finally {
    await release(socks);
  }
  assert.equal((await once(GATEWAY_PORT, '127.0.0.8', stream(sandboxes[0], '/probe'))).status, 200);
});

test(`data plane, HTTP/2: each stream counts, so ${DATA_BUDGET} streams on two connections are all one address gets`, async () => {
  // nginx lets 128 streams at once on one connection (http2_max_concurrent_streams).
  const perConn = 128;
  const conns = Array.from({ length: Math.ceil(DATA_BUDGET / perConn) + 1 }, () =>
    http2.connect(`https://localhost:${GATEWAY_PORT}`, { localAddress: '127.0.0.12' }));
  for (const c of conns) c.on('error', () => { /* ended by the test */ });
  const request = (c, id, path) => c.request({ ':path': path, 'e2b-sandbox-id': id, 'e2b-sandbox-port': '8080' });
  try {
    for (let i = 0; i < DATA_BUDGET; i++) request(conns[Math.floor(i / perConn)], sandboxes[1 + (i % 5)], '/hold').on('error', () => {});
    await untilHeld(DATA_BUDGET);
    // The next stream, on a connection of its own: refused for the address.
    const answer = await new Promise((ok, ko) => {
      const r = request(conns[conns.length - 1], sandboxes[0], '/probe');
      let body = '';
      let head;
      r.on('response', (h) => { head = h; });
      r.on('data', (d) => { body += d; });
      r.on('end', () => ok({ status: head[':status'], headers: head, raw: body }));
      r.on('error', ko);
    });
    assert429(answer, /too many requests at once/, 'an HTTP/2 stream over the address budget');
  } finally {
    for (const c of conns) c.destroy();
    await release([]);
  }
});

test(`API: ${API_BUDGET} requests held from one address are all it gets, another address is served, and the held ones end within the body timeout`, async () => {
  // Each held request has sent its head and promised a body it never sends.
  const post = 'POST /v2/sandboxes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
  const socks = await hold(API_PORT, '127.0.0.10', API_BUDGET, () => post);
  // And connections that send nothing at all, TLS done or not, on both
  // planes: no request, so no budget; only the header timeout ends them.
  const idle = [...await Promise.all([1, 2, 3].map(() => connect(API_PORT, '127.0.0.11'))),
    ...await Promise.all([1, 2, 3].map(() => connect(GATEWAY_PORT, '127.0.0.11')))];
  // And a stream that goes quiet after its first chunk, as a process's
  // output does: none of these timers may end it (proxy_read_timeout, 1 h).
  const quiet = await hold(GATEWAY_PORT, '127.0.0.13', 1, () => stream(sandboxes[0]));
  await untilHeld(1);
  const bare = await Promise.all([API_PORT, GATEWAY_PORT].map((port) => new Promise((ok, ko) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.11' }, () => { s.openedAt = Date.now(); ok(s); });
    s.ended = new Promise((done) => s.on('close', () => { s.closedAt = Date.now(); done(); }));
    s.on('error', ko);
  })));
  try {
    const r = await untilRefused(() => once(API_PORT, '127.0.0.10', health));
    assert429(r, new RegExp(`too many requests at once from this address \\(at most ${API_BUDGET}\\)`), 'over the API budget');
    const other = await once(API_PORT, '127.0.0.2', health);
    assert.equal(other.status, 204, `another address: ${other.raw}`);
    assert.equal((await api('GET', '/health')).status, 204, 'the suite\'s own address');
    // The data plane keeps its own budget.
    assert.equal((await once(GATEWAY_PORT, '127.0.0.10', stream(sandboxes[0], '/probe'))).status, 200);

    // nginx closes each within its timeout (plus a little for a loaded
    // machine), and not before: the timer, not something else, ended it.
    const bound = (s, from, secs, what) => {
      const took = (s.closedAt - from) / 1000;
      assert.ok(took >= secs * 0.8 && took <= secs + 4, `${what} closed after ${took} s, not ~${secs} s`);
    };
    await until(() => [...socks, ...idle, ...bare].every((s) => s.closedAt),
      { timeoutMs: (Math.max(API_BODY_S, API_HEADER_S, GW_HEADER_S) + 6) * 1000, everyMs: 100 });
    for (const s of socks) {
      assert.ok(s.closedAt, 'a held request is still open past client_body_timeout');
      bound(s, s.sentAt, API_BODY_S, 'a request whose body never came');
    }
    for (const s of [...idle, ...bare]) assert.ok(s.closedAt, 'an idle connection is still open past client_header_timeout');
    idle.slice(0, 3).forEach((s) => bound(s, s.openedAt, API_HEADER_S, 'an idle TLS connection to the API'));
    idle.slice(3).forEach((s) => bound(s, s.openedAt, GW_HEADER_S, 'an idle TLS connection to the data plane'));
    bound(bare[0], bare[0].openedAt, API_HEADER_S, 'a TCP connection to the API with no TLS handshake');
    bound(bare[1], bare[1].openedAt, GW_HEADER_S, 'a TCP connection to the data plane with no TLS handshake');

    // The quiet stream outlived them all, and its next output still arrives.
    assert.equal(quiet[0].closedAt, undefined, 'a quiet stream was cut by an idle timeout');
    assert.ok((Date.now() - quiet[0].sentAt) / 1000 > Math.max(API_BODY_S, GW_HEADER_S), 'the stream was not quiet long enough');
    for (const res of streams) res.write('later\n');
    const deadline = Date.now() + 5000;
    while (!quiet[0].data.includes('later') && Date.now() < deadline) await sleep(20);
    assert.match(quiet[0].data.toString(), /started[\s\S]*later/, 'the stream\'s output after the quiet');
  } finally {
    for (const s of [...socks, ...idle, ...bare]) s.destroy();
    await release(quiet);
  }
  // Their budget came back with them.
  assert.equal((await once(API_PORT, '127.0.0.10', health)).status, 204);
});
