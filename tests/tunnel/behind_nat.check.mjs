// A worker host behind NAT (issue 29; tests/tunnel/natworker.sh made it):
// its workerd listens on no TCP port, nothing from outside connects into its
// host, and its sandboxes, on its own dockerd, are served through its tunnel
// all the same. Run by tests/tunnel/run.sh once the stack's own workerd is
// stopped, so that every create lands there; the e2b files run after it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { listeningTcp } from '../lib/sockets.mjs';
import { until } from '../lib/poll.mjs';
import { sandboxContainer, sandboxContainers } from '../lib/engine.mjs';
import { Sandbox } from '../e2b/lib.mjs';

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
