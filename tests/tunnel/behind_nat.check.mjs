// A worker host behind NAT (issue 29; tests/tunnel/natworker.sh made it):
// its workerd listens on no TCP port, nothing from outside connects into its
// host, and its sandboxes, on its own dockerd, are served through its tunnel
// all the same; a person's laptop behind the same NAT joins a workspace with
// README.md's one command (agent mode through a tunnel) and serves a session
// through the SDK, its permission gate deciding. Run by tests/tunnel/run.sh
// once the stack's own workerd is stopped, so that every create lands there;
// the e2b files run after it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { listeningTcp } from '../lib/sockets.mjs';
import { until } from '../lib/poll.mjs';
import { sandboxContainer, sandboxContainers } from '../lib/engine.mjs';
import { Sandbox } from '../e2b/lib.mjs';
import { corralctl } from '../lib/corral.mjs';

const env = (k) => {
  if (!process.env[k]) throw new Error(`${k} is not set: run through tests/tunnel/run.sh (natworker.sh env)`);
  return process.env[k];
};
const NS = env('CORRAL_NAT_NS'), ADDR = env('CORRAL_NAT_ADDR'), SOCK = env('CORRAL_NAT_DOCKER_SOCK'), DIR = env('CORRAL_NAT_DIR');
const SERVICE_PORT = 8765;

const sandboxes = [], children = [];
after(async () => {
  for (const s of sandboxes) await s.kill().catch(() => {});
  for (const c of children) c.kill('SIGKILL');
});

// A TCP connect to host:port: 'open', 'refused', or 'timeout' (nothing came back).
function connect(host, port, ms = 1500) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (r) => { s.destroy(); resolve(r); };
    s.setTimeout(ms, () => done('timeout'));
    s.on('connect', () => done('open'));
    s.on('error', (e) => done(e.code === 'ECONNREFUSED' ? 'refused' : e.code));
  });
}

test('the worker behind NAT listens on no TCP port, and a service on its host is not reached from outside', async () => {
  const pid = Number(readFileSync(`${DIR}/workerd.pid`, 'utf8'));
  assert.deepEqual(listeningTcp(pid), [], 'workerd behind NAT holds a listening TCP socket');
  // A service on all of the NAT host's addresses: served inside (the
  // control), never to a connection that starts outside it.
  const svc = spawn('nsenter', [`--net=/run/netns/${NS}`, 'python3', '-m', 'http.server', String(SERVICE_PORT), '--bind', '0.0.0.0'],
    { stdio: 'ignore' });
  children.push(svc);
  const inside = () => new Promise((resolve) => {
    const c = spawn('nsenter', [`--net=/run/netns/${NS}`, 'bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${SERVICE_PORT}`]);
    c.on('exit', (code) => resolve(code === 0));
  });
  assert.ok(await until(inside, { timeoutMs: 10_000, everyMs: 100 }), 'the service inside the NAT host did not listen');
  const from = { service: await connect(ADDR, SERVICE_PORT), ssh: await connect(ADDR, 22), envd: await connect(ADDR, 49983) };
  console.log(`connections from outside to ${ADDR}:`, from);
  for (const [what, r] of Object.entries(from)) assert.equal(r, 'timeout', `${what}: a connection from outside got "${r}"`);
});

test('its sandboxes run on its own dockerd and are served through its tunnel', async () => {
  const s = await Sandbox.create('base', { timeoutMs: 300_000 });
  sandboxes.push(s);
  // Its container (by label, or by name once a warm one is claimed: 0082).
  const c = await sandboxContainer(s.sandboxId, 10_000, SOCK).catch(() => null);
  assert.ok(c, `${s.sandboxId} is not a container of the NAT host's dockerd`);
  assert.deepEqual(await sandboxContainers(s.sandboxId), [], `${s.sandboxId} is a container of this host's dockerd`);
  const r = await s.commands.run('echo "from $(hostname)"');
  assert.equal(r.exitCode, 0);
  assert.match(r.stdout, /^from /);
  await s.files.write('/tmp/hello.txt', 'through the tunnel');
  assert.equal(await s.files.read('/tmp/hello.txt'), 'through the tunnel');
});

// README.md's agent-mode command, as a person types it: the ```sh block
// after its "Your own machine as a sandbox" heading, with the control
// plane's URL as this laptop reaches it (relay.py: nginx on its loopback).
function readmeCommand() {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const at = readme.indexOf('### Your own machine as a sandbox');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at < 0 || !block) throw new Error('README.md has no agent-mode command');
  return block[1].replace('https://corral.example.com', `https://127.0.0.1:${process.env.CORRAL_PORT}`);
}

test("a person's laptop behind the NAT joins with README's command: a session through the SDK, the gate deciding", async () => {
  const uid = Number(process.env.CORRAL_NAT_PERSON_UID || 64301);
  const ws = corralctl('workspace', 'create', `nat-person-${Date.now().toString(36)}`);
  const member = corralctl('key', 'create', '--workspace', ws.workspace, '--role', 'member').key;
  // The person's home: outside CORRAL_RUN (0700, root's), theirs alone.
  const home = fs.mkdtempSync('/tmp/corral-nat-person-');
  const work = path.join(home, 'work');
  fs.mkdirSync(work);
  fs.writeFileSync(path.join(home, 'outside.txt'), 'not in the work tree\n');
  fs.copyFileSync(`${process.env.CORRAL_RUN}/tls/ca.crt`, path.join(home, 'corral-ca.pem'));
  for (const f of [home, work, path.join(home, 'outside.txt'), path.join(home, 'corral-ca.pem')]) fs.chownSync(f, uid, uid);
  fs.chmodSync(home, 0o711);
  const log = path.join(home, 'workerd.log');
  const out = fs.openSync(log, 'a');
  fs.fchownSync(out, uid, uid);
  const bin = path.dirname(fs.realpathSync(process.env.CORRAL_BUILD ? `${process.env.CORRAL_BUILD}/workerd` : new URL('../../build/bin/workerd', import.meta.url).pathname));
  const laptop = spawn('nsenter', [`--net=/run/netns/${NS}`, 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups',
    '--inh-caps=-all', 'bash', '-c', readmeCommand()], {
    cwd: work, detached: true, stdio: ['ignore', out, out],
    env: { HOME: home, PATH: `${bin}:/usr/bin:/bin`, LANG: 'C.UTF-8', JOIN_TOKEN: corralctl('join-token', 'create', '--workspace', ws.workspace).token,
      // a sanitizer's report goes where this person may write, and fails the test
      ASAN_OPTIONS: `detect_leaks=1:log_path=${home}/asan`, UBSAN_OPTIONS: `print_stacktrace=1:log_path=${home}/ubsan` },
  });
  fs.closeSync(out);
  const stop = () => { try { process.kill(-laptop.pid, 'SIGTERM'); } catch { /* gone */ } };
  process.on('exit', stop);
  let sbx;
  try {
    const up = () => /tunnel: up through/.test(readFileSync(log, 'utf8'));
    assert.ok(await until(up, { timeoutMs: 30_000, everyMs: 200 }), `the laptop's workerd did not dial in:\n${readFileSync(log, 'utf8').slice(-1500)}`);
    const wd = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))
      .find((p) => { try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('--mode=agent') && readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'workerd'; } catch { return false; } });
    assert.ok(wd, "the laptop's workerd process");
    assert.deepEqual(listeningTcp(Number(wd)), [], "the laptop's workerd holds a listening TCP socket");
    const ready = async () => {
      const r = await fetch(`${process.env.E2B_API_URL}/v1/workers`, { headers: { 'X-API-Key': member } });
      return ((await r.json()).workers || []).some((w) => (w.templates || []).includes('laptop') && w.free_slots > 0);
    };
    assert.ok(await until(ready, { timeoutMs: 30_000, everyMs: 200 }), "the laptop is not placeable in its workspace");
    sbx = await Sandbox.create('laptop', { apiKey: member, timeoutMs: 120_000 });
    // The session is the person, on their machine: a file written is theirs.
    await sbx.files.write(`${work}/from-the-sdk.txt`, 'through the tunnel');
    assert.equal(readFileSync(path.join(work, 'from-the-sdk.txt'), 'utf8'), 'through the tunnel');
    assert.equal(fs.statSync(path.join(work, 'from-the-sdk.txt')).uid, uid, 'written as the person');
    // strict: the work tree and nothing else; a command is asked, and
    // strict's answer is no
    await assert.rejects(sbx.files.read(`${home}/outside.txt`), /permission denied by the gate/);
    await assert.rejects(sbx.commands.run('cat ../outside.txt'), /permission denied by the gate/);
    const gate = fs.readdirSync(home).includes('.corral-gate') ? readFileSync(path.join(home, '.corral-gate', 'audit.jsonl'), 'utf8') : '';
    assert.match(gate, /outside\.txt/, "the gate's audit names the denied read");
  } finally {
    await sbx?.kill().catch(() => {});
    stop();
    process.off('exit', stop);
    await new Promise((ok) => (laptop.exitCode !== null ? ok() : laptop.once('exit', ok)));
  }
  const reports = fs.readdirSync(home).filter((f) => /^(asan|ubsan)/.test(f));
  assert.deepEqual(reports, [], `sanitizer reports: ${reports.map((f) => readFileSync(path.join(home, f), 'utf8').slice(0, 2000)).join('\n')}`);
  fs.rmSync(home, { recursive: true, force: true });
});
