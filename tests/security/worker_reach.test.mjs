// What a worker can make the gateway reach (issue 25, point 2; decision
// 0061): a workspace owner mints a join token and handshakes a "worker"
// whose data_addr is a service of the gateway host, so that the gateway
// would forward data-plane requests there. Every port something listens on
// here, on loopback (both families, and another 127/8 address) and on the
// host's own addresses, is refused at the handshake, and nothing is stored;
// only the data ports the stack lists enrol. And a worker's credentials reach
// none of a user's routes (matrix.test.mjs), nor another workspace's pool.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, corralctl, workspace, hostFacts } from './lib.mjs';

const a = workspace('wa');
const listed = [1, 2].map((n) => Number(process.env.CORRAL_WORKERD_DATA_PORT) + n - 1);
const host = hostFacts();
const enrolled = [];
after(async () => {
  for (const w of enrolled) await call('DELETE', `/v1/workers/${w}`, { key: a.owner });
});

const handshake = (token, dataAddr) => call('POST', '/v1/worker/handshake', {
  headers: { Authorization: `Bearer ${token}` },
  body: { hostname: 'attacker', runtimes: [{ name: 'runc', tier: 'CONTAINER' }], cpu_cores: 1, memory_mb: 1024,
    slots: 1, data_addr: dataAddr, templates: ['base'] },
});

test("no data_addr on a port of the gateway host's but the listed data ports", async () => {
  const token = corralctl('join-token', 'create', '--workspace', a.id).token;
  const addrs = ['127.0.0.1', '[::1]', '127.0.0.2', ...host.addrs.map((x) => x.addr)];
  const cells = [];
  for (const port of host.ports) {
    for (const addr of addrs) {
      if (addr === '127.0.0.1' && listed.includes(port)) continue; // the one thing a worker may claim
      const r = await handshake(token, `${addr}:${port}`);
      cells.push([`${addr}:${port}`, r.status]);
      if (r.status === 200) enrolled.push(r.body.worker_id);
    }
  }
  const got = (await call('GET', '/v1/workers', { key: a.member })).body.workers;
  const reached = cells.filter(([, s]) => s !== 400);
  console.log(`\nhandshakes with a data_addr on the gateway host: ${cells.length} tried, ${reached.length} accepted`);
  assert.deepEqual(reached, [], 'accepted data addresses on the gateway host');
  assert.deepEqual(got, [], 'no worker is enrolled in the workspace');
});

test('the listed data port enrols, into its own workspace only', async () => {
  const token = corralctl('join-token', 'create', '--workspace', a.id).token;
  const r = await handshake(token, `127.0.0.1:${listed[0]}`);
  assert.equal(r.status, 200, r.raw);
  enrolled.push(r.body.worker_id);
  const b = workspace('wb');
  const theirs = (await call('GET', '/v1/workers', { key: b.member })).body.workers;
  assert.ok(!theirs.some((w) => w.id === r.body.worker_id), "b's pool does not hold a's worker");
});
