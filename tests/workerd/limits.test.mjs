// Per-sandbox limits from the workspace's settings, on real dockerd: a fork
// bomb stops at the pids limit and a disk filler at the disk limit, while a
// neighbour sandbox keeps answering.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, newWorkspace } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, createSb, envdOf, envdRun, inspect, forkBomb } from './helpers.mjs';

let A, w, victim, neighbour;
const PIDS = 128, DISK_MB = 300;

before(async () => {
  A = newWorkspace();
  const r = await api('PATCH', '/v1/workspace', { key: A.owner, body: { sandbox_pids_limit: PIDS, sandbox_disk_mb: DISK_MB } });
  assert.equal(r.status, 200, r.raw);
  w = await stackWorker(A, { extra: 'cpu_cores = 64\nmemory_mb = 65536' });
  const made = [];
  for (let i = 0; i < 2; i++) {
    const c = await createSb(A, { memory_mb: 512 });
    assert.equal(c.status, 201, c.raw);
    made.push(await envdOf(w.id, c.body.sandbox_id));
  }
  [victim, neighbour] = made;
});
after(cleanupWorkers);

test('the container carries the workspace limits', async () => {
  const c = victim.info;
  assert.equal(c.HostConfig.PidsLimit, PIDS);
  assert.equal(c.HostConfig.StorageOpt?.size, `${DISK_MB}M`);
});

test('a fork bomb stops at the pids limit; the neighbour keeps answering', async () => {
  const bomb = forkBomb();
  const out = await envdRun(victim, bomb);
  const [n, ...why] = out.stdout.trim().split(' ');
  assert.ok(Number(n) > 10 && Number(n) < PIDS, `forked ${n} before: ${why.join(' ')}`);
  assert.match(why.join(' '), /Resource temporarily unavailable/);
  assert.equal((await envdRun(neighbour, 'echo alive')).stdout.trim(), 'alive');
  assert.equal((await envdRun(victim, 'echo still')).stdout.trim(), 'still', 'the sandbox itself recovers');
});

test('filling the disk stops at the sandbox limit; the neighbour can still write', async () => {
  const fill = await envdRun(victim, `dd if=/dev/zero of=/home/user/fill bs=1M count=${DISK_MB * 3} 2>&1 | tail -4; stat -c %s /home/user/fill`);
  assert.match(fill.stdout, /Disk quota exceeded|No space left/);
  const written = Number(fill.stdout.trim().split('\n').pop());
  assert.ok(written <= DISK_MB * 1048576 && written > DISK_MB * 1048576 / 2, `wrote ${written} bytes`);
  const other = await envdRun(neighbour, 'dd if=/dev/zero of=/home/user/f bs=1M count=50 2>&1 | tail -1');
  assert.match(other.stdout, /52428800 bytes/);
  assert.equal((await inspect(`corral-${victim.info.Config.Labels['corral.sandbox']}-${w.id}`)).State.Running, true);
});
