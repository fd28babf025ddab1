// What the interception tests stand on, all on loopback: certificates made
// with the openssl CLI in a temporary directory, HTTPS and HTTP stand-in
// servers that record what they receive, the placeholder resolver (the
// protocol workerd speaks: one JSON line each way on a unix socket), a
// SOCKS5 server with username/password, and corral-egress itself started on
// a JSON config file.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

export const BIN = process.env.EGRESS_BIN ||
  new URL('../../build/bin/corral-egress', import.meta.url).pathname;
export const TIMEOUT_MS = 5000;

export const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'egress-tls-'));

const openssl = (args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

// A CA (P-256): { cert, key } paths.
export function makeCA(dir, name) {
  const cert = path.join(dir, `${name}.pem`), key = path.join(dir, `${name}.key`);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  return { cert, key };
}

// A server certificate for `names` (SAN dNSName), signed by ca.
export function makeLeaf(dir, ca, file, names) {
  const key = path.join(dir, `${file}.key`), csr = path.join(dir, `${file}.csr`);
  const cert = path.join(dir, `${file}.pem`), ext = path.join(dir, `${file}.ext`);
  fs.writeFileSync(ext, `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', csr, '-subj', `/CN=${names[0]}`]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial',
    String(Date.now() % 1e9), '-days', '2', '-extfile', ext, '-out', cert]);
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
}

// A server that answers every request with its name and records each one:
// { method, url, headers, body, conn } (conn: the connection's ordinal).
function recorder(name, host) {
  host.requests = [];
  host.connections = 0;
  return (req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      host.requests.push({ method: req.method, url: req.url, headers: req.headers, body,
        conn: req.socket.ordinal });
      res.end(`${name} ${req.method} ${req.url} body=${body}`);
    });
  };
}

async function listen(server, host, addr) {
  server.on('connection', (s) => { s.ordinal = ++host.connections; });
  server.on('secureConnection', (s) => { s.ordinal = host.connections; });
  await new Promise((r) => server.listen(0, addr, r));
  host.port = server.address().port;
  host.server = server;
  return host;
}

export function httpsHost(name, addr, leaf) {
  const host = { name, addr };
  return listen(https.createServer({ ...leaf, keepAliveTimeout: 30000 }, recorder(name, host)), host, addr);
}

export function httpHost(name, addr) {
  const host = { name, addr };
  return listen(http.createServer(recorder(name, host)), host, addr);
}

// The resolver: `values` is { secrets: {...}, tokens: {...} }, changed at
// will by the test; every question is kept.
export async function resolver(sockPath, values) {
  const r = { values, questions: [] };
  r.server = net.createServer((sock) => {
    let buf = '';
    sock.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      const q = JSON.parse(buf.slice(0, nl));
      r.questions.push(q);
      const answer = { secrets: {}, tokens: {} };
      for (const kind of ['secrets', 'tokens'])
        for (const n of q[kind]) if (n in r.values[kind]) answer[kind][n] = r.values[kind][n];
      sock.end(`${JSON.stringify(answer)}\n`);
    });
    sock.on('error', () => {});
  });
  await new Promise((res) => r.server.listen(sockPath, res));
  return r;
}

// A SOCKS5 server (RFC 1928/1929) that wants user/pass, and connects a
// domain to routes[name] (its own stand-in lookup). Every CONNECT it is
// asked for is kept: { atyp, host, port }, and every failed login.
export async function socksServer(addr, user, pass, routes) {
  const s = { requests: [], badLogins: 0, connections: 0 };
  s.server = net.createServer((c) => {
    s.connections++;
    c.on('error', () => {});
    let buf = Buffer.alloc(0), stage = 'greet';
    const take = (n) => { const b = buf.subarray(0, n); buf = buf.subarray(n); return b; };
    c.on('data', function onData(d) {
      buf = Buffer.concat([buf, d]);
      if (stage === 'greet' && buf.length >= 2 && buf.length >= 2 + buf[1]) {
        const methods = [...take(2 + buf[1]).subarray(2)];
        if (!methods.includes(2)) { c.end(Buffer.from([5, 0xff])); return; }
        c.write(Buffer.from([5, 2]));
        stage = 'auth';
      }
      if (stage === 'auth' && buf.length >= 2 && buf.length >= 3 + buf[1] &&
          buf.length >= 3 + buf[1] + buf[2 + buf[1]]) {
        const ul = buf[1], u = buf.subarray(2, 2 + ul).toString(), pl = buf[2 + ul];
        const p = buf.subarray(3 + ul, 3 + ul + pl).toString();
        take(3 + ul + pl);
        if (u !== user || p !== pass) { s.badLogins++; c.end(Buffer.from([1, 1])); return; }
        c.write(Buffer.from([1, 0]));
        stage = 'connect';
      }
      if (stage === 'connect' && buf.length >= 5) {
        const atyp = buf[3];
        const alen = atyp === 1 ? 4 : atyp === 4 ? 16 : 1 + buf[4];
        if (buf.length < 4 + alen + 2) return;
        const a = take(4 + alen + 2);
        const host = atyp === 3 ? a.subarray(5, 5 + a[4]).toString() : [...a.subarray(4, 4 + alen)].join('.');
        const port = a.readUInt16BE(4 + alen);
        s.requests.push({ atyp, host, port });
        const to = routes[host];
        if (!to) { c.end(Buffer.from([5, 4, 0, 1, 0, 0, 0, 0, 0, 0])); return; }
        stage = 'relay';
        c.removeListener('data', onData);
        const up = net.connect(port, to, () => {
          c.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
          if (buf.length) up.write(buf);
          c.pipe(up).pipe(c);
        });
        up.on('error', () => c.destroy());
      }
    });
  });
  await new Promise((r) => s.server.listen(0, addr, r));
  s.port = s.server.address().port;
  return s;
}

async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

// corral-egress on a JSON config file; { proc, port, log(), configPath }.
export async function startProxy(dir, name, config, testHosts) {
  const configPath = path.join(dir, `${name}.json`);
  fs.writeFileSync(configPath, JSON.stringify(config));
  const port = await freePort();
  const args = ['-listen', `127.0.0.1:${port}`, '-config-file', configPath];
  for (const [n, a] of Object.entries(testHosts)) args.push('-test-host', `${n}=${a}`);
  const p = { port, configPath, stderr: '' };
  p.proc = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  p.proc.stderr.on('data', (d) => { p.stderr += d; });
  p.log = () => p.stderr;
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`proxy did not listen: ${p.stderr}`)), TIMEOUT_MS);
    const check = () => { if (p.stderr.includes('listening on')) { clearTimeout(t); resolve(); } };
    p.proc.stderr.on('data', check);
    p.proc.on('exit', (code) => reject(new Error(`proxy exited ${code}: ${p.stderr}`)));
    check();
  });
  return p;
}

// A keep-alive https.Agent whose one connection is a CONNECT tunnel through
// the proxy, verified against `ca`; agent.tlsSockets lists what it opened.
export function tunnelAgent(proxyPort, ca) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  agent.tlsSockets = [];
  agent.createConnection = (opts, cb) => {
    const raw = net.connect(proxyPort, '127.0.0.1');
    raw.on('error', cb);
    raw.once('connect', () => raw.write(`CONNECT ${opts.host}:${opts.port} HTTP/1.1\r\n` +
      `Host: ${opts.host}:${opts.port}\r\n\r\n`));
    let head = '';
    const onData = (d) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      raw.removeListener('data', onData);
      if (!/^HTTP\/1\.1 200/.test(head)) { raw.destroy(); cb(new Error(head)); return; }
      const s = tls.connect({ socket: raw, servername: opts.host, ca: fs.readFileSync(ca),
        ALPNProtocols: ['h2', 'http/1.1'] }, () => { agent.tlsSockets.push(s); cb(null, s); });
      s.on('error', cb);
    };
    raw.on('data', onData);
  };
  return agent;
}

// One request through an agent: { status, body, socket }.
export function request(agent, host, port, p, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({ host, port, path: p, method, agent, headers }, (res) => {
      let b = '';
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: b, socket: res.socket }));
    });
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}
