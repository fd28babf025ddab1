// The gateway end to end: nginx + ngx_http_corral_module -> corral-api's
// route lookup -> workerd's data port -> envd. See lib.mjs for what is real.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { corralctl } from '../lib/corral.mjs';
import { until } from '../lib/poll.mjs';
import {
  DATAPORT, DEADPORT, NOCACHE_PORT, Worker, createSandbox, envelope, frames, gatewaySignature, gw, lookupCount,
  notFound, unauthorized, forbidden, rawDataport, setupWorld, tokenFor,
} from './lib.mjs';

let w;
before(async () => { w = await setupWorld(); });
after(async () => { await w?.teardown(); });

const jsonError = (r, code, re) => {
  assert.equal(r.status, code, `expected ${code}, got ${r.status}: ${r.raw}`);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.body.code, code);
  assert.equal(typeof r.body.message, 'string');
  if (re) assert.match(r.body.message, re);
};

const unary = (target, method, msg, opts = {}) => gw('POST', `/${method}`, {
  target, via: opts.via || 'headers',
  headers: { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', ...(opts.headers || {}) },
  body: JSON.stringify(msg),
});

test('the tokens corral-api hands out are the ones the module checks', () => {
  assert.equal(w.a.envdAccessToken, tokenFor('envd', w.A.id));
  assert.equal(w.a.trafficAccessToken, tokenFor('traffic', w.A.id));
  assert.equal(w.b.envdAccessToken, undefined);
});

test('routes by Host <port>-<id>.<domain> and by the E2b-Sandbox-* headers', async () => {
  for (const via of ['host', 'headers']) {
    const r = await gw('GET', '/health', { target: w.B, via });
    assert.equal(r.status, 204, `${via}: ${r.raw}`);
    const l = await unary(w.B, 'filesystem.Filesystem/ListDir', { path: '/', depth: 1 }, { via });
    assert.equal(l.status, 200, `${via}: ${l.raw}`);
    assert.ok(Array.isArray(l.body.entries));
  }
});

test('the sandbox sees no X-Corral-* header and keeps its own; the client gets none either', async () => {
  const r = await gw('GET', '/echo?x=1', { target: w.appA, via: 'host', headers: {
    'e2b-traffic-access-token': w.a.trafficAccessToken, 'X-Corral-Gateway': 'forged', 'X-Custom': 'kept' } });
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.url, '/echo?x=1');
  assert.equal(r.body.headers['x-custom'], 'kept');
  assert.deepEqual(Object.keys(r.body.headers).filter((k) => k.startsWith('x-corral')), []);
  // The route lookup answers in X-Corral-* headers, the worker's data key among
  // them: none may ride out to the client, found or not.
  const miss = await gw('GET', '/health', { target: { id: '0123456789abcdef0123', port: 49983 } });
  for (const h of [r.headers, miss.headers])
    assert.deepEqual(Object.keys(h).filter((k) => k.toLowerCase().startsWith('x-corral')), []);
});

test('unknown or malformed sandbox: 502 "not found"; unaddressed: 404 JSON', async () => {
  notFound(await gw('GET', '/health', { target: { id: '0123456789abcdef0123', port: 49983 } }), '0123456789abcdef0123');
  notFound(await gw('GET', '/health', { target: { id: 'NOT-AN-ID', port: 49983 } }));
  notFound(await gw('GET', '/health', { target: { id: '0123456789abcdef0123', port: 49983 }, via: 'host' }),
    '0123456789abcdef0123');
  jsonError(await gw('GET', '/health', {}), 404, /no sandbox addressed/);
  jsonError(await gw('GET', '/health', { target: { id: w.B.id, port: 70000 } }), 400, /port/);
});

test('secure sandbox: X-Access-Token missing or forged is 401 (decision 0069); right, it passes', async () => {
  const list = { path: '/', depth: 1 };
  unauthorized(await unary(w.A, 'filesystem.Filesystem/ListDir', list));
  unauthorized(await unary(w.A, 'filesystem.Filesystem/ListDir', list,
    { headers: { 'X-Access-Token': 'f'.repeat(64) } }));
  // another sandbox's token
  unauthorized(await unary(w.A, 'filesystem.Filesystem/ListDir', list,
    { headers: { 'X-Access-Token': tokenFor('envd', w.B.id) } }));
  unauthorized(await unary(w.A, 'filesystem.Filesystem/ListDir', list,
    { headers: { 'X-Access-Token': w.a.envdAccessToken.slice(0, 63) } }));
  const ok = await unary(w.A, 'filesystem.Filesystem/ListDir', list,
    { headers: { 'X-Access-Token': w.a.envdAccessToken } });
  assert.equal(ok.status, 200, ok.raw);
  // the envd port never needs the traffic token (the SDK does not send it there)
  assert.equal((await gw('GET', '/health', { target: w.A })).status, 204);
});

test('secure sandbox: what envd itself admits without a token goes through', async () => {
  // GET /health, a CORS preflight
  assert.equal((await gw('GET', '/health', { target: w.A })).status, 204);
  const pre = await gw('OPTIONS', '/process.Process/Start', { target: w.A,
    headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' } });
  assert.notEqual(pre.status, 502, pre.raw);
  // a path that only normalises to /health or /files is not exempt
  unauthorized(await gw('GET', '/x/../health', { target: w.A }));
  unauthorized(await gw('GET', '//files?signature=v1_x', { target: w.A }));
  assert.equal((await gw('HEAD', '/files', { target: w.A })).status, 401);
  unauthorized(await gw('GET', '/files?path=/etc/hostname', { target: w.A }));
});

test('/files with a signature passes the gateway and envd checks it', async () => {
  const user = 'user', file = `${w.envdA.home}/signed.txt`;
  const sign = (op, p) => 'v1_' + crypto.createHash('sha256')
    .update(`${p}:${op}:${user}:${w.a.envdAccessToken}`).digest('base64').replace(/=+$/, '');
  const q = (op) => `/files?path=${encodeURIComponent(file)}&username=${user}&signature=${encodeURIComponent(sign(op, file))}`;
  const up = await gw('POST', q('write'), { target: w.A, via: 'host',
    headers: { 'Content-Type': 'application/octet-stream' }, body: 'signed upload' });
  assert.equal(up.status, 200, up.raw);
  const down = await gw('GET', q('read'), { target: w.A, via: 'host' });
  assert.equal(down.status, 200, down.raw);
  assert.equal(down.raw.toString(), 'signed upload');
  // a bad signature gets past the gateway and is refused by envd itself
  const bad = await gw('GET', `/files?path=${encodeURIComponent(file)}&username=${user}&signature=v1_bogus`,
    { target: w.A });
  assert.equal(bad.status, 401, bad.raw);
  // a present but wrong X-Access-Token is refused even with a signature, as envd does
  unauthorized(await gw('GET', q('read'), { target: w.A, headers: { 'X-Access-Token': 'x' } }));
});

test('public traffic off: other ports need e2b-traffic-access-token', async () => {
  forbidden(await gw('GET', '/', { target: w.appA }));
  forbidden(await gw('GET', '/', { target: w.appA, headers: { 'e2b-traffic-access-token': tokenFor('traffic', w.B.id) } }));
  forbidden(await gw('GET', '/', { target: w.appA, headers: { 'e2b-traffic-access-token': w.a.envdAccessToken } }));
  const ok = await gw('GET', '/', { target: w.appA, headers: { 'e2b-traffic-access-token': w.a.trafficAccessToken } });
  assert.equal(ok.status, 200, ok.raw);
  // a public sandbox's ports need nothing: B has no app on 8080, so the data port says 502
  const r = await gw('GET', '/', { target: { id: w.B.id, port: 8080 } });
  jsonError(r, 502, /not reachable/);
});

test('a server-streaming Connect call streams through the whole chain', async () => {
  const t0 = Date.now();
  const events = [];
  await gw('POST', '/process.Process/Start', {
    target: w.B, via: 'host',
    headers: { 'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1', 'Keepalive-Ping-Interval': '50' },
    body: envelope({ process: { cmd: '/bin/bash', args: ['-c', 'for i in 1 2 3 4; do echo line$i; sleep 0.4; done'] } }),
    onResponse: async (res) => {
      assert.equal(res.statusCode, 200);
      for await (const f of frames(res, t0)) events.push(f);
    },
  });
  const out = events.filter((e) => e.msg.event?.data?.stdout);
  assert.ok(out.length >= 2, JSON.stringify(events));
  const end = events.find((e) => e.flags & 2);
  assert.ok(end, 'an end-stream frame');
  // the first output arrived well before the command finished (≈1.6 s)
  assert.ok(out[0].at + 800 < end.at, `first stdout at ${out[0].at} ms, end at ${end.at} ms`);
});

test('an Upgrade (WebSocket-style) connection: 101, then bytes both ways', async () => {
  const https = await import('node:https');
  const fs = await import('node:fs');
  const { GW_PORT } = await import('./lib.mjs');
  const reply = await new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: GW_PORT, path: '/ws', servername: 'localhost',
      ca: fs.readFileSync(process.env.DP_GATEWAY_CA), headers: { Connection: 'Upgrade', Upgrade: 'echo',
        'E2b-Sandbox-Id': w.appA.id, 'E2b-Sandbox-Port': '8080', 'e2b-traffic-access-token': w.a.trafficAccessToken } });
    req.on('upgrade', (res, sock) => {
      assert.equal(res.statusCode, 101);
      let acc = '';
      sock.on('data', (d) => {
        acc += d;
        if (acc.length >= 10) { sock.end(); resolve(acc); }
        else if (acc === 'ping-') sock.write('pong!'); // a second write, once the first came back
      });
      sock.write('ping-');
    });
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
  assert.equal(reply, 'ping-pong!');
});

test('a long chunked response from an app arrives as it is produced', async () => {
  const t0 = Date.now();
  const times = [];
  await gw('GET', '/stream', { target: w.appA, headers: { 'e2b-traffic-access-token': w.a.trafficAccessToken },
    onResponse: async (res) => { for await (const c of res) times.push([Date.now() - t0, c.toString()]); } });
  const text = times.map((t) => t[1]).join('');
  assert.match(text, /tick 0\n[\s\S]*tick 4\n/);
  assert.ok(times.length >= 3 && times[0][0] + 500 < times.at(-1)[0], JSON.stringify(times));
});

test('the route cache: repeated requests make one lookup; bypassed, one each', async () => {
  // Earlier tests cached B's route: request until one misses (its entry
  // expired, within the 2 s ttl), and count the lookups from that miss on.
  let before = lookupCount('cached');
  const missed = await until(async () => {
    const n = lookupCount('cached');
    assert.equal((await gw('GET', '/health', { target: w.B })).status, 204);
    before = n;
    return lookupCount('cached') > n;
  }, { timeoutMs: 5000, everyMs: 100 });
  assert.ok(missed, 'no request missed the route cache in 5 s');
  for (let i = 0; i < 20; i++) assert.equal((await gw('GET', '/health', { target: w.B })).status, 204);
  const cachedLookups = lookupCount('cached') - before;
  assert.ok(cachedLookups >= 1 && cachedLookups <= 2, `${cachedLookups} lookups for 20 requests`);
  const b0 = lookupCount('bypass');
  for (let i = 0; i < 20; i++) assert.equal((await gw('GET', '/health', { target: w.B, port: NOCACHE_PORT })).status, 204);
  assert.equal(lookupCount('bypass') - b0, 20);
});

test('a killed sandbox is "not found" once its cached route expires', async () => {
  const c = await createSandbox(w.ws.member, {});
  const target = { id: c.sandboxID, port: 49983 };
  // not in the data port's map: the worker gives the gateway's own "not found"
  notFound(await gw('GET', '/health', { target }), c.sandboxID);
  const { api } = await import('../lib/corral.mjs');
  const del = await api('DELETE', `/sandboxes/${c.sandboxID}`, { headers: { 'X-API-KEY': w.ws.member } });
  assert.ok([200, 204].includes(del.status), del.raw);
  // the cached route (ttl 2 s) expires: the gateway's own "not found"
  await until(async () => (await gw('GET', '/health', { target })).status === 502, { timeoutMs: 5000, everyMs: 100 });
  notFound(await gw('GET', '/health', { target }), c.sandboxID);
});

test('worker unreachable: 503 JSON with Retry-After from the gateway', async () => {
  const ws2 = (await import('../lib/corral.mjs')).newWorkspace();
  const join = corralctl('join-token', 'create', '--workspace', ws2.id).token;
  const dead = await new Worker(join, DEADPORT).handshake(); // listed, nothing listens
  dead.start();
  try {
    const c = await createSandbox(ws2.member, {});
    const r = await gw('GET', '/health', { target: { id: c.sandboxID, port: 49983 } });
    jsonError(r, 503, /unreachable; retry shortly/);
    assert.equal(r.headers['retry-after'], '1');
  } finally { await dead.stop(); }
});

test('the data port refuses a missing, forged or stale gateway signature (403)', async () => {
  const key = w.worker.dataKey;
  const head = (sig, id = w.B.id, port = 49983) =>
    `GET /health HTTP/1.1\r\nHost: x\r\nX-Corral-Sandbox: ${id}\r\nX-Corral-Port: ${port}\r\n` +
    (sig ? `X-Corral-Gateway: ${sig}\r\n` : '') + '\r\n';
  const status = (raw) => Number(raw.split(' ')[1]);
  const body = (raw) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  let r = await rawDataport(head(null));
  assert.equal(status(r), 403, r);
  assert.equal(body(r).code, 403);
  r = await rawDataport(head(gatewaySignature('wrong-key', w.B.id, 49983)));
  assert.equal(status(r), 403, r);
  assert.match(body(r).message, /invalid gateway signature/);
  r = await rawDataport(head(gatewaySignature(key, w.B.id, 49983, Math.floor(Date.now() / 1000) - 61)));
  assert.equal(status(r), 403, r);
  assert.match(body(r).message, /expired/);
  // signed for another port or sandbox
  r = await rawDataport(head(gatewaySignature(key, w.B.id, 8080)));
  assert.equal(status(r), 403, r);
  r = await rawDataport(head(gatewaySignature(key, w.A.id, 49983), w.B.id));
  assert.equal(status(r), 403, r);
  // right signature, but this worker does not run the sandbox: E2B's "not found"
  r = await rawDataport(head(gatewaySignature(key, '0123456789abcdef0123', 49983), '0123456789abcdef0123'));
  assert.equal(status(r), 502, r);
  assert.deepEqual(body(r), { sandboxId: '0123456789abcdef0123', message: 'The sandbox was not found', code: 502 });
  // right signature: through to envd
  r = await rawDataport(head(gatewaySignature(key, w.B.id, 49983)));
  assert.equal(status(r), 204, r);
  assert.ok(DATAPORT);
});

test('HTTP/2 from the client: a unary call and a body without Content-Length', async () => {
  const http2 = await import('node:http2');
  const fs = await import('node:fs');
  const { GW_PORT, DOMAIN } = await import('./lib.mjs');
  const client = http2.connect(`https://localhost:${GW_PORT}`, { ca: fs.readFileSync(process.env.DP_GATEWAY_CA) });
  const call = (headers, body) => new Promise((resolve, reject) => {
    const s = client.request(headers);
    const chunks = [];
    let status;
    s.on('response', (h) => { status = h[':status']; });
    s.on('data', (c) => chunks.push(c));
    s.on('end', () => resolve({ status, text: Buffer.concat(chunks).toString() }));
    s.on('error', reject);
    // sleep: the body in two pieces apart in time, as a client streaming it sends them.
    if (body) { s.write(body.slice(0, 5)); setTimeout(() => s.end(body.slice(5)), 50); } else s.end();
  });
  try {
    const list = await call({ ':method': 'POST', ':path': '/filesystem.Filesystem/ListDir',
      ':authority': `49983-${w.A.id}.${DOMAIN}`, 'content-type': 'application/json',
      'x-access-token': w.a.envdAccessToken }, JSON.stringify({ path: '/', depth: 1 }));
    assert.equal(list.status, 200, list.text);
    const file = `${w.envdB.home}/h2.txt`;
    const up = await call({ ':method': 'POST', ':path': `/files?path=${encodeURIComponent(file)}&username=user`,
      ':authority': 'localhost', 'e2b-sandbox-id': w.B.id, 'e2b-sandbox-port': '49983',
      'content-type': 'application/octet-stream' }, 'streamed over h2');
    assert.equal(up.status, 200, up.text);
    assert.equal(fs.readFileSync(file, 'utf8'), 'streamed over h2');
  } finally { client.close(); }
});
