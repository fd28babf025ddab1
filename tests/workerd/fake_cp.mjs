// A stand-in control plane that speaks docs/worker-protocol.md over real HTTPS,
// so that workerd's behaviour (delivery, acks, reports, resume, full) is tested
// against real dockerd without the rest of the stack. It keeps one command
// queue per worker with the protocol's redelivery rules: unacknowledged
// commands come again on "resume" and after 10 s. The stack tests
// (stack.test.mjs) run the same scenarios against the real corral-api.
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

// A CA and a server certificate for 127.0.0.1, made with the openssl CLI.
export function makeTls(dir = mkdtempSync(join(tmpdir(), 'corral-cp-'))) {
  const run = (...a) => execFileSync('openssl', a, { stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=corral-test-ca',
    '-keyout', `${dir}/ca.key`, '-out', `${dir}/ca.pem`);
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', `${dir}/srv.key`,
    '-out', `${dir}/srv.csr`);
  const ext = `${dir}/ext.cnf`;
  execFileSync('sh', ['-c', `printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ${ext}`]);
  run('x509', '-req', '-in', `${dir}/srv.csr`, '-CA', `${dir}/ca.pem`, '-CAkey', `${dir}/ca.key`,
    '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', `${dir}/srv.pem`);
  return { dir, ca: `${dir}/ca.pem`, key: `${dir}/srv.key`, cert: `${dir}/srv.pem` };
}

const hex = (n) => randomBytes(n).toString('hex');

export class FakeControlPlane {
  constructor(tls, { pollMs = 1500, leaseMs = 60000 } = {}) {
    Object.assign(this, { tls, pollMs, leaseMs });
    this.tokens = new Map();   // join token -> workspace
    this.workers = new Map();  // worker id -> worker record
    this.handshakes = [];      // every handshake body
    this.seq = 0;
    this.onDeliver = null;     // (worker, commands) => void, called as an answer leaves
  }

  joinToken(ws = '') {
    const t = `jn_${ws}_${hex(8)}_${hex(20)}`;
    this.tokens.set(t, ws);
    return t;
  }

  listen(port = 0) {
    this.server = https.createServer({ key: readFileSync(this.tls.key), cert: readFileSync(this.tls.cert) },
      (req, res) => this.route(req, res));
    return new Promise((ok) => this.server.listen(port, '127.0.0.1', () => {
      this.port = this.server.address().port;
      this.url = `https://127.0.0.1:${this.port}`;
      ok(this);
    }));
  }

  async close() {
    for (const w of this.workers.values()) for (const wake of w.waiters.splice(0)) wake();
    this.server.closeAllConnections();
    await new Promise((ok) => this.server.close(ok));
  }

  route(req, res) {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let json;
      try { json = JSON.parse(body || '{}'); } catch { return this.send(res, 400, { code: 400, message: 'bad JSON' }); }
      const auth = (req.headers.authorization || '').replace(/^Bearer /, '');
      if (!this.tokens.has(auth)) return this.send(res, 401, { code: 401, message: 'bad token' });
      if (req.url === '/v1/worker/handshake') return this.handshake(res, auth, json);
      if (req.url === '/v1/worker/heartbeat') return this.heartbeat(req, res, auth, json);
      return this.send(res, 403, { code: 403, message: 'forbidden' });
    });
  }

  send(res, status, obj) {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(obj));
  }

  handshake(res, token, b) {
    this.handshakes.push(b);
    let w = b.worker_id && this.workers.get(b.worker_id);
    if (w && (w.secret !== b.worker_secret || w.workspace !== this.tokens.get(token)))
      return this.send(res, 403, { code: 403, message: 'not your worker' });
    if (!w) {
      w = { id: `wk_${hex(8)}`, secret: hex(24), workspace: this.tokens.get(token), queue: [],
        assigned: new Set(), states: new Map(), beats: [], waiters: [], dead: false };
      this.workers.set(w.id, w);
    }
    w.hello = b;
    w.resumePending = true;
    this.send(res, 200, { worker_id: w.id, workspace: w.workspace, worker_secret: w.secret,
      poll_ms: this.pollMs, lease_ms: this.leaseMs });
  }

  heartbeat(req, res, token, b) {
    const w = this.workers.get(req.headers['x-worker-id']);
    if (!w || w.secret !== req.headers['x-worker-secret'] || w.workspace !== this.tokens.get(token))
      return this.send(res, 403, { code: 403, message: 'not your worker' });
    if (w.dead) return this.send(res, 410, { code: 410, message: 'worker is gone' });
    w.beats.push({ at: Date.now(), ...b });
    for (const id of b.acks || []) {
      const c = w.queue.find((q) => q.cmd.id === id);
      if (c) c.acked = true;
    }
    for (const s of b.sandboxes || []) {
      w.states.set(s.id, s);
      if (!w.assigned.has(s.id) && s.state !== 'failed') this.enqueue(w, { type: 'kill', sandbox_id: s.id });
    }
    if (b.resume) for (const q of w.queue) if (!q.acked) q.sentAt = 0;
    const deadline = Date.now() + this.pollMs;
    const answer = () => {
      const due = w.queue.filter((q) => !q.acked && (!q.sentAt || Date.now() - q.sentAt > 10000));
      if (due.length === 0 && Date.now() < deadline && !res.destroyed) {
        const t = setTimeout(answer, Math.max(1, deadline - Date.now()));
        w.waiters.push(() => { clearTimeout(t); setImmediate(answer); });
        return;
      }
      if (res.destroyed) return; // the worker gave up on this poll: deliver on its next one
      for (const q of due) q.sentAt = Date.now();
      const commands = due.map((q) => q.cmd);
      this.send(res, 200, { commands });
      if (commands.length && this.onDeliver) this.onDeliver(w, commands);
    };
    answer();
  }

  enqueue(w, cmd) {
    cmd.id = `${Date.now()}-${this.seq++}`;
    w.queue.push({ cmd, acked: false, sentAt: 0 });
    for (const wake of w.waiters.splice(0)) wake();
    return cmd.id;
  }

  create(w, sandbox) {
    const sb = { id: `sb${hex(10)}`, workspace: w.workspace, template: 'base', runtime: 'runc',
      tier: 'CONTAINER', env: {}, cpu_cores: 1, memory_mb: 256, allowed_domains: [], timeout: 300,
      metadata: {}, ...sandbox };
    w.assigned.add(sb.id);
    this.enqueue(w, { type: 'create', sandbox: sb });
    return sb;
  }

  kill(w, sbid) {
    w.assigned.delete(sbid);
    return this.enqueue(w, { type: 'kill', sandbox_id: sbid });
  }

  acked(w, cmdId) {
    return w.queue.some((q) => q.cmd.id === cmdId && q.acked);
  }

  // The one worker that enrolled (tests start one workerd per control plane).
  worker() {
    return [...this.workers.values()].at(-1);
  }
}
