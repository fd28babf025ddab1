// Issue 25, point 2 (decision 0061), through the real corral-api behind the
// stack's nginx: a workspace owner mints a join token and handshakes a
// "worker" whose data_addr is another port of the gateway host's loopback
// (Redis, a Docker API, another worker's data port), so that the gateway
// would forward data-plane requests there. The handshake is refused, 400
// naming the problem, and nothing is stored; only the addresses the stack
// lists exactly (workerd's 127.0.0.1:7001 and the suite's listed test ports)
// enrol. tests/dataplane/ssrf.test.mjs tries the same through the gateway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, corralctl, newWorkspace, redis } from '../lib/corral.mjs';

const A = newWorkspace();
const REDIS_PORT = process.env.CORRAL_REDIS_PORT;
const API_PORT = process.env.CORRAL_PORT;
const LISTED = ['127.0.0.1:7001',
  ...(process.env.CORRAL_TEST_DATA_PORTS || '').split(/\s+/).filter(Boolean).map((p) => `127.0.0.1:${p}`)];

const handshake = (token, dataAddr, extra = {}) => api('POST', '/v1/worker/handshake', {
  headers: { Authorization: `Bearer ${token}` },
  body: { hostname: 'attacker', runtimes: [{ name: 'runc', tier: 'CONTAINER' }], cpu_cores: 1, memory_mb: 1024,
    slots: 1, data_addr: dataAddr, templates: ['base'], ...extra },
});
const refusal = (canon) => ({ code: 400, message: `data_addr: ${canon} is on loopback and not a listed worker `
  + 'data address (loopback is allowed only as exact address:port pairs)' });
const workers = async () => (await api('GET', '/v1/workers', { key: A.member })).body.workers;
const poolKeys = () => redis('EXISTS', `corral:{ws:${A.id}}:wkall`, `corral:{ws:${A.id}}:workers`);

test('a data_addr elsewhere on the gateway host\'s loopback: 400 naming it, nothing stored', async () => {
  assert.ok(REDIS_PORT && API_PORT && LISTED.length > 1, 'run with tests/run.sh integration()\'s environment');
  const token = corralctl('join-token', 'create', '--workspace', A.id).token;
  const cases = [
    [`127.0.0.1:${REDIS_PORT}`], [`[::1]:${REDIS_PORT}`], [`[0:0:0:0:0:0:0:1]:${REDIS_PORT}`, `[::1]:${REDIS_PORT}`],
    ['127.0.0.1:2375'], [`127.0.0.1:${API_PORT}`], ['127.0.0.1:7002'], ['127.0.0.2:7001'], ['127.255.255.254:7001'],
    ['[::1]:7001'], ['127.0.0.1:1'],
  ];
  for (const [addr, canon = addr] of cases) {
    const r = await handshake(token, addr);
    assert.equal(r.status, 400, `${addr}: ${r.raw}`);
    assert.deepEqual(r.body, refusal(canon), addr);
  }
  assert.deepEqual(await workers(), [], 'no worker enrolled');
  assert.equal(poolKeys(), '0', 'no pool or worker record was written');
});

test('a listed address enrols, stored canonically; a re-enrolment cannot move it to another loopback port', async () => {
  const token = corralctl('join-token', 'create', '--workspace', A.id).token;
  const enrolled = [];
  for (const addr of LISTED) {
    const r = await handshake(token, addr);
    assert.equal(r.status, 200, `${addr}: ${r.raw}`);
    enrolled.push(r.body);
    assert.equal(redis('HGET', `corral:{ws:${A.id}}:worker:${r.body.worker_id}`, 'data_addr'), addr);
  }
  const [first] = enrolled;
  const again = await handshake(token, `127.0.0.1:${REDIS_PORT}`,
    { worker_id: first.worker_id, worker_secret: first.worker_secret });
  assert.equal(again.status, 400, again.raw);
  assert.deepEqual(again.body, refusal(`127.0.0.1:${REDIS_PORT}`));
  assert.equal(redis('HGET', `corral:{ws:${A.id}}:worker:${first.worker_id}`, 'data_addr'), LISTED[0]);
  assert.deepEqual((await workers()).map((w) => w.data_addr).sort(), [...LISTED].sort());
  for (const w of enrolled) {
    assert.equal((await api('DELETE', `/v1/workers/${w.worker_id}`, { key: A.owner })).status, 204);
  }
});
