// A Sentinel failover slower than a worker's lease, under load, with a real
// workerd on the real dockerd (issue 34 point 1, decision 0070); run by
// tests/failover/workerd.sh. The primary is paused (SIGSTOP): it holds every
// connection and answers none, as a host that hangs does, until the sentinels
// give up on it (down-after twice the lease) and promote the replica. Then,
// as for Redis stopped (tests/workerd/outage.mjs): no sandbox lost, every one
// answers in the same container, workerd never told 410 nor killing what a
// client did not, creates work again within a bounded wait, nothing corrupted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { RUN, eventually } from '../lib/corral.mjs';
import { outageUnderLoad, outageWorker, LEASE_MS } from '../workerd/outage.mjs';

const REDIS_PORT = Number(process.env.CORRAL_REDIS_PORT);
if (process.env.CORRAL_REDIS_HA !== '1') throw new Error('run through tests/failover/workerd.sh: Redis under Sentinel');
const sentinel = (...args) => execFileSync('redis-cli', ['--no-auth-warning', '-p', String(REDIS_PORT + 2), ...args],
  { env: { ...process.env, REDISCLI_AUTH: readFileSync(`${RUN}/redis-sentinel-password`, 'utf8').trim() } })
  .toString().trim().split('\n');
const primary = () => sentinel('SENTINEL', 'get-master-addr-by-name', 'corral').join(':');

const ctx = outageWorker('workerd-failover.log');

test(`the Redis primary paused until the sentinels fail over, longer than a lease (${LEASE_MS} ms), under load: ` +
  'no sandbox lost, every one answers, creates work again', { timeout: 420_000 }, async () => {
  const conf = sentinel('SENTINEL', 'master', 'corral');
  const downAfter = Number(conf[conf.indexOf('down-after-milliseconds') + 1]);
  assert.ok(downAfter > LEASE_MS, `the sentinels call the primary down after ${downAfter} ms: not longer than a lease`);
  const was = primary();
  assert.equal(was, `127.0.0.1:${REDIS_PORT}`);
  const pid = Number(readFileSync(`${RUN}/pids/redis.pid`, 'utf8'));
  let paused = false;
  try {
    await outageUnderLoad({
      ws: ctx.A, worker: ctx.w, name: 'failover',
      down: async () => { process.kill(pid, 'SIGSTOP'); paused = true; },
      back: () => eventually(() => primary() !== was, { timeout: 120_000, every: 200, what: 'the sentinels to promote the replica' }),
    });
  } finally {
    if (paused) process.kill(pid, 'SIGCONT');
  }
  assert.equal(primary(), `127.0.0.1:${REDIS_PORT + 1}`, 'the replica is the primary');
});
