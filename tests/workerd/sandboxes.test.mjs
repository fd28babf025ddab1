// workerd against real dockerd and the real control plane (nginx + 2 corral-api
// + corral-sched + Redis, brought up by tests/workerd/run.sh): what a worker
// reports, what its containers look like, envd inside them, deaths, failures,
// tiers. Everything goes through the native API; Redis is only observed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, newWorkspace, eventually } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, createSb, getSb, deleteSb, ctrsOf, workerView, logOf,
  pendingCommands, envdOf, envdRun, envdUnary, envdToken, inspect, docker, sandboxLog } from './helpers.mjs';
import { createHops } from '../lib/create_hops.mjs';

let A, s;

before(async () => {
  A = newWorkspace();
  s = await stackWorker(A, { extra: 'cpu_cores = 64\nmemory_mb = 65536' });
});
after(cleanupWorkers);

const running = (sbid) => eventually(async () => (await getSb(A, sbid)).body.state === 'running',
  { timeout: 15000, what: `${sbid} running` });

test('the handshake shows in GET /v1/workers: capacity, egress true (proxy binary and image present), templates, verified tiers', async () => {
  const w = await workerView(A, s.id);
  assert.equal(w.state, 'alive');
  assert.equal(w.slots, 8);
  assert.equal(w.cpu_cores, 64);
  assert.equal(w.memory_mb, 65536);
  assert.equal(w.egress, true);
  assert.match(logOf(s), /network isolation rules in place .*egress policies on; disk limits on/);
  assert.equal(w.data_addr, s.files.dataAddr);
  assert.deepEqual([...w.templates].sort(), ['base', 'noimg']);
  const tiers = Object.fromEntries(w.runtimes.map((r) => [r.name, r.tier]));
  assert.equal(tiers.runc, 'CONTAINER');
  assert.equal(tiers.runsc, 'GVISOR', 'runsc must be verified by the probe');
  assert.doesNotMatch(logOf(s), /jn_/, 'the join token is never logged');
});

test('create: one running container with labels, env, NanoCpus, Memory, limits, dropped capabilities, its own network, envd as entrypoint', async () => {
  const r = await createSb(A, { env: { FOO: 'bar', E2B: 'x=y' }, cpu_cores: 1.5, memory_mb: 300 });
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.state, 'running');
  assert.equal(r.body.worker_id, s.id);
  const sbid = r.body.sandbox_id;
  const list = await ctrsOf(s.id, sbid);
  assert.equal(list.length, 1);
  const c = await inspect(list[0].Id);
  assert.equal(c.State.Status, 'running');
  assert.equal(c.Name, `/corral-${sbid}-${s.id}`);
  assert.deepEqual(
    { sb: c.Config.Labels['corral.sandbox'], ws: c.Config.Labels['corral.workspace'],
      wk: c.Config.Labels['corral.worker'], tier: c.Config.Labels['corral.tier'], tpl: c.Config.Labels['corral.template'] },
    { sb: sbid, ws: A.id, wk: s.id, tier: 'CONTAINER', tpl: 'base' });
  assert.ok(c.Config.Env.includes('FOO=bar'));
  assert.ok(c.Config.Env.includes('E2B=x=y'));
  assert.ok(c.Config.Env.includes(`CORRAL_ENVD_ACCESS_TOKEN=${envdToken(sbid)}`), 'every native sandbox is secure');
  assert.ok(!c.Config.Env.some((e) => /_PROXY=/i.test(e)), 'no policy: no proxy');
  assert.ok(['NET_RAW', 'MKNOD', 'SETFCAP', 'SETPCAP', 'SYS_CHROOT'].every((cap) => c.HostConfig.CapDrop.includes(cap)),
    JSON.stringify(c.HostConfig.CapDrop));
  assert.equal(c.HostConfig.PidsLimit, 1024, 'the workspace default');
  assert.equal(c.HostConfig.StorageOpt?.size, '10240M', 'the workspace default disk size');
  const nets = Object.keys(c.NetworkSettings.Networks);
  assert.deepEqual(nets, [`corral-${sbid}-${s.id}`], 'alone on a network of its own');
  const net = (await docker('GET', `/networks/${nets[0]}`)).body;
  assert.match(net.Options['com.docker.network.bridge.name'], /^crl[0-9a-f]{12}$/);
  assert.equal(net.Internal, false);
  assert.equal(net.Labels['corral.sandbox'], sbid);
  assert.equal(c.HostConfig.NanoCpus, 1.5e9);
  assert.equal(c.HostConfig.Memory, 300 * 1024 * 1024);
  assert.equal(c.HostConfig.Runtime, 'runc');
  assert.deepEqual(c.Config.Entrypoint, ['/.corral/envd']);
  // envd reads the proxy variables from a file a fresh resume may rewrite (decision 0074).
  assert.deepEqual(c.Config.Cmd, ['-port', '49983', '-net-env', '/.corral/net.env']);
  assert.equal(c.Config.User, '0');
  assert.ok(c.HostConfig.Binds.some((b) => /\/envd:\/\.corral\/envd:ro$/.test(b)), JSON.stringify(c.HostConfig.Binds));
  // Where the create's time went, for an operator reading the log (issue 34).
  const hops = sandboxLog(s, sbid, 'CONTAINER').split('\n').map(createHops).find(Boolean);
  assert.ok(hops, sandboxLog(s, sbid, 'CONTAINER'));
  assert.equal(hops.runtime, 'runc');
  assert.equal(hops.claimed, false, 'this worker has no warm pool');
  assert.ok(hops.container + hops.start > 0, 'dockerd took no time at all: the phases were not measured');
  // queued by the control plane, on this host's clock: before the line, within the create's time
  assert.ok(hops.queuedAt > Date.now() - 120_000 && hops.queuedAt <= Date.now(), `queued at ${hops.queuedAt}`);
  assert.ok(hops.delivery >= 0 && hops.delivery < 60_000, `delivered in ${hops.delivery} ms`);
});

test('envd answers as soon as the create returns: /health, echo hi as user, the sandbox env, PID 1', async () => {
  const r = await createSb(A, { env: { FOO: 'bar' } });
  assert.equal(r.status, 201, r.raw);
  const envd = await envdOf(s.id, r.body.sandbox_id);
  const h = await fetch(`${envd.base}/health`); // no retry: running means envd answers
  assert.equal(h.status, 204);
  const hi = await envdRun(envd, 'echo hi');
  assert.equal(hi.stdout, 'hi\n');
  assert.equal(hi.end.exitCode ?? 0, 0);
  assert.equal(hi.end.exited, true);
  const who = await envdRun(envd, 'id -un; id -u; echo "$FOO"; tr "\\0" " " </proc/1/cmdline');
  assert.equal(who.stdout, 'user\n1000\nbar\n/.corral/envd -port 49983 -net-env /.corral/net.env ');
  const root = await envdRun(envd, 'id -u', { user: 'root' });
  assert.equal(root.stdout, '0\n', 'envd runs as root and switches per process');
  // The read-only mount: not even root inside can replace envd.
  const ro = await envdRun(envd, 'echo x > /.corral/envd', { user: 'root' });
  assert.notEqual(ro.end.exitCode ?? 0, 0);
  assert.match(ro.stderr, /Read-only file system/);
});

test('a secure sandbox: envd refuses calls without the token, accepts the derived one, hides it', async () => {
  const r = await api('POST', '/v2/sandboxes', { key: A.member, body: { templateID: 'base', secure: true } });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandboxID;
  const token = r.body.envdAccessToken;
  assert.match(token, /^[0-9a-f]{64}$/);
  assert.equal(token, envdToken(sbid), 'hex(HMAC-SHA256(gateway secret, "envd:" + id))');
  const envd = await envdOf(s.id, sbid, token);
  assert.equal((await fetch(`${envd.base}/health`)).status, 204, '/health needs no token');
  const none = await envdUnary(envd, 'filesystem.Filesystem/Stat', { path: '/' }, { token: null });
  assert.equal(none.status, 401);
  const wrong = await envdUnary(envd, 'filesystem.Filesystem/Stat', { path: '/' }, { token: 'f'.repeat(64) });
  assert.equal(wrong.status, 401);
  const ok = await envdUnary(envd, 'filesystem.Filesystem/Stat', { path: '/' });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  // (envd with a token makes itself undumpable, so /proc/1/environ may not even be readable)
  const env = await envdRun(envd, 'env; tr "\\0" "\\n" </proc/1/environ 2>/dev/null; true', { user: 'root' });
  assert.equal(env.end.exitCode ?? 0, 0, JSON.stringify(env));
  assert.doesNotMatch(env.stdout, /CORRAL_ENVD_ACCESS_TOKEN|[0-9a-f]{64}/, 'processes never see the token');
  assert.ok(!logOf(s).includes(token), 'the token never reaches workerd\'s log');
  const pid = s.wd.proc.pid;
  for (const f of ['cmdline', 'environ']) {
    assert.ok(!readProc(pid, f).includes(token), `the token is not in workerd's /proc/${pid}/${f}`);
  }
});

function readProc(pid, f) {
  try { return readFileSync(`/proc/${pid}/${f}`, 'latin1'); } catch { return ''; }
}

test('delete removes the container; a kill of a sandbox whose container is gone is acknowledged', async () => {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  assert.equal((await deleteSb(A, sbid)).status, 204);
  await eventually(async () => (await ctrsOf(s.id, sbid)).length === 0, { what: 'container removed' });
  // Removed behind workerd's back, then deleted: the kill finds nothing and is acknowledged.
  const r2 = await createSb(A);
  assert.equal(r2.status, 201, r2.raw);
  const [c] = await ctrsOf(s.id, r2.body.sandbox_id);
  await docker('DELETE', `/containers/${c.Id}?force=1`);
  const gone = await eventually(async () => { const x = await getSb(A, r2.body.sandbox_id); return x.body.state === 'exited' && x; },
    { what: 'the vanished container reported' });
  // Seen dying (a force removal kills first) or, if the listing got there first, gone.
  assert.match(gone.body.reason, /^(container removed|exit code 137)$/);
  assert.equal((await deleteSb(A, r2.body.sandbox_id)).status, 204);
  await eventually(() => /killed/.test(logOf(s).split(r2.body.sandbox_id).at(-1)), { what: 'kill applied' });
  await eventually(() => pendingCommands(A, s.id) === 0, { what: 'every command acknowledged' });
  assert.equal((await deleteSb(A, r2.body.sandbox_id)).status, 404);
});

test('a sandbox whose envd exits is reported exited, with the reason, and its container removed', async () => {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const envd = await envdOf(s.id, sbid);
  const t0 = Date.now();
  await envdRun(envd, 'kill -TERM 1', { user: 'root' }).catch(() => {}); // the stream may break as envd goes
  const g = await eventually(async () => { const x = await getSb(A, sbid); return x.body.state === 'exited' && x; },
    { timeout: 10000, what: 'exit reported' });
  assert.equal(g.body.reason, 'exit code 0');
  assert.ok(Date.now() - t0 < 5000, 'reported promptly (the event wakes the long-poll)');
  await eventually(async () => (await ctrsOf(s.id, sbid)).length === 0,
    { what: 'exited container removed once the exit was acknowledged' });
  assert.equal((await getSb(A, sbid)).body.state, 'exited', 'the record keeps the end state');
});

test('an OOM-killed sandbox is reported exited with reason OOMKilled', async () => {
  const r = await createSb(A, { memory_mb: 64 });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const envd = await envdOf(s.id, sbid);
  // envd first in line for the OOM killer (each of the small allocators below
  // scores less than its 1000 adjustment), then more than the limit in all.
  await envdRun(envd, 'echo 1000 > /proc/1/oom_score_adj && for i in 1 2 3 4 5 6; do '
    + 'python3 -c "import time; b = bytearray(16 << 20); time.sleep(20)" & done; wait',
  { user: 'root' }).catch(() => {});
  const g = await eventually(async () => { const x = await getSb(A, sbid); return x.body.state === 'exited' && x; },
    { timeout: 15000, what: 'OOM reported' });
  assert.equal(g.body.reason, 'OOMKilled');
});

test('a create of a template whose image is missing: 502 naming the reason, nothing left', async () => {
  const r = await createSb(A, { template: 'noimg' });
  assert.equal(r.status, 502, `${r.raw}\n${logOf(s)}`);
  assert.match(r.body.message, /image corral\/no-such-image not found/);
  const l = await api('GET', '/v1/sandboxes', { key: A.member });
  for (const sb of l.body.sandboxes) assert.equal((await ctrsOf(s.id, sb.sandbox_id)).filter((c) => c.Image.includes('no-such')).length, 0);
  assert.match(logOf(s), /create \(runc\) -> failed: image corral\/no-such-image not found/);
});

test('require_isolation GVISOR: the sandbox runs under runsc, and envd works there too', async () => {
  const r = await createSb(A, { require_isolation: 'GVISOR' });
  assert.equal(r.status, 201, r.raw);
  assert.equal(r.body.isolation, 'GVISOR');
  const sbid = r.body.sandbox_id;
  const envd = await envdOf(s.id, sbid);
  assert.equal(envd.info.HostConfig.Runtime, 'runsc');
  assert.equal(envd.info.Config.Labels['corral.tier'], 'GVISOR');
  const k = await envdRun(envd, 'echo hi; dmesg 2>/dev/null | head -1', { user: 'root' });
  assert.match(k.stdout, /^hi\n/);
  assert.match(k.stdout, /gVisor/i, 'a gVisor guest answers');
  assert.match(sandboxLog(s, sbid, 'GVISOR'), /^create \(runsc\)/m);
});
