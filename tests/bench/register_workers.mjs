// Enrols N workers through the real handshake route (bench setup).
import { api, corralctl } from '../lib/corral.mjs';
import { STACK_DATA_ADDR } from '../lib/test_worker.mjs'; // listed by the stack (decision 0061)

const [ws, n] = [process.argv[2], Number(process.argv[3])];
const tokens = [corralctl('join-token', 'create', '--workspace', ws).token, corralctl('join-token', 'create').token];
for (let i = 0; i < n; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, k) => api('POST', '/v1/worker/handshake', {
    headers: { Authorization: `Bearer ${tokens[(i + k) % 2]}` },
    body: { hostname: `bench-${i + k}`, runtimes: [{ name: 'runc', tier: 'CONTAINER' }], egress: false,
      cpu_cores: 16, memory_mb: 32768, slots: 20, data_addr: STACK_DATA_ADDR, templates: ['base'] },
  }).then((r) => { if (r.status !== 200) throw new Error(r.raw); })));
}
console.log(`registered ${n} workers`);
