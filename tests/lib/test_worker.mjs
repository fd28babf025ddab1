// A test worker that speaks the real control channel (docs/worker-protocol.md)
// to the real corral-api through nginx. It "runs" a sandbox by recording it,
// so placement and delivery can be tested without Docker; workerd's own tests
// cover real containers.
import { api, corralctl } from './corral.mjs';
import { sleep } from './poll.mjs';

// Workerd's data port as conf/stack.sh lists it by default (exactly: the
// gateway refuses any other port of loopback at the handshake, decision 0061).
export const STACK_DATA_ADDR = `127.0.0.1:${process.env.CORRAL_WORKERD_DATA_PORT || 7001}`;

export class TestWorker {
  constructor(joinToken, { slots = 10, runtimes = [{ name: 'runc', tier: 'CONTAINER' }], egress = false,
    templates = ['base'], cpu = 64, memory = 65536, name = 'tw', failCreates = false, autoAck = true,
    dataAddr = STACK_DATA_ADDR, handshakeExtra = {}, confirmKills = true, warm = null } = {}) {
    // warm: the warm pools told in each heartbeat ([{template, runtime, size, ready}]), or null
    Object.assign(this, { joinToken, slots, runtimes, egress, templates, cpu, memory, name, failCreates, autoAck,
      dataAddr, handshakeExtra, confirmKills, warm });
    this.killed = [];           // kills done, told in the next heartbeat (decision 0073)
    this.running = new Map();   // sandbox id -> create command
    this.received = [];         // every command delivered, in order
    this.acks = [];
    this.reports = [];
    this.snapshotReports = [];  // {id, workspace, state, reason}, as workerd reports them
    this.stopped = true;
  }

  headers() {
    return { Authorization: `Bearer ${this.joinToken}`, 'X-Worker-Id': this.id, 'X-Worker-Secret': this.secret };
  }

  async handshake() {
    const body = { hostname: this.name, runtimes: this.runtimes, egress: this.egress, cpu_cores: this.cpu,
      memory_mb: this.memory, slots: this.slots, data_addr: this.dataAddr, templates: this.templates,
      ...this.handshakeExtra };
    if (this.id) Object.assign(body, { worker_id: this.id, worker_secret: this.secret });
    const r = await api('POST', '/v1/worker/handshake', { body, headers: { Authorization: `Bearer ${this.joinToken}` } });
    if (r.status !== 200) throw new Error(`handshake ${r.status}: ${r.raw}`);
    this.id = r.body.worker_id;
    this.secret = r.body.worker_secret;
    this.workspace = r.body.workspace;
    this.resume = true;
    return r.body;
  }

  // full: as workerd after a break in contact, every sandbox it holds is
  // listed and the control plane may take an omission for a loss.
  async pollOnce({ full = false } = {}) {
    const reports = this.reports.splice(0);
    // A full list keeps the pending reports of sandboxes no longer held (a
    // failed create), and lists every held one as running.
    const sandboxes = full ? [...reports.filter((r) => !this.running.has(r.id)),
      ...[...this.running.keys()].map((id) => ({ id, state: 'running' }))] : reports;
    const body = { acks: this.acks.splice(0), sandboxes, resume: this.resume,
      snapshots: this.snapshotReports.splice(0), full, killed: this.killed.splice(0) };
    if (this.warm) body.warm = this.warm;
    this.resume = false;
    let r;
    try {
      r = await api('POST', '/v1/worker/heartbeat', { body, headers: this.headers() });
    } catch (e) {
      r = { status: 0, raw: String(e) };
    }
    if (r.status !== 200) {
      // Like a real worker: what was not delivered is sent again next time.
      this.acks.unshift(...body.acks);
      this.reports.unshift(...reports);
      this.killed.unshift(...body.killed);
      this.lastError = r;
      return r;
    }
    for (const c of r.body.commands) this.apply(c);
    // sleep: as a real worker, it waits as long as the control plane asks.
    if (r.body.retry_after_ms) await sleep(r.body.retry_after_ms);
    return r;
  }

  // POST /v1/worker/telemetry as this worker (decision 0047): samples and log
  // lines of sandboxes, [{id, metric, logs}].
  telemetry(sandboxes, headers = this.headers()) {
    return api('POST', '/v1/worker/telemetry', { body: { sandboxes }, headers });
  }

  apply(c) {
    c.receivedAt = Date.now();
    this.received.push(c);
    if (c.type === 'create') {
      const id = c.sandbox.id;
      if (this.failCreates) this.reports.push({ id, state: 'failed', reason: 'test worker refuses' });
      else {
        if (!this.running.has(id)) this.running.set(id, c.sandbox);
        this.reports.push({ id, state: 'running' });
      }
    } else if (c.type === 'kill') {
      this.running.delete(c.sandbox_id);
      if (this.confirmKills) this.killed.push(c.sandbox_id);
    } else if (c.type === 'snapshot' && this.answerSnapshots !== false) {
      this.snapshotReports.push({ id: c.args.snapshot_id, workspace: c.args.workspace, state: 'ready' });
    } else if ((c.type === 'pause' || c.type === 'resume') && this.running.has(c.sandbox_id)) {
      // As workerd: the container frozen or thawed, its state reported.
      this.reports.push({ id: c.sandbox_id, state: c.type === 'pause' ? 'paused' : 'running' });
    }
    if (this.autoAck) this.acks.push(c.id);
  }

  // Polls until stop(); a bounded loop by design of the test that owns it.
  start() {
    this.stopped = false;
    this.loop = (async () => {
      while (!this.stopped) {
        const r = await this.pollOnce().catch((e) => ({ status: 0, error: e }));
        // sleep: a worker's pause before it polls again after a failure (until stop()).
        if (r.status !== 200) await sleep(200);
      }
    })();
    return this;
  }

  async stop() {
    this.stopped = true;
    await this.loop;
  }
}

// A started worker of workspace ws, or of the unscoped fleet when ws is null;
// pushed onto list so that the test file stops it in after().
export async function enrolWorker(list, ws, opts = {}) {
  const args = ws ? ['join-token', 'create', '--workspace', ws.id] : ['join-token', 'create'];
  const w = new TestWorker(corralctl(...args).token, opts);
  await w.handshake();
  list.push(w.start());
  return w;
}
