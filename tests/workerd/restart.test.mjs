// Restarts and breaks, against the real control plane: identity kept and
// sandboxes adopted, a create applied twice (crash before its ack), control
// plane outage, lease expiry (410), worker deletion (403), strays, another
// worker id's containers never touched, and the slots backstop.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { api, newWorkspace, eventually, stack } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, restartWorker, createSb, getSb, ctrsOf, workerView, logOf,
  enrolledAs, freshLease, pollBegan, envdOf, envdRun, containersLabelled, docker, removeLabelled,
  stopWorkerd, logLines, sandboxLog, pendingCommands, queuedCommands } from './helpers.mjs';
import { isReadyProxy } from '../lib/engine.mjs';
import { socketsOf, unread } from '../lib/sockets.mjs';

const hex = (n) => randomBytes(n).toString('hex');
const OTHER = hex(8); // another worker id on the same dockerd
let A, s;

async function startLabelled(name, labels) {
  const r = await docker('POST', `/containers/create?name=${name}`, { Image: 'corral/base', Cmd: ['sleep', 'infinity'], Labels: labels });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal((await docker('POST', `/containers/${r.body.Id}/start`)).status, 204);
  return r.body.Id;
}

before(async () => {
  await startLabelled(`corral-sbother-${OTHER}`, { 'corral.worker': OTHER, 'corral.sandbox': hex(10), 'corral.tier': 'CONTAINER' });
  A = newWorkspace();
  s = await stackWorker(A, { extra: 'cpu_cores = 64\nmemory_mb = 65536' });
});
after(async () => {
  await cleanupWorkers();
  await removeLabelled(`corral.worker=${OTHER}`);
});

// conf/stack.sh kill-api N, without its wait: that wait polls `kill -0`, which
// a zombie (nobody reaps here) keeps answering for its full 10 s, longer than
// the lease. The pid file is the one the stack wrote; the process is ours.
function killApi(n) {
  const f = `${process.env.CORRAL_RUN}/pids/api-${n}.pid`;
  process.kill(Number(readFileSync(f, 'utf8').trim()), 'SIGKILL');
  rmSync(f);
}

// nginx of the stack, stopped and started the way conf/stack.sh runs it.
const RUN = process.env.CORRAL_RUN;
const nginxArgs = ['-p', RUN, '-c', `${RUN}/nginx.conf`, '-e', `${RUN}/log/nginx-error.log`];
async function nginxStop() {
  execFileSync('nginx', [...nginxArgs, '-s', 'stop']);
  await eventually(() => !existsSync(`${RUN}/nginx.pid`), { what: 'nginx stopped' });
}
const nginxStart = () => execFileSync('nginx', nginxArgs);

const stateOf = async (ws, sbid) => (await getSb(ws, sbid)).body.state;
// Bytes the control plane sent a stopped workerd (its sockets, read once it
// is stopped): they wait in its receive queues.
const unreadBy = (sockets) => unread((x) => sockets.has(x.inode));
const untouched = async () => {
  const other = await containersLabelled(`corral.worker=${OTHER}`);
  assert.equal(other.length, 1, 'another worker id\'s container is never touched');
  assert.equal(other[0].State, 'running');
};

test('SIGTERM leaves sandboxes running; the restart re-enrols as the same worker and adopts them', async () => {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  assert.equal(statSync(`${s.files.dir}/state/worker`).mode & 0o777, 0o600);
  const secret = readFileSync(`${s.files.dir}/state/worker`, 'utf8').match(/worker_secret = (\S+)/)[1];
  assert.ok(!logOf(s).includes(secret), 'the worker secret is never logged');
  const ex = await stopWorkerd(s.wd, 'SIGTERM');
  assert.equal(ex.code, 0);
  assert.equal((await ctrsOf(s.id, sbid))[0].State, 'running', 'SIGTERM leaves sandboxes running');
  restartWorker(s);
  await eventually(() => enrolledAs(s.files.log).length === 2, { timeout: 20000, what: 're-enrolment' });
  assert.deepEqual(enrolledAs(s.files.log), [s.id, s.id], 'the same worker id');
  assert.equal((await workerView(A)).length, 1, 'one worker, not a new one');
  // the adoption follows the enrolment (the listing of its containers):
  // after it, not with it, on a loaded host
  await eventually(() => /^found running \(adopted\)$/m.test(sandboxLog(s, sbid, 'CONTAINER')),
    { timeout: 20000, what: `the adoption in ${s.files.log}` });
  await freshLease(A, s.id, 2); // the full report has been made and answered: the sandbox is still running, nothing was killed
  assert.equal(await stateOf(A, sbid), 'running');
  assert.equal((await ctrsOf(s.id, sbid)).length, 1);
  await untouched();
});

test('kill -9 after applying a create, before its ack: applied again after restart, one container', async () => {
  const mark = logOf(s).length;
  const since = () => logOf(s).slice(mark);
  await pollBegan(A, s.id);
  s.wd.proc.kill('SIGSTOP'); // the create reaches its socket while it is stopped
  const held = socketsOf(s.wd.proc.pid);
  const delivered = pendingCommands(A, s.id);
  const pending = createSb(A).catch((e) => ({ status: 0, raw: String(e) }));
  await eventually(() => pendingCommands(A, s.id) > delivered && unreadBy(held) > 0,
    { what: 'the create delivered, into the stopped workerd\'s socket' })
    .catch((e) => { s.wd.proc.kill('SIGCONT'); throw e; }); // the next tests need it alive
  // nginx down: the worker applies the create, but the heartbeat carrying the ack fails.
  // (The handler waiting on the create lives on, so the sandbox stays pending meanwhile.)
  await nginxStop();
  s.wd.proc.kill('SIGCONT');
  try {
    await eventually(() => /create \(runc\) -> running/.test(since()), { timeout: 5000, what: 'the create applied' });
    await eventually(() => /heartbeat: POST/.test(since().split('-> running').at(-1)),
      { timeout: 5000, what: 'the ack failing to go out' });
    s.wd.proc.kill('SIGKILL');
    await s.wd.exited;
  } finally {
    nginxStart();
  }
  await pending; // its connection went with nginx
  const sbid = logLines(since()).find((l) => l.tier === 'CONTAINER' && /^create \(runc\) -> running/.test(l.msg)).sandbox;
  restartWorker(s);
  await eventually(async () => (await stateOf(A, sbid)) === 'running', { timeout: 15000, what: 'running after restart' })
    .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify((await getSb(A, sbid)).body)}\n${since()}`); });
  await eventually(() => sandboxLog(s, sbid, 'CONTAINER').split('\n').filter((m) => m.startsWith('create')).length === 2,
    { what: 'the create delivered and applied a second time' });
  const list = await ctrsOf(s.id, sbid);
  assert.equal(list.length, 1, 'exactly one container');
  assert.equal(list[0].State, 'running');
});

test('control plane outage: heartbeats fail, then a full report carries the true states', async () => {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const envd = await envdOf(s.id, sbid);
  await freshLease(A, s.id);
  killApi(1);
  killApi(2);
  try {
    await envdRun(envd, 'kill -TERM 1', { user: 'root' }).catch(() => {}); // dies during the outage
    await eventually(() => /heartbeat answered 503/.test(logOf(s).split(sbid).at(-1)), { timeout: 3000, what: 'a failed heartbeat' });
  } finally {
    stack('start-api', '1');
    stack('start-api', '2');
  }
  const g = await eventually(async () => { const x = await getSb(A, sbid); return x.body.state === 'exited' && x; },
    { timeout: 10000, what: 'the exit reported after the outage' });
  assert.equal(g.body.reason, 'exit code 0');
  assert.equal((await workerView(A, s.id)).state, 'alive', 'within the lease: the same worker, alive');
});

test('lease expiry: 410, then the worker handshakes again as itself; its lost sandbox is removed', async () => {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  s.wd.proc.kill('SIGSTOP');
  try {
    await eventually(async () => (await workerView(A, s.id)).state !== 'alive', { timeout: 20000, what: 'the worker declared dead' });
    await eventually(async () => (await stateOf(A, sbid)) === 'lost', { what: 'its sandbox lost' });
  } finally {
    s.wd.proc.kill('SIGCONT');
  }
  await eventually(() => /heartbeat answered 410/.test(logOf(s)), { timeout: 10000, what: '410' });
  await eventually(async () => (await workerView(A, s.id))?.state === 'alive', { timeout: 10000, what: 'alive again' });
  assert.deepEqual([...new Set(enrolledAs(s.files.log))], [s.id], 'handshakes again as itself');
  await eventually(async () => (await ctrsOf(s.id, sbid)).length === 0,
    { timeout: 10000, what: 'the lost sandbox\'s container killed when reported' });
  await untouched();
});

// The stray is reported with the poll that brings the create, so its kill comes
// in the same batch: the slot it holds is already given back (apply.c counts
// queued kills), and the create lands instead of being refused.
test('a stray container of our worker id is killed; a create placed over it lands as the kill frees its slot', async () => {
  const B = newWorkspace();
  const w = await stackWorker(B, { extra: 'slots = 1\ncpu_cores = 64\nmemory_mb = 65536' });
  await eventually(async () => (await workerView(B, w.id))?.state === 'alive', { what: 'alive' });
  // Stopped right after a poll began: it stays within its lease (10 s, tests/workerd/run.sh) throughout.
  await pollBegan(B, w.id);
  w.wd.proc.kill('SIGSTOP');
  const held = socketsOf(w.wd.proc.pid);
  await eventually(() => unreadBy(held) > 0, { timeout: 10000, what: 'the poll in flight answered (empty), into the stopped workerd\'s socket' });
  const stray = hex(10);
  await startLabelled(`corral-${stray}-${w.id}`, { 'corral.worker': w.id, 'corral.sandbox': stray, 'corral.tier': 'CONTAINER' });
  const queued = queuedCommands(B, w.id);
  const pending = createSb(B); // the control plane counts 0 of 1 slots used: placed here
  await eventually(() => queuedCommands(B, w.id) > queued, { what: 'the create queued for the stopped worker' });
  w.wd.proc.kill('SIGCONT');
  const r = await pending;
  assert.equal(r.status, 201, r.raw);
  await eventually(async () => (await ctrsOf(w.id, stray)).length === 0, { what: 'the stray killed' });
  const mine = (await ctrsOf(w.id)).filter((c) => !isReadyProxy(c));
  assert.deepEqual(mine.map((c) => c.Labels['corral.sandbox']), [r.body.sandbox_id], 'one slot, one sandbox');
  assert.match(sandboxLog(w, stray, 'CONTAINER'), /^found running \(adopted\)$/m);
  await untouched();
});

test('a deleted worker (403 on its identity) enrols afresh and removes its old containers', async () => {
  const C = newWorkspace();
  const w = await stackWorker(C, { extra: 'cpu_cores = 64\nmemory_mb = 65536' });
  const r = await createSb(C);
  assert.equal(r.status, 201, r.raw);
  const del = await api('DELETE', `/v1/workers/${w.id}`, { key: C.owner });
  assert.equal(del.status, 204, del.raw);
  const fresh = await eventually(() => enrolledAs(w.files.log).find((id) => id !== w.id), { timeout: 20000, what: 'a new enrolment' });
  assert.match(logOf(w), new RegExp(`enrolled as new worker ${fresh} \\(worker ${w.id} was refused\\)`));
  await eventually(async () => (await ctrsOf(w.id)).length === 0, { what: 'the old worker\'s containers removed' })
    .catch(async (e) => { throw new Error(`${e.message}: ${(await ctrsOf(w.id)).map((c) => c.Names[0] + ' ' + c.State).join(', ')}\n${logOf(w).slice(-2500)}`); });
  await untouched();
});
