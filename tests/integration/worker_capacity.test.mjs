// GET /v1/workers shows free capacity (issue 9 point 8): per own worker its
// free slots, cpu_cores and memory_mb, and for the unscoped fleet the totals
// only; both shrink by exactly what a create holds and grow back at its end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, newWorkspace, eventually } from '../lib/corral.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
const worker = (ws, opts) => enrolWorker(workers, ws, opts);
after(async () => { await Promise.all(workers.map((w) => w.stop())); });

const list = async (ws) => (await api('GET', '/v1/workers', { key: ws.member })).body;
const create = (ws, body) => api('POST', '/v1/sandboxes', { key: ws.member, body: { template: 'base', ...body } });
const free = (v) => [v.free_slots, v.free_cpu_cores, v.free_memory_mb];

async function retireFleet(ws) {
  await Promise.all(workers.filter((w) => w.workspace === '' && !w.stopped).map((w) => w.stop()));
  await eventually(async () => (await list(ws)).fleet.workers === 0, { what: 'the fleet to be empty' });
}

test('own worker: free slots, cpu and memory less what its sandbox holds, back after the kill', async () => {
  const A = newWorkspace();
  const w = await worker(A, { slots: 4, cpu: 3, memory: 2048 });
  const view = async () => (await list(A)).workers.find((x) => x.worker_id === w.id);
  assert.deepEqual(free(await view()), [4, 3, 2048]);
  const r = await create(A, { cpu_cores: 2, memory_mb: 1024 });
  assert.equal(r.status, 201, r.raw);
  assert.deepEqual(free(await view()), [3, 1, 1024]);
  assert.equal((await view()).used_slots, 1);
  assert.equal((await api('DELETE', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member })).status, 204);
  await eventually(async () => (await view()).free_slots === 4, { what: 'the slot given back' });
  assert.deepEqual(free(await view()), [4, 3, 2048]);
});

test('the fleet: totals of its live workers\' free capacity, no per-machine detail', async () => {
  const A = newWorkspace();
  await retireFleet(A);
  await worker(null, { slots: 4, cpu: 8, memory: 4096 });
  await worker(null, { slots: 6, cpu: 2.5, memory: 1000 });
  const fleet = async () => (await list(A)).fleet;
  assert.deepEqual(await fleet(), { workers: 2, free_slots: 10, free_cpu_cores: 10.5, free_memory_mb: 5096 });
  assert.deepEqual((await list(A)).workers, [], 'no fleet worker is listed to a tenant');
  const r = await create(A, { cpu_cores: 0.5, memory_mb: 256 });
  assert.equal(r.status, 201, r.raw);
  assert.deepEqual(await fleet(), { workers: 2, free_slots: 9, free_cpu_cores: 10, free_memory_mb: 4840 });
  assert.equal((await api('DELETE', `/v1/sandboxes/${r.body.sandbox_id}`, { key: A.member })).status, 204);
  await eventually(async () => (await fleet()).free_slots === 10, { what: 'the fleet slot given back' });
  assert.deepEqual(await fleet(), { workers: 2, free_slots: 10, free_cpu_cores: 10.5, free_memory_mb: 5096 });
  await retireFleet(A);
});
