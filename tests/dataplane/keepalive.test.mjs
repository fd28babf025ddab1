// The data port keeps connections (decision 0050): both from the gateway and
// to each sandbox. Tried as an attacker would: many sandboxes' requests down
// one connection, a body that looks like a request, a sandbox that answers
// more than its response or frames it two ways. Raw TCP to the real data
// port (workerd/dataport*.c in dataport_main), real envd and apps behind it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { DATAPORT, dataportLookups, gatewaySignature, setDataport, setupWorld, sleep } from './lib.mjs';
import { eventually } from '../lib/poll.mjs';

let w;
const hostile = []; // raw TCP "sandbox apps" on 127.0.0.3, B's address
before(async () => { w = await setupWorld(); });
after(async () => {
  for (const s of hostile) s.close();
  await w?.teardown();
});

// A head for sandbox id's port, signed with `signFor` (default: the same).
const req = (method, path, id, port, { signFor = [id, port], headers = {}, body = '' } = {}) => {
  const h = Object.entries({ Host: 'x', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const len = body || method === 'POST' ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : '';
  return `${method} ${path} HTTP/1.1\r\n${h}${len}X-Corral-Sandbox: ${id}\r\nX-Corral-Port: ${port}\r\n` +
    `X-Corral-Gateway: ${gatewaySignature(w.worker.dataKey, ...signFor)}\r\n\r\n${body}`;
};

// A chunked body at the start of b: [decoded, bytes used], or null if incomplete.
function dechunk(b) {
  let at = 0;
  const parts = [];
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(b.subarray(at, eol).toString(), 16);
    if (b.length < eol + 2 + size + 2) return null;
    parts.push(b.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
    if (size === 0) return [Buffer.concat(parts).toString(), at];
  }
}

// One connection to the data port; reads responses one by one (framed by
// Content-Length or chunked, none for 204), as nginx would on a kept connection.
function conn() {
  const [host, port] = DATAPORT.split(':');
  const s = net.connect(Number(port), host);
  let buf = Buffer.alloc(0);
  let closed = false;
  const waiters = [];
  const wake = () => { while (waiters.length) waiters.shift()(); };
  s.on('data', (d) => { buf = Buffer.concat([buf, d]); wake(); });
  s.on('close', () => { closed = true; wake(); });
  s.on('error', () => {});
  // sleep: not a wait of its own: data or the close wake it at once; the 3 s
  // only bound a wake that never comes (the caller looks again).
  const more = () => new Promise((r) => { waiters.push(r); setTimeout(r, 3000); });
  return {
    s,
    get closed() { return closed; },
    send: (text) => s.write(text),
    async response() {
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end >= 0) {
          const head = buf.subarray(0, end).toString();
          const status = Number(head.split(' ')[1]);
          const m = /\r\ncontent-length: *(\d+)/i.exec(head);
          if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
            const d = dechunk(buf.subarray(end + 4));
            if (d) {
              buf = buf.subarray(end + 4 + d[1]);
              return { status, head, body: d[0] };
            }
            if (closed) return { status: 0, head, body: '', closed: true };
            await more();
            continue;
          }
          const len = status === 204 ? 0 : m ? Number(m[1]) : null;
          if (len !== null && buf.length >= end + 4 + len) {
            const body = buf.subarray(end + 4, end + 4 + len).toString();
            buf = buf.subarray(end + 4 + len);
            return { status, head, body };
          }
          if (len === null && closed) {
            const body = buf.subarray(end + 4).toString();
            buf = Buffer.alloc(0);
            return { status, head, body };
          }
        }
        if (closed) return { status: 0, head: '', body: buf.toString(), closed: true };
        await more();
      }
    },
    // what arrives within ms after the last response (should be nothing)
    // sleep: a window, not a condition: nothing may arrive in it.
    async stray(ms = 300) { await sleep(ms); return buf.toString(); },
    get text() { return buf.toString(); },
    end: () => s.destroy(),
  };
}

// A sandbox app speaking raw HTTP on B's address: answer(reqText) is written back.
function rawApp(port, answer) {
  const seen = [];
  const srv = net.createServer((sock) => {
    let got = '';
    sock.on('data', (d) => {
      got += d;
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      seen.push(got.slice(0, end));
      got = '';
      sock.write(answer(seen.length));
    });
    sock.on('error', () => {});
  });
  hostile.push(srv);
  return new Promise((resolve) => srv.listen(port, '127.0.0.3', () => resolve(seen)));
}

test('one kept connection carries requests for two sandboxes; each lands in its own', async () => {
  const c = conn();
  c.send(req('GET', '/echo?first', w.A.id, 8080));
  const a = await c.response();
  assert.equal(a.status, 200, a.head);
  assert.equal(JSON.parse(a.body).url, '/echo?first'); // A's app answered
  c.send(req('GET', '/health', w.B.id, 49983));
  const b = await c.response();
  assert.equal(b.status, 204, b.head); // B's envd answered, on the same connection
  c.send(req('GET', '/echo?again', w.A.id, 8080));
  const a2 = await c.response();
  assert.equal(JSON.parse(a2.body).url, '/echo?again');
  assert.equal(c.closed, false, 'the data port kept the connection');
  // pipelined: both heads in one write, answered in order, each by its own
  c.send(req('GET', '/health', w.B.id, 49983) + req('GET', '/echo?piped', w.A.id, 8080));
  assert.equal((await c.response()).status, 204);
  assert.equal(JSON.parse((await c.response()).body).url, '/echo?piped');
  c.end();
});

test('each request is checked on its own: a forged one on a kept connection is refused', async () => {
  const c = conn();
  c.send(req('GET', '/health', w.B.id, 49983));
  assert.equal((await c.response()).status, 204);
  // the next request names A but carries B's signature
  c.send(req('GET', '/echo?forged', w.A.id, 8080, { signFor: [w.B.id, 8080] }));
  const r = await c.response();
  assert.equal(r.status, 403, r.head);
  assert.match(JSON.parse(r.body).message, /invalid gateway signature/);
  assert.equal((await c.response()).closed, true, 'a refusal ends the connection');
});

test('a body that looks like a request for another sandbox stays a body', async () => {
  const c = conn();
  const inner = req('GET', '/echo?smuggled', w.A.id, 8080);
  c.send(req('POST', '/echo?outer', w.B.id, 49983, { body: inner }));
  const r = await c.response(); // envd answers the POST (404: no such route); nothing reaches A
  assert.notEqual(r.status, 0);
  c.send(req('GET', '/echo?after', w.A.id, 8080));
  const a = await c.response();
  assert.equal(JSON.parse(a.body).url, '/echo?after', 'the next answer is for the next request');
  assert.equal(await c.stray(), '');
  c.end();
});

test('a chunked request body ends where its last chunk says; the next request follows', async () => {
  const c = conn();
  const head = req('POST', '/echo?chunked', w.A.id, 8080, { headers: { 'Transfer-Encoding': 'chunked' } })
    .replace('Content-Length: 0\r\n', '');
  c.send(`${head}5\r\nhello\r\n0\r\n\r\n${req('GET', '/echo?next', w.A.id, 8080)}`);
  const r = await c.response();
  assert.equal(JSON.parse(r.body).method, 'POST');
  assert.equal(JSON.parse((await c.response()).body).url, '/echo?next');
  c.end();
});

test('a sandbox answering more than its response: the extra never reaches the gateway', async () => {
  const evil = 'HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nSECRET';
  await rawApp(8091, () => `HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok${evil}`);
  const c = conn();
  c.send(req('GET', '/', w.B.id, 8091));
  const r = await c.response();
  assert.equal(r.body, 'ok');
  // the next request on this connection is another sandbox's: it must get A's answer, not B's leftover
  c.send(req('GET', '/echo?victim', w.A.id, 8080));
  const v = await c.response();
  assert.equal(JSON.parse(v.body).url, '/echo?victim');
  assert.doesNotMatch(v.body, /SECRET/);
  c.end();
});

test('a response framed two ways, or with bare LFs, is refused (502) and both connections end', async () => {
  const answers = [
    'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'HTTP/1.1 200 OK\nContent-Length: 0\n\nHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nSECRET',
    'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok',
    'HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok',
  ];
  const seen = await rawApp(8092, (n) => answers[n - 1]);
  for (const [i] of answers.entries()) {
    const c = conn();
    c.send(req('GET', `/${i}`, w.B.id, 8092));
    const r = await c.response();
    assert.equal(r.status, 502, `answer ${i}: ${r.head}`);
    assert.match(JSON.parse(r.body).message, /sandbox sent/);
    assert.doesNotMatch(r.body, /SECRET/);
    assert.equal((await c.response()).closed, true, `answer ${i}: the connection ends`);
  }
  assert.equal(seen.length, answers.length);
});

test("the data port vouches for a kept connection (X-Corral-Keep); a sandbox cannot", async () => {
  await rawApp(8095, () => 'HTTP/1.1 200 OK\r\nX-Corral-Keep: forged\r\nx-corral-gateway: x\r\nContent-Length: 2\r\n\r\nok');
  const c = conn();
  const head = req('GET', '/', w.B.id, 8095);
  const sig = /X-Corral-Gateway: (\S+)/.exec(head)[1];
  c.send(head);
  const r = await c.response();
  assert.equal(r.body, 'ok');
  const lines = r.head.split('\r\n').filter((l) => /^x-corral-/i.test(l));
  assert.deepEqual(lines, [`X-Corral-Keep: ${sig}`], 'only the data port\'s own, for this request');
  // a request that asks to close gets no such word, and the connection ends
  c.send(req('GET', '/health', w.B.id, 49983, { headers: { Connection: 'close' } }));
  const last = await c.response();
  assert.equal(last.status, 204);
  assert.doesNotMatch(last.head, /x-corral-keep/i);
  assert.equal((await c.response()).closed, true);
});

test('a head and a large body in one read: the body is not taken for the head', async () => {
  const big = 'x'.repeat(300000);
  await rawApp(8096, () => `HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
  const c = conn();
  c.send(req('GET', '/', w.B.id, 8096));
  const r = await c.response();
  assert.equal(r.status, 200, r.head);
  assert.equal(r.body.length, big.length);
  c.end();
});

test('interim answers (100, 103) are dropped: nginx gets the final one, and the connection goes on', async () => {
  await rawApp(8094, () => 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n' +
    'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal');
  const c = conn();
  c.send(req('GET', '/', w.B.id, 8094));
  const r = await c.response();
  assert.equal(r.status, 200, r.head);
  assert.equal(r.body, 'final');
  c.send(req('GET', '/health', w.B.id, 49983));
  assert.equal((await c.response()).status, 204);
  c.end();
});

test('a kept sandbox connection is reused; a response that runs on is not', async () => {
  let conns = 0;
  const srv = net.createServer((sock) => {
    conns++;
    let got = '';
    sock.on('data', (d) => {
      got += d;
      while (got.includes('\r\n\r\n')) {
        got = got.slice(got.indexOf('\r\n\r\n') + 4);
        sock.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      }
    });
    sock.on('error', () => {});
  });
  hostile.push(srv);
  await new Promise((r) => srv.listen(8093, '127.0.0.3', r));
  const c = conn();
  for (let i = 0; i < 20; i++) {
    c.send(req('GET', `/${i}`, w.B.id, 8093));
    assert.equal((await c.response()).body, 'ok');
  }
  c.end();
  assert.equal(conns, 1, 'twenty requests, one connection to the sandbox');
});

test('an upgrade becomes a tunnel to that one port', async () => {
  const c = conn();
  c.send(req('GET', '/ws', w.A.id, 8080, { headers: { Upgrade: 'echo', Connection: 'Upgrade' } }));
  for (let i = 0; i < 50 && !c.s.bytesRead; i++) await sleep(20);
  c.send('ping-through-tunnel');
  await eventually(() => c.text.endsWith('ping-through-tunnel'), { timeout: 5000, what: 'the echo through the tunnel' });
  const all = c.text;
  assert.match(all, /^HTTP\/1.1 101/);
  assert.match(all, /ping-through-tunnel$/);
  c.end();
});

// A sandbox app that writes `pieces` with setImmediate between them (so each
// tends to arrive in its own read), then holds the connection open.
function drippingApp(port, pieces) {
  const srv = net.createServer((sock) => {
    sock.setNoDelay(true);
    sock.once('data', async () => {
      for (const p of pieces) {
        if (sock.destroyed) return;
        sock.write(p);
        await new Promise((r) => setImmediate(r));
      }
    });
    sock.on('error', () => {});
  });
  hostile.push(srv);
  return new Promise((resolve) => srv.listen(port, '127.0.0.3', resolve));
}

test('a response head dripped in pieces is read whole; one that never ends is cut at 64 KB', async () => {
  const head = 'HTTP/1.1 200 OK\r\nX-Drip: yes\r\nContent-Length: 2\r\n\r\nok';
  await drippingApp(8097, [...head]);
  const c = conn();
  c.send(req('GET', '/drip', w.B.id, 8097));
  const r = await c.response();
  assert.equal(r.status, 200);
  assert.equal(r.body, 'ok');
  assert.match(r.head, /x-drip: yes/i);
  c.end();

  // 80 KB of header lines in 40-byte pieces, never the blank line that ends a head
  await drippingApp(8098, ['HTTP/1.1 200 OK\r\n', ...Array(2000).fill(`X-Pad: ${'a'.repeat(31)}\r\n`)]);
  const e = conn();
  const t0 = Date.now();
  e.send(req('GET', '/endless', w.B.id, 8098));
  // meanwhile the data port answers others at once
  const o = conn();
  o.send(req('GET', '/echo?other', w.A.id, 8080));
  assert.equal(JSON.parse((await o.response()).body).url, '/echo?other');
  o.end();
  const x = await e.response();
  assert.equal(x.status, 502, x.head);
  assert.match(JSON.parse(x.body).message, /response head is over 65536 bytes/);
  assert.equal((await e.response()).closed, true, 'the connection ends');
  assert.ok(Date.now() - t0 < 5000, `cut after ${Date.now() - t0} ms`);
});

test('requests for one sandbox that miss the address cache together wait on one lookup, not 503', async () => {
  // 150 at once, each on its own connection, while dockerd takes 300 ms to answer:
  // more than the 64 lookups the data port runs at once, were each its own
  const id = 'coalesce0000000000000';
  setDataport(w.worker, { [w.A.id]: '127.0.0.2', [w.B.id]: '127.0.0.3', [id]: '127.0.0.2 slow' });
  const before = dataportLookups(id);
  const one = () => new Promise((resolve) => {
    const c = conn();
    c.send(req('GET', '/health', id, 49983));
    c.response().then((r) => { c.end(); resolve(r.status); });
  });
  const statuses = await Promise.all(Array.from({ length: 150 }, one));
  const lookups = dataportLookups(id) - before;
  setDataport(w.worker, { [w.A.id]: '127.0.0.2', [w.B.id]: '127.0.0.3' });
  const counts = statuses.reduce((m, s) => ({ ...m, [s]: (m[s] || 0) + 1 }), {});
  assert.deepEqual(counts, { 204: 150 }, JSON.stringify(counts)); // envd's /health
  assert.ok(lookups >= 1 && lookups <= 10, `${lookups} lookups for 150 requests`);
});

test('the gateway gives up while the sandbox thinks: the sandbox\'s side is closed too', async () => {
  // A server that reads the request and answers nothing for now, as the code
  // interpreter does with a long cell: it learns the caller went only from
  // its connection's end (decision 0088).
  let ended = false;
  let asked = false;
  const socks = [];
  const srv = net.createServer((sock) => {
    socks.push(sock);
    sock.on('data', () => { asked = true; sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'); });
    sock.on('end', () => { ended = true; sock.end(); });
    sock.on('close', () => { ended = true; });
    sock.on('error', () => {});
  });
  hostile.push(srv);
  await new Promise((r) => srv.listen(8099, '127.0.0.3', r));
  const c = conn();
  c.send(req('POST', '/execute', w.B.id, 8099, { body: '{"code":"while True: pass"}' }));
  await eventually(() => asked, { what: 'the request reached the server' });
  c.end(); // nginx closes its upstream connection when its client aborts
  try {
    await eventually(() => ended, { timeout: 5000, what: "the sandbox's side closed" });
  } finally {
    for (const s of socks) s.destroy(); // else a failure holds the run open
  }
});
