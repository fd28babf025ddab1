// Every request on a client connection is decided (decision 0065, issue 25):
// the real corral-egress on loopback, with a policy that allows two stand-in
// hosts and refuses a third, each a small server on its own 127.0.0.x
// address (-test-host, accepted only on a loopback proxy). A request sent on
// after the first one on the same connection must never ride to the first
// one's upstream, and must never reach a host the policy refuses.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import { eventually } from '../lib/poll.mjs';

const BIN = process.env.EGRESS_BIN || new URL('../../build/bin/corral-egress', import.meta.url).pathname;
const TIMEOUT_MS = 5000;
const POLICY = { allow: ['api.allowed.test', 'other.allowed.test'], deny: ['0.0.0.0/0', '::/0'] };

// A stand-in host, as strict as a real server about the end of a connection:
// it answers each request head it reads (bodies by Content-Length or chunked)
// with its own name and the request's, and closes after a request asking so.
// Everything it receives is kept, so a byte that should not have come is seen.
function standIn(name, addr) {
  const host = { name, addr, raw: '', connections: 0 };
  host.server = net.createServer((sock) => {
    host.connections++;
    let buf = '';
    sock.on('data', (d) => {
      host.raw += d.toString('latin1');
      buf += d.toString('latin1');
      for (let r; (r = takeRequest(buf)); ) {
        buf = buf.slice(r.length);
        const body = `${name} ${r.method} ${r.target} host=${r.headers.host} body=${r.body}`;
        const close = /close/i.test(r.headers.connection || '');
        sock.write(`HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `${close ? 'Connection: close\r\n' : ''}\r\n${body}`);
        if (close) { sock.end(); return; }
      }
    });
    sock.on('error', () => {});
  });
  return new Promise((resolve) => host.server.listen(0, addr, () => {
    host.port = host.server.address().port;
    resolve(host);
  }));
}

// One whole request at the front of buf, or null.
function takeRequest(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.slice(0, end).split('\r\n');
  const [method, target] = lines[0].split(' ');
  const headers = {};
  for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  let at = end + 4, body = '';
  if (headers['content-length']) {
    const n = Number(headers['content-length']);
    if (buf.length < at + n) return null;
    body = buf.slice(at, at + n);
    at += n;
  } else if (/chunked/i.test(headers['transfer-encoding'] || '')) {
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return null;
      const n = parseInt(buf.slice(at, eol), 16);
      if (n === 0) {
        const fin = buf.indexOf('\r\n\r\n', eol);
        if (fin < 0) return null;
        at = fin + 4;
        break;
      }
      if (buf.length < eol + 2 + n + 2) return null;
      body += buf.slice(eol + 2, eol + 2 + n);
      at = eol + 2 + n + 2;
    }
  }
  return { method, target, headers, body, length: at };
}

// The request lines a stand-in received, in order.
const requestLines = (h) => [...h.raw.matchAll(/^([A-Z]+ \S+) HTTP\/1\.[01]\r$/gm)].map((m) => m[1]);

let proxy, proxyPort, proxyLog = '', api, other, evil;

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  api = await standIn('api', '127.0.0.2');
  other = await standIn('other', '127.0.0.3');
  evil = await standIn('evil', '127.0.0.4');
  proxyPort = await freePort();
  proxy = spawn(BIN, ['-listen', `127.0.0.1:${proxyPort}`, '-sandbox', 'e2e-every-request',
    '-policy', JSON.stringify(POLICY),
    '-test-host', `api.allowed.test=${api.addr}`, '-test-host', `other.allowed.test=${other.addr}`,
    '-test-host', `evil.test=${evil.addr}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`proxy did not listen: ${proxyLog}`)), TIMEOUT_MS);
    proxy.stderr.on('data', (d) => {
      proxyLog += d;
      if (proxyLog.includes('listening on')) { clearTimeout(t); resolve(); }
    });
    proxy.on('exit', (code) => reject(new Error(`proxy exited ${code}: ${proxyLog}`)));
  });
});

after(async () => {
  proxy?.kill('SIGTERM');
  for (const h of [api, other, evil]) h?.server.close();
});

function reset() {
  for (const h of [api, other, evil]) { h.raw = ''; h.connections = 0; }
}

// One connection to the proxy: the socket, and everything the proxy answers
// on it until it closes (bounded by TIMEOUT_MS).
function connection() {
  const sock = net.connect(proxyPort, '127.0.0.1');
  const closed = new Promise((resolve, reject) => {
    let got = '';
    const t = setTimeout(() => { sock.destroy(); reject(new Error(`no close; got: ${got}`)); }, TIMEOUT_MS);
    sock.on('data', (d) => { got += d.toString('latin1'); });
    sock.on('close', () => { clearTimeout(t); resolve(got); });
    sock.on('error', () => {});
  });
  return { sock, closed };
}

// Writes `bytes` on one connection to the proxy; everything it answers.
function exchange(bytes) {
  const { sock, closed } = connection();
  sock.on('connect', () => sock.write(bytes));
  return closed;
}

const responses = (text) => [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
const url = (h, name, path) => `http://${name}:${h.port}${path}`;
const get = (h, name, path) => `GET ${url(h, name, path)} HTTP/1.1\r\nHost: ${name}:${h.port}\r\n\r\n`;

test('a pipelined request for a refused host never reaches it, nor the first host', async () => {
  reset();
  const got = await exchange(get(api, 'api.allowed.test', '/first') + get(evil, 'evil.test', '/stolen'));
  assert.deepEqual(responses(got), [200], got);
  assert.match(got, /api GET \/first host=api\.allowed\.test/);
  assert.deepEqual(requestLines(api), ['GET /first'], api.raw);
  assert.doesNotMatch(api.raw, /evil|stolen/);
  assert.equal(evil.connections, 0);
  // Sent again on a connection of its own, as a client does with a request
  // left unanswered: decided, and refused.
  const again = await exchange(get(evil, 'evil.test', '/stolen'));
  assert.deepEqual(responses(again), [403], again);
  assert.match(again, /evil\.test is not allowed/);
  assert.equal(evil.connections, 0);
  assert.match(proxyLog, new RegExp(`refuse GET evil\\.test:${evil.port} - policy`));
});

test('a pipelined request for another allowed host reaches that host, and only it', async () => {
  reset();
  const got = await exchange(get(api, 'api.allowed.test', '/first') + get(other, 'other.allowed.test', '/second'));
  assert.deepEqual(responses(got), [200], got);
  assert.deepEqual(requestLines(api), ['GET /first'], api.raw);
  assert.equal(other.connections, 0);
  const again = await exchange(get(other, 'other.allowed.test', '/second'));
  assert.match(again, /other GET \/second host=other\.allowed\.test/);
  assert.deepEqual(requestLines(other), ['GET /second']);
  assert.deepEqual(requestLines(api), ['GET /first']);
});

test('the request after a body (Content-Length or chunked) is not forwarded with it', async () => {
  for (const [framing, body] of [['Content-Length: 11', 'hello world'],
    ['Transfer-Encoding: chunked', '5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n']]) {
    reset();
    const first = `POST ${url(api, 'api.allowed.test', '/up')} HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n${body}`;
    // The second request in two writes: after the first's end is relayed.
    const { sock, closed } = connection();
    sock.write(first + get(evil, 'evil.test', '/a').slice(0, 10));
    await eventually(() => api.raw.endsWith(`\r\n\r\n${body}`), { timeout: TIMEOUT_MS, every: 20,
      what: `${framing}: the first request's end relayed` });
    sock.write(get(evil, 'evil.test', '/a').slice(10));
    const got = await closed;
    assert.deepEqual(responses(got), [200], `${framing}: ${got}`);
    assert.match(got, /api POST \/up host=api\.allowed\.test:\d+ body=hello world/, framing);
    assert.deepEqual(requestLines(api), ['POST /up'], api.raw);
    assert.ok(api.raw.endsWith(`\r\n\r\n${body}`), `${framing}: the body, and not one byte more: ${api.raw}`);
    assert.equal(evil.connections, 0);
  }
});

test('large bodies, many chunks, sent in odd pieces: all of the body, exactly, and nothing after', async () => {
  const payload = Array.from({ length: 300000 }, (_, i) => String.fromCharCode(97 + (i * 7) % 26)).join('');
  let chunked = '';
  for (let at = 0, n = 1; at < payload.length; at += n, n = (n * 31 + 7) % 4099 + 1)
    chunked += `${payload.slice(at, at + n).length.toString(16)}\r\n${payload.slice(at, at + n)}\r\n`;
  chunked += '0\r\n\r\n';
  for (const [framing, body] of [[`Content-Length: ${payload.length}`, payload], ['Transfer-Encoding: chunked', chunked]]) {
    reset();
    const all = `POST ${url(api, 'api.allowed.test', '/big')} HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n${body}` +
      get(evil, 'evil.test', '/after');
    const { sock, closed } = connection();
    for (let at = 0, n = 1; at < all.length; at += n, n = (n * 17 + 3) % 65521 + 1) {
      sock.write(Buffer.from(all.slice(at, at + n), 'latin1'));
      if (at % 5 === 0) await new Promise((r) => setImmediate(r));
    }
    const got = await closed;
    assert.deepEqual(responses(got), [200], framing);
    assert.ok(got.includes(`body=${payload}`), `${framing}: the server read the whole body`);
    assert.ok(api.raw.endsWith(`\r\n\r\n${body}`), `${framing}: the body, and not one byte more`);
    assert.equal(evil.connections, 0);
  }
});

test('ambiguous framing is refused with 400 and reaches no host', async () => {
  for (const framing of ['Content-Length: 5\r\nTransfer-Encoding: chunked',
    'Content-Length: 5\r\nContent-Length: 5', 'Transfer-Encoding: gzip, chunked']) {
    reset();
    const smuggle = `POST ${url(api, 'api.allowed.test', '/')} HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n` +
      `0\r\n\r\n${get(evil, 'evil.test', '/smuggled')}`;
    const got = await exchange(smuggle);
    assert.deepEqual(responses(got), [400], got);
    assert.match(got, /corral egress: bad request/);
    assert.equal(api.connections + evil.connections, 0, framing);
  }
});

test('a CONNECT tunnel is decided once by its target and carries every byte', async () => {
  reset();
  const inner = `GET /one HTTP/1.1\r\nHost: api.allowed.test\r\n\r\nGET /two HTTP/1.1\r\nHost: api.allowed.test\r\nConnection: close\r\n\r\n`;
  const got = await exchange(`CONNECT api.allowed.test:${api.port} HTTP/1.1\r\nHost: api.allowed.test:${api.port}\r\n\r\n${inner}`);
  assert.deepEqual(responses(got), [200, 200, 200], got);
  assert.deepEqual(requestLines(api), ['GET /one', 'GET /two']);
  const refused = await exchange(`CONNECT evil.test:${evil.port} HTTP/1.1\r\n\r\n`);
  assert.deepEqual(responses(refused), [403], refused);
  assert.equal(evil.connections, 0);
});

test('ordinary clients: node http with a keep-alive agent, and curl, reach each host in turn', async () => {
  reset();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const via = (h, name, path) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxyPort, path: url(h, name, path), agent,
      headers: { host: `${name}:${h.port}` } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
  for (const [h, name, path] of [[api, 'api.allowed.test', '/n1'], [other, 'other.allowed.test', '/n2'],
    [api, 'api.allowed.test', '/n3']]) {
    const r = await via(h, name, path);
    assert.equal(r.status, 200);
    assert.equal(r.body, `${h.name} GET ${path} host=${name}:${h.port} body=`);
  }
  assert.equal((await via(evil, 'evil.test', '/n4')).status, 403);
  agent.destroy();
  const { stdout } = await promisify(execFile)('curl', ['-sS', '--max-time', '5', '-x', `http://127.0.0.1:${proxyPort}`,
    url(api, 'api.allowed.test', '/c1'), url(other, 'other.allowed.test', '/c2'), url(evil, 'evil.test', '/c3')]);
  assert.match(stdout, /api GET \/c1 host=api\.allowed\.test/);
  assert.match(stdout, /other GET \/c2 host=other\.allowed\.test/);
  assert.match(stdout, /evil\.test is not allowed/);
  assert.deepEqual(requestLines(api), ['GET /n1', 'GET /n3', 'GET /c1']);
  assert.deepEqual(requestLines(other), ['GET /n2', 'GET /c2']);
  assert.equal(evil.connections, 0);
});
