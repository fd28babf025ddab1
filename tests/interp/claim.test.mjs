// corral-interp as envd starts it (envd/interp_launch.c, decision 0088): a
// listening socket it is given, and a pipe on which envd hands over the
// access token's SHA-256 and then the claim's env vars. A warm sandbox's
// envd holds that pipe until the claim: the python kernel starts before,
// nothing is served until then, and the claim's env vars reach the kernel
// already running. Its own server, on this host, beside run.sh's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { sleep } from '../lib/poll.mjs';

const BIN = process.env.CORRAL_INTERP_BIN, KERNELS = process.env.CORRAL_INTERP_KERNELS;
if (!BIN || !KERNELS) throw new Error('run through tests/interp/run.sh: CORRAL_INTERP_BIN, CORRAL_INTERP_KERNELS');

const TOKEN = 'the-sandbox-access-token';
const digest = createHash('sha256').update(TOKEN).digest('hex');

// A server on a socket made here (as envd makes it) and a pipe held open.
async function start() {
  const work = mkdtempSync('/tmp/corral-interp-claim.');
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  const child = spawn(BIN, ['-listen-fd', '3', '-token-fd', '4', '-cwd', work, '-dir', work, '-kernels', KERNELS],
    { stdio: ['ignore', 'ignore', 'pipe', srv._handle.fd, 'pipe'],
      env: { ...process.env, PATH: '/usr/bin:/bin', ASAN_OPTIONS: 'detect_leaks=0' } });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  srv.close(); // the child holds its own copy, as the server holds envd's
  return { port, child, pipe: child.stdio[4], work, log: () => log };
}

async function execute(port, code, token) {
  const r = await fetch(`http://127.0.0.1:${port}/execute`, { method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { 'X-Access-Token': token } : {}) },
    body: JSON.stringify({ code }) });
  const text = await r.text();
  return { status: r.status, lines: r.ok ? text.trim().split('\n').map((l) => JSON.parse(l)) : [], text };
}

test('a warm server: its kernel starts before the claim, nothing is served until it, then the claim\'s env vars are there', async () => {
  const s = await start();
  try {
    // The python kernel starts while the pipe is silent (the warm wait).
    for (let i = 0; i < 300 && !/kernel-/.test(childrenOf(s.child.pid)); i++) {
      // sleep: between looks at the process tree (the kernel's start, up to 30 s)
      await sleep(100);
    }
    assert.match(childrenOf(s.child.pid), /ipykernel_launcher/, 'the kernel started before the claim');
    // A request now waits: it is not answered before the claim.
    const early = execute(s.port, 'import os; os.environ.get("CLAIM_VAR")', TOKEN);
    // sleep: a window in which no answer may come (the claim has not happened)
    const raced = await Promise.race([early.then(() => 'answered'), sleep(1500).then(() => 'waiting')]);
    assert.equal(raced, 'waiting', 'served before the claim');
    s.pipe.end(`${digest}\n${JSON.stringify({ CLAIM_VAR: "given at the claim, it's" })}\n`);
    const r = await early;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.lines.find((l) => l.is_main_result)?.text, `"given at the claim, it's"`);
    assert.equal((await execute(s.port, '1')).status, 401, 'no token');
    assert.equal((await execute(s.port, '1', `${TOKEN}x`)).status, 401, 'a wrong token');
    // A context made after the claim inherits them as well (bash, started now).
    const ctx = await (await fetch(`http://127.0.0.1:${s.port}/contexts`, { method: 'POST',
      headers: { 'Content-Type': 'application/json' }, body: '{"language":"bash"}' })).json();
    const bash = await fetch(`http://127.0.0.1:${s.port}/execute`, { method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Access-Token': TOKEN },
      body: JSON.stringify({ code: 'echo "$CLAIM_VAR"', context_id: ctx.id }) });
    assert.match(await bash.text(), /given at the claim/);
  } finally {
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
    rmSync(s.work, { recursive: true, force: true });
  }
});

test('a pipe that closes without a token line: the server refuses to serve at all', async () => {
  const s = await start();
  s.pipe.end('not a digest\n');
  const code = await new Promise((r) => s.child.once('exit', r));
  rmSync(s.work, { recursive: true, force: true });
  assert.equal(code, 1);
  assert.match(s.log(), /no token line from envd; not serving/);
});

// The command lines of pid's children ('' when it has none).
function childrenOf(pid) {
  try {
    return execFileSync('ps', ['-o', 'args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch { return ''; }
}
