// Creates one sandbox through a test worker that stays enrolled for the bench;
// prints its id, then keeps heartbeating until killed.
import { api, corralctl } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const ws = process.argv[2];
const key = process.argv[3];
const w = new TestWorker(corralctl('join-token', 'create', '--workspace', ws).token);
await w.handshake();
w.start();
const r = await api('POST', '/v1/sandboxes', { key, body: { template: 'base', timeout: 3600 } });
if (r.status !== 201) { console.error(r.raw); process.exit(1); }
console.log(r.body.sandbox_id);
