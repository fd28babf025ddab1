// Helpers for the data-plane tests. Everything here is real: the gateway is
// nginx with ngx_http_corral_module loaded, the route comes from corral-api's
// /v1/internal/route over FastCGI (Redis behind it), the worker's data port is
// workerd/dataport.c (in tests/dataplane/dataport_main), and the sandbox side
// is the real envd binary on a loopback address. Only the worker's control
// channel is played by this file (handshake + heartbeat through the real
// routes), since there is no Docker container behind these sandboxes.
// run.sh sets the environment; a missing piece fails loudly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { api, corralctl, newWorkspace } from '../lib/corral.mjs';
import { sleep } from '../lib/poll.mjs';

const need = (k) => {
  if (!process.env[k]) throw new Error(`${k} is not set: run the tests through tests/dataplane/run.sh`);
  return process.env[k];
};

export const GW_PORT = Number(need('DP_GATEWAY_PORT'));
export const NOCACHE_PORT = Number(need('DP_NOCACHE_PORT'));
export const DP_DIR = need('DP_DIR');
export const DATAPORT = need('DP_DATAPORT');
// listed for the gateway like DATAPORT, where nothing listens (run.sh)
export const DEADPORT = need('DP_DEADPORT');
export const DOMAIN = need('DP_DOMAIN');
export const ENVD_BIN = need('ENVD_BIN');
const KEYFILE = need('DP_KEYFILE');
const MAPFILE = need('DP_MAPFILE');
const CA = fs.readFileSync(need('DP_GATEWAY_CA'));
export const ENVD_PORT = 49983;

export { sleep };

// ---- the worker's control channel ----------------------------------------

export class Worker {
  constructor(joinToken, dataAddr) {
    Object.assign(this, { joinToken, dataAddr, acks: [], reports: [], creates: new Map(), stopped: true });
  }

  async handshake() {
    const r = await api('POST', '/v1/worker/handshake', {
      headers: { Authorization: `Bearer ${this.joinToken}` },
      body: { hostname: 'dataplane-test', runtimes: [{ name: 'runc', tier: 'CONTAINER' }], egress: false,
        cpu_cores: 8, memory_mb: 16384, slots: 20, data_addr: this.dataAddr, templates: ['base'] },
    });
    if (r.status !== 200) throw new Error(`handshake ${r.status}: ${r.raw}`);
    Object.assign(this, { id: r.body.worker_id, secret: r.body.worker_secret, dataKey: r.body.data_key });
    if (!this.dataKey) throw new Error(`handshake answered no data_key: ${r.raw}`);
    return this;
  }

  start() {
    this.stopped = false;
    this.loop = (async () => {
      let resume = true;
      while (!this.stopped) {
        const body = { acks: this.acks.splice(0), sandboxes: this.reports.splice(0), resume };
        resume = false;
        const r = await api('POST', '/v1/worker/heartbeat', { body, headers: {
          Authorization: `Bearer ${this.joinToken}`, 'X-Worker-Id': this.id, 'X-Worker-Secret': this.secret } })
          .catch((e) => ({ status: 0, raw: String(e) }));
        if (r.status !== 200) {
          this.acks.unshift(...body.acks);
          this.reports.unshift(...body.sandboxes);
          // sleep: a worker's pause before it polls again after a failure (until stop()).
          await sleep(200);
          continue;
        }
        for (const c of r.body.commands || []) {
          if (c.type === 'create') {
            this.creates.set(c.sandbox.id, c.sandbox);
            this.reports.push({ id: c.sandbox.id, state: 'running' });
          }
          this.acks.push(c.id);
        }
      }
    })();
    return this;
  }

  async stop() {
    this.stopped = true;
    await this.loop;
  }
}

// Creates a sandbox through the E2B surface, as the SDK does; returns the
// 201 body (sandboxID, envdAccessToken, trafficAccessToken).
export async function createSandbox(key, { secure = false, allowPublicTraffic = true, timeout = 600 } = {}) {
  const r = await api('POST', '/v2/sandboxes', {
    headers: { 'X-API-KEY': key },
    body: { templateID: 'base', timeout, secure, network: { allowPublicTraffic } },
  });
  if (r.status !== 201) throw new Error(`create ${r.status}: ${r.raw}`);
  return r.body;
}

// The data port's view: its key and which sandbox runs at which address.
// How many times the data port looked sandbox id up (dataport_main's log).
export const dataportLookups = (id) => {
  const f = `${MAPFILE}.lookups`;
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter((l) => l === id).length : 0;
};

export function setDataport(worker, map) {
  fs.writeFileSync(KEYFILE, worker.dataKey + '\n', { mode: 0o600 });
  fs.writeFileSync(MAPFILE, Object.entries(map).map(([id, ip]) => `${id}=${ip}`).join('\n') + '\n');
}

// ---- sandbox side --------------------------------------------------------

// Starts envd on ip:49983, as root, with its own passwd/group (user "user").
export async function startEnvd(ip, token) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dp-envd-'));
  fs.chmodSync(dir, 0o755);
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  fs.chownSync(home, 1000, 1000);
  fs.writeFileSync(path.join(dir, 'passwd'), `root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::${home}:/bin/bash\n`);
  fs.writeFileSync(path.join(dir, 'group'), 'root:x:0:\nuser:x:1000:\n');
  const env = { ...process.env };
  if (token) env.CORRAL_ENVD_ACCESS_TOKEN = token;
  const child = spawn(ENVD_BIN, ['-port', String(ENVD_PORT), '-addr', ip, '-passwd', path.join(dir, 'passwd'),
    '-group', path.join(dir, 'group')], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`envd on ${ip} exited ${child.exitCode}: ${log}`);
    try {
      if ((await fetch(`http://${ip}:${ENVD_PORT}/health`)).status === 204) break;
    } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`envd on ${ip} did not come up: ${log}`);
    // sleep: between tries of this loop, bounded by its deadline (5 s).
    await sleep(50);
  }
  return {
    ip, home, base: `http://${ip}:${ENVD_PORT}`,
    async stop() {
      if (child.exitCode === null) { child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r)); }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// A user application in the sandbox on ip:port: echoes what it received as
// JSON, streams on /stream, and on an Upgrade answers 101 and echoes bytes.
export function startApp(ip, port) {
  const srv = http.createServer((req, res) => {
    if (req.url.startsWith('/stream')) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      let i = 0;
      const t = setInterval(() => {
        res.write(`tick ${i}\n`);
        if (++i === 5) { clearInterval(t); res.end(); }
      }, 200);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
  });
  srv.on('upgrade', (req, sock) => {
    sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
    sock.on('data', (d) => sock.write(d));
    sock.on('end', () => sock.end());
  });
  return new Promise((resolve, reject) => {
    srv.on('error', reject);
    srv.listen(port, ip, () => resolve({ stop: () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); }) }));
  });
}

// ---- clients ---------------------------------------------------------------

export const tokenFor = (kind, id) => crypto.createHmac('sha256',
  fs.readFileSync(path.join(need('CORRAL_RUN'), 'gateway-secret'), 'utf8').trim()).update(`${kind}:${id}`).digest('hex');

// One request through the gateway (HTTPS, HTTP/1.1). `target` is
// {id, port} and `via` 'host' (Host: port-id.domain) or 'headers'.
// body: string | Buffer | async iterable. Returns {status, headers, body}
// unless `onResponse` takes the response stream.
export function gw(method, urlPath, { target, via = 'headers', headers = {}, body, port = GW_PORT, onResponse,
  agent = false } = {}) {
  const h = { ...headers };
  if (target && via === 'host') h.Host = `${target.port}-${target.id}.${DOMAIN}`;
  if (target && via === 'headers') Object.assign(h, { 'E2b-Sandbox-Id': target.id, 'E2b-Sandbox-Port': String(target.port) });
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method, path: urlPath, headers: h, ca: CA,
      servername: 'localhost', agent }, (res) => {
      if (onResponse) return resolve(onResponse(res));
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        let parsed = buf.toString();
        try { parsed = JSON.parse(parsed); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, body: parsed, raw: buf });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body === undefined) req.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else (async () => { for await (const c of body) if (!req.write(c)) await new Promise((r) => req.once('drain', r)); req.end(); })()
      .catch(reject);
  });
}

// A known sandbox, a missing or wrong token: E2B's answers (decision 0069),
// envd's token 401, the traffic token 403, in the {code, message} shape.
export function unauthorized(r) { return tokenRefusal(r, 401, /^missing or invalid access token: .*X-Access-Token$/); }
export function forbidden(r) { return tokenRefusal(r, 403, /^missing or invalid traffic access token: .*e2b-traffic-access-token$/); }
function tokenRefusal(r, code, message) {
  assert.equal(r.status, code, `expected ${code}, got ${r.status}: ${r.raw}`);
  assert.equal(r.headers['content-type'], 'application/json');
  const body = JSON.parse(String(r.raw));
  assert.equal(body.code, code);
  assert.match(body.message, message);
  return r;
}

// The gateway's one answer for a sandbox the client may not reach (unknown,
// ended, paused, a malformed id): 502 and this body (decision 33).
// id undefined: a malformed id, not echoed.
export function notFound(r, id) {
  assert.equal(r.status, 502, `expected the not-found answer, got ${r.status}: ${r.raw}`);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(String(r.raw), id ? `{"sandboxId":"${id}","message":"The sandbox was not found","code":502}`
    : '{"message":"The sandbox was not found","code":502}');
  return r;
}

export function envelope(msg) {
  const json = Buffer.from(JSON.stringify(msg));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

// Reads Connect enveloped frames from a response stream; yields
// {at: ms since start, flags, msg}.
export async function* frames(res, t0) {
  let buf = Buffer.alloc(0);
  for await (const chunk of res) {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
      const len = buf.readUInt32BE(1);
      yield { at: Date.now() - t0, flags: buf[0], msg: JSON.parse(buf.subarray(5, 5 + len).toString()) };
      buf = buf.subarray(5 + len);
    }
  }
}

// A raw request to the data port itself (no nginx).
export function rawDataport(head) {
  const [host, port] = DATAPORT.split(':');
  return new Promise((resolve, reject) => {
    // "Connection: close", so that the data port ends the connection after
    // its answer. Not a half-close after the head: nginx never half-closes,
    // and the data port takes a gateway's FIN with an answer pending for the
    // gateway giving up (decision 0088).
    const nl = head.indexOf('\r\n');
    const closing = nl < 0 ? head : `${head.slice(0, nl)}\r\nConnection: close${head.slice(nl)}`;
    const s = net.connect(Number(port), host, () => s.write(closing));
    let out = '';
    s.on('data', (d) => { out += d; });
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

export function gatewaySignature(key, id, port, secs = Math.floor(Date.now() / 1000)) {
  return `${secs}:${crypto.createHmac('sha256', key).update(`${id}:${port}:${secs}`).digest('hex')}`;
}

export const lookupCount = (name = 'cached') => {
  const f = path.join(DP_DIR, `lookup-${name}.log`);
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0;
};

// A world for one test file: a workspace, a worker whose data port is the
// real one, and two sandboxes: A secure with public traffic off (envd on
// 127.0.0.2, an app on 127.0.0.2:8080), B open (envd on 127.0.0.3).
export async function setupWorld() {
  const ws = newWorkspace();
  const join = corralctl('join-token', 'create', '--workspace', ws.id).token;
  const worker = await new Worker(join, DATAPORT).handshake();
  worker.start();
  const a = await createSandbox(ws.member, { secure: true, allowPublicTraffic: false });
  const b = await createSandbox(ws.member, {});
  setDataport(worker, { [a.sandboxID]: '127.0.0.2', [b.sandboxID]: '127.0.0.3' });
  const envdA = await startEnvd('127.0.0.2', worker.creates.get(a.sandboxID)?.envd_access_token || a.envdAccessToken);
  const envdB = await startEnvd('127.0.0.3');
  const app = await startApp('127.0.0.2', 8080);
  return {
    ws, worker, a, b, envdA, envdB,
    A: { id: a.sandboxID, port: ENVD_PORT }, B: { id: b.sandboxID, port: ENVD_PORT },
    appA: { id: a.sandboxID, port: 8080 },
    async teardown() {
      await Promise.allSettled([envdA.stop(), envdB.stop(), app.stop(), worker.stop()]);
    },
  };
}
