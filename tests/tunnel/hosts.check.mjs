// Two gateway hosts (issue 29, decision 0087; conf/gateway-hosts.sh): a
// worker's tunnel is held by the corral-tunneld of whichever host the
// balancer gave it, Redis says which, and a request arriving at the other
// host reaches the sandbox all the same. Kill the host holding the tunnel
// (every process of its namespace, at once): the worker dials again, the
// balancer gives it the other host, and the same sandbox answers within
// seconds. Run by tests/tunnel/run.sh on a stack of its own
// (CORRAL_GATEWAY_HOSTS=2, one workerd with `tunnel = on`).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { redis, stack, eventually } from '../lib/corral.mjs';
import { Sandbox } from '../e2b/lib.mjs';

const RUN = process.env.CORRAL_RUN;
const PORT = Number(process.env.CORRAL_PORT);
const NET = process.env.CORRAL_HOSTS_NET;
if (!RUN || !PORT || !NET) throw new Error('run through tests/tunnel/run.sh: CORRAL_RUN, CORRAL_PORT, CORRAL_HOSTS_NET');
const HOSTS = [1, 2].map((i) => ({ i, addr: `${NET}.${10 + i}` }));
const workerId = () => /worker_id = (\w+)/.exec(readFileSync(`${RUN}/workerd-state/worker`, 'utf8'))[1];
const record = () => redis('GET', `corral:{ws:}:worker:${workerId()}:tunnel`);
const holder = () => HOSTS.find((h) => record().startsWith(`${h.addr}:`));

let sbx;
after(async () => { if (sbx) await sbx.kill().catch(() => {}); });

// envd's /health of sbx through gateway host h's own data port (not the
// balancer): its status, or the error's name.
async function healthVia(h) {
  try {
    const r = await fetch(`https://${h.addr}:${PORT + 1}/health`, {
      headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' }, signal: AbortSignal.timeout(5000),
    });
    await r.arrayBuffer();
    return r.status;
  } catch (e) {
    return e.cause?.code || e.name;
  }
}

test('the tunnel held on one host: a request arriving at either host reaches the sandbox', async () => {
  await eventually(() => holder() !== undefined, { what: `the tunnel's record on a gateway host (${record()})` });
  sbx = await Sandbox.create('base', { timeoutMs: 300_000, secure: false });
  await sbx.files.write('/tmp/before.txt', 'written before the move');
  const got = {};
  for (const h of HOSTS) got[`host ${h.i}${h === holder() ? ' (holds it)' : ''}`] = await healthVia(h);
  console.log(`tunnel held at ${record()}; envd /health by each host:`, got);
  assert.deepEqual(Object.values(got), [204, 204]);
});

test('the host holding the tunnel killed: the worker moves to the other within seconds, the same sandbox answers', async () => {
  const was = holder(), other = HOSTS.find((h) => h !== was);
  const t0 = Date.now();
  stack('kill-host', String(was.i));
  await eventually(() => holder() === other, { timeout: 30_000, what: `the tunnel held by host ${other.i}` });
  const moved = Date.now() - t0;
  await eventually(async () => (await healthVia(other)) === 204, { timeout: 30_000, what: 'envd through the surviving host' });
  const served = Date.now() - t0;
  console.log(`host ${was.i} killed: tunnel at host ${other.i} after ${moved} ms, envd answered after ${served} ms`);
  assert.ok(served < 15_000, `the sandbox answered again only after ${served} ms`);
  // Through the SDK (the balancer, now one host): the same sandbox, its file.
  assert.equal(await sbx.files.read('/tmp/before.txt'), 'written before the move');
  assert.equal((await sbx.commands.run('echo moved')).stdout, 'moved\n');
  // The host back: it holds nothing, and forwards to the one that does.
  stack('start-host', String(was.i));
  await eventually(async () => (await healthVia(was)) === 204, { timeout: 30_000, what: `envd through host ${was.i}, back` });
  assert.equal(holder(), other, 'the tunnel stayed where it went');
});
