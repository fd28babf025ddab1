// nginx reuses its connections to the real workerd data port (issue 12,
// decision 0051): 50 envd GET /health through the gateway, counting the TCP
// connections between nginx and the data port (`ss`, both ends, TIME_WAIT
// included). nginx keeps a connection only when the data port vouches for it
// (X-Corral-Keep, docs/data-plane.md), which workerd's does since it reads
// every request on a connection (decision 0050). Fails if either side stops
// keeping. tests/integration/gateway_keepalive.test.mjs shows nginx's side
// alone, against a stand-in data port.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Sandbox, MODE } from './lib.mjs';

const DATA_PORT = process.env.CORRAL_WORKERD_DATA_PORT;
if (!DATA_PORT) throw new Error('CORRAL_WORKERD_DATA_PORT (the data port under test) must be set: run through tests/e2b/run.sh');

// The nginx-side ports of every TCP connection to the data port ss can see.
function dataPortConnections() {
  const out = execFileSync('ss', ['-Htan', `( sport = :${DATA_PORT} or dport = :${DATA_PORT} )`], { encoding: 'utf8' });
  const ports = new Set();
  for (const line of out.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 5 || f[0] === 'LISTEN') continue;
    const local = f[3].slice(f[3].lastIndexOf(':') + 1);
    const peer = f[4].slice(f[4].lastIndexOf(':') + 1);
    ports.add(local === DATA_PORT ? peer : local);
  }
  return ports;
}

let sbx;
before(async () => { sbx = await Sandbox.create('base', { timeoutMs: 120_000 }); });
after(async () => { await sbx?.kill(); });

test(`[${MODE}] 50 GET /health through the gateway ride one or two connections to the data port`,
  async () => {
    assert.equal(await sbx.isRunning(), true);
    const before = dataPortConnections();
    for (let i = 0; i < 50; i++) assert.equal(await sbx.isRunning(), true);
    const fresh = [...dataPortConnections()].filter((p) => !before.has(p));
    assert.ok(fresh.length <= 2, `nginx opened ${fresh.length} connections to the data port for 50 requests`);
  });
