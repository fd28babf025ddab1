// Scale-out (issue 16, decision 0059), run once by tests/e2b/run.sh on its
// stack: three gateway hosts (network namespaces, nginx and two corral-api
// each) behind a TCP balancer, Redis with a replica and three sentinels, two
// workers on the one dockerd. Through the real SDK:
// - a sandbox made through host 1 is reached, listed and killed through the
//   others, and reaches neither Redis nor a gateway host on their bridge;
// - a gateway host killed (-9, every process) mid-loop: the others carry on;
// - the Redis primary killed (-9) mid-loop: only "503, retry" meanwhile, then
//   the API, dockerd and the admission count agree with what clients were told.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { Sandbox, sleep } from './lib.mjs';
import { docker, sandboxOf } from '../lib/engine.mjs';

const RUN = process.env.CORRAL_RUN;
const PORT = Number(process.env.CORRAL_PORT);
const REDIS_PORT = Number(process.env.CORRAL_REDIS_PORT);
const NET = process.env.CORRAL_HOSTS_NET || '10.233.0';
if (!RUN || Number(process.env.CORRAL_GATEWAY_HOSTS) !== 3 || process.env.CORRAL_REDIS_HA !== '1') {
  throw new Error('run through tests/e2b/run.sh: three gateway hosts and Redis under Sentinel');
}
const host = (i) => ({ apiUrl: `https://${NET}.${10 + i}:${PORT}`, sandboxUrl: `https://${NET}.${10 + i}:${PORT + 1}` });
const balancer = { apiUrl: `https://localhost:${PORT}`, sandboxUrl: `https://localhost:${PORT + 1}` };
const stack = (...args) => execFileSync('bash', ['conf/stack.sh', ...args], { env: process.env }).toString();
const ctl = (...args) => JSON.parse(execFileSync(`${process.env.CORRAL_BUILD}/corralctl`,
  ['-c', `${RUN}/corral.conf`, '--json', ...args]).toString());

// A workspace of the test's own, so that every count below is exact.
function workspace(name) {
  const w = ctl('workspace', 'create', `${name}-${Date.now()}`);
  return { apiKey: ctl('key', 'create', '--workspace', w.workspace, '--role', 'member').key };
}

async function workspaceActive(ws) {
  const r = await fetch(`${balancer.apiUrl}/v1/workspace`, { headers: { 'X-API-Key': ws.apiKey } });
  return (await r.json()).active_sandboxes;
}

async function runningContainers(ws) {
  const apiIds = new Set((await Sandbox.list({ ...ws, ...balancer, query: { state: ['running'] } }).nextItems())
    .map((s) => s.sandboxId));
  const f = encodeURIComponent(JSON.stringify({ label: ['corral.role'], status: ['running'] }));
  const ids = (await docker('GET', `/containers/json?filters=${f}`)).body.map(sandboxOf).filter(Boolean);
  return { apiIds, ids };
}

// The API, dockerd and the admission count agree with `kept` (the sandboxes
// clients were told exist and did not kill), and no sandbox has two containers.
async function agree(ws, kept) {
  let last;
  for (let t0 = Date.now(); Date.now() - t0 < 30_000; await sleep(500)) {
    const { apiIds, ids } = await runningContainers(ws);
    const mine = ids.filter((id) => kept.has(id) || apiIds.has(id));
    last = { kept: kept.size, listed: apiIds.size, containers: mine.length, active: await workspaceActive(ws) };
    if (apiIds.size === kept.size && [...kept].every((id) => apiIds.has(id)) && mine.length === kept.size &&
        new Set(mine).size === mine.length && last.active === kept.size) return last;
  }
  throw new Error(`API, dockerd and admission disagree with what clients were told: ${JSON.stringify(last)}`);
}

test('a sandbox made through host 1 is reached, listed and killed through hosts 2 and 3', async () => {
  const ws = workspace('hosts');
  const sbx = await Sandbox.create('base', { ...ws, ...host(1), timeoutMs: 120_000 });
  try {
    assert.equal((await sbx.commands.run('echo one')).stdout, 'one\n');
    const via2 = await Sandbox.connect(sbx.sandboxId, { ...ws, ...host(2) });
    assert.equal((await via2.commands.run('echo two')).stdout, 'two\n');
    const listed = await Sandbox.list({ ...ws, ...host(3), query: { state: ['running'] } }).nextItems();
    assert.deepEqual(listed.map((s) => s.sandboxId), [sbx.sandboxId]);
    // What a hostile sandbox can reach: not Redis, its sentinels or a gateway
    // host on the hosts' bridge (workerd's table drops sandbox -> host).
    const targets = [`${NET}.1:${REDIS_PORT}`, `${NET}.1:${REDIS_PORT + 2}`, `${NET}.11:${PORT}`, `${NET}.12:${PORT + 1}`];
    const probe = await sbx.commands.run(targets.map((t) => {
      const [a, p] = t.split(':');
      return `timeout 1 bash -c 'echo > /dev/tcp/${a}/${p}' 2>/dev/null && echo "open ${t}" || echo "closed ${t}"`;
    }).join('; '), { user: 'root' });
    assert.deepEqual(probe.stdout.trim().split('\n'), targets.map((t) => `closed ${t}`));
    assert.equal(await Sandbox.kill(sbx.sandboxId, { ...ws, ...host(2) }), true);
    await assert.rejects(Sandbox.connect(sbx.sandboxId, { ...ws, ...host(3) }), /not found/i);
    assert.equal(await Sandbox.kill(sbx.sandboxId, { ...ws, ...host(1) }), false, 'host 1 sees the kill too');
  } finally {
    await Sandbox.kill(sbx.sandboxId, { ...ws, ...balancer }).catch(() => {});
  }
});

test('a gateway host killed mid-loop: the balancer\'s other hosts carry on', { timeout: 180_000 }, async () => {
  const ws = workspace('hostdown');
  const before = await Sandbox.create('base', { ...ws, ...balancer, timeoutMs: 150_000 });
  const kept = new Set([before.sandboxId]);
  const failed = [];
  let ok = 0; let okAfter = 0; let killedAt = 0;
  try {
    // bounded: 8 rounds of create, command, kill, or 90 s
    for (let i = 0, t0 = Date.now(); i < 8 && Date.now() - t0 < 90_000; i++) {
      if (i === 3) { stack('kill-host', '2'); killedAt = Date.now(); }
      try {
        const s = await Sandbox.create('base', { ...ws, ...balancer, timeoutMs: 60_000 });
        kept.add(s.sandboxId);
        assert.equal((await s.commands.run(`echo ${i}`)).stdout, `${i}\n`);
        await s.kill();
        kept.delete(s.sandboxId);
        ok++; if (killedAt) okAfter++;
      } catch (e) {
        failed.push({ i, after: killedAt ? Date.now() - killedAt : -1, e: `${e.name}: ${e.message}` });
      }
    }
    console.log(`# host 2 killed after round 3: ${ok} rounds ok (${okAfter} after), failed: ${JSON.stringify(failed)}`);
    // Only a request on a connection to host 2 when it died may fail: the
    // balancer sends every new connection to a live host.
    assert.ok(failed.length <= 2, `failed rounds: ${JSON.stringify(failed)}`);
    assert.ok(okAfter >= 4, `${okAfter} rounds after the kill`);
    await assert.rejects(fetch(`${host(2).apiUrl}/health`), 'host 2 is down');
    for (const h of [balancer, host(1), host(3)]) {
      const again = await Sandbox.connect(before.sandboxId, { ...ws, ...h });
      assert.equal((await again.commands.run('echo still')).stdout, 'still\n', `through ${h.apiUrl}`);
    }
    // A round that failed in flight may have made a sandbox nobody was told
    // of; it is listed, and killed here. Everything else agrees.
    const { apiIds } = await runningContainers(ws);
    for (const id of apiIds) if (!kept.has(id)) { console.log(`# orphan of a failed round: ${id}`); kept.add(id); }
    console.log(`# after: ${JSON.stringify(await agree(ws, kept))}`);
  } finally {
    for (const id of kept) await Sandbox.kill(id, { ...ws, ...balancer }).catch(() => {});
    stack('start-host', '2');
  }
  assert.equal((await fetch(`${host(2).apiUrl}/health`)).status, 204, 'host 2 is back');
});

const sentinelMaster = () => execFileSync('redis-cli', ['--no-auth-warning', '-h', `${NET}.1`, '-p', String(REDIS_PORT + 2),
  'SENTINEL', 'get-master-addr-by-name', 'corral'],
{ env: { ...process.env, REDISCLI_AUTH: readFileSync(`${RUN}/redis-sentinel-password`, 'utf8').trim() } })
  .toString().trim().split('\n').join(':');

// The process of the primary the sentinels name: the stack's replica once a
// failover made it primary.
const primaryPid = (addr) => {
  const port = Number(addr.split(':').pop());
  const name = { [REDIS_PORT]: 'redis', [REDIS_PORT + 1]: 'redis-replica' }[port];
  if (!name) throw new Error(`the sentinels name ${addr}, neither the stack's primary nor its replica`);
  return Number(readFileSync(`${RUN}/pids/${name}.pid`, 'utf8'));
};

test('kill -9 of the Redis primary mid-loop: only 503s meanwhile, then nothing told to a client is lost', { timeout: 240_000 }, async () => {
  const ws = workspace('failover');
  const primary = sentinelMaster();
  const kept = new Set(); const killed = new Set(); const busy = []; const other = [];
  let killedAt = 0; let firstOkAfter = 0; let rounds = 0; let commands = 0;
  const long = await Sandbox.create('base', { ...ws, ...balancer, timeoutMs: 200_000 });
  kept.add(long.sandboxId);
  // bounded: 60 rounds or 120 s; ends 5 s after the first success after the kill
  for (const t0 = Date.now(); rounds < 60 && Date.now() - t0 < 120_000; rounds++) {
    if (!killedAt && rounds === 3) {
      process.kill(primaryPid(primary), 'SIGKILL');
      killedAt = Date.now();
    }
    try {
      const s = await Sandbox.create('base', { ...ws, ...balancer, timeoutMs: 120_000 });
      kept.add(s.sandboxId);
      // Each command appends its round to one file in the long-lived sandbox:
      // afterwards every acknowledged one is there exactly once.
      await long.commands.run(`echo ${rounds} >> /tmp/rounds`);
      commands++;
      if (rounds % 2) { await s.kill(); kept.delete(s.sandboxId); killed.add(s.sandboxId); }
      if (killedAt && !firstOkAfter) firstOkAfter = Date.now();
    } catch (e) {
      const what = { round: rounds, at: Date.now(), e: `${e.name}: ${e.message}` };
      if (e.name === 'ServiceBusyError' || /\b503\b|unavailable/i.test(e.message)) busy.push(what); else other.push(what);
      // sleep: a client's pause before it tries again (the loop is bounded).
      await sleep(200);
    }
    if (firstOkAfter && Date.now() - firstOkAfter > 5000) break;
  }
  console.log(`# ${rounds} rounds: ${commands} commands acknowledged, ${kept.size} sandboxes kept, ${killed.size} killed, ` +
    `${busy.length} "503, retry"; 503s for ${firstOkAfter - killedAt} ms after the kill; primary ${primary} -> ${sentinelMaster()}`);
  assert.deepEqual(other, [], 'errors other than 503');
  assert.ok(killedAt && firstOkAfter, 'the primary was killed and service came back');
  assert.ok(firstOkAfter - killedAt < 20_000, `503s for ${firstOkAfter - killedAt} ms`);
  for (const b of busy) assert.ok(b.at >= killedAt && b.at <= firstOkAfter, `a 503 outside the failover: ${JSON.stringify(b)}`);
  assert.notEqual(sentinelMaster(), primary, 'the sentinels moved the primary');
  try {
    console.log(`# after: ${JSON.stringify(await agree(ws, kept))}`);
    const lines = (await long.commands.run('cat /tmp/rounds')).stdout.trim().split('\n');
    assert.equal(lines.length, commands, `${commands} commands acknowledged, ${lines.length} applied`);
    assert.equal(new Set(lines).size, lines.length, 'no command applied twice');
    // A kill's answer comes once the worker has it; dockerd removes the
    // container moments later.
    const left = async () => {
      const f = encodeURIComponent(JSON.stringify({ label: ['corral.role'] }));
      return (await docker('GET', `/containers/json?all=1&filters=${f}`)).body
        .map(sandboxOf).filter((id) => killed.has(id));
    };
    for (let t0 = Date.now(); (await left()).length && Date.now() - t0 < 30_000;) await sleep(500);
    assert.deepEqual(await left(), [], 'every killed sandbox\'s container is gone');
  } finally {
    for (const id of kept) await Sandbox.kill(id, { ...ws, ...balancer }).catch(() => {});
  }
});
