// Redis stopped for 60 s and for 120 s under load, with a real workerd on the
// real dockerd (issue 34 point 1, decision 0070): both far longer than the
// suite's lease (tests/workerd/run.sh: 10 s). No running sandbox is lost,
// every one answers afterwards in the same container, workerd is never told
// 410 and kills nothing a client did not, and creates work again within a
// bounded wait of Redis's return (tests/workerd/outage.mjs says all it checks).
import { test, before, after } from 'node:test';
import { execFile } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { newWorkspace, setLimit } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, ROOT } from './helpers.mjs';
import { outageUnderLoad, LEASE_MS } from './outage.mjs';

// Async, so that the load goes on while stack.sh stops or starts Redis.
const stack = (...args) => promisify(execFile)(`${ROOT}conf/stack.sh`, args, { env: process.env });

let A, w;
before(async () => {
  A = newWorkspace();
  await setLimit(A, 30);
  w = await stackWorker(A, { extra: 'cpu_cores = 64\nmemory_mb = 65536\nslots = 16' });
});
// workerd's log stays with the stack's (kept when the suite fails).
after(async () => {
  if (w) {
    copyFileSync(w.files.log, `${process.env.CORRAL_RUN}/log/workerd-redis-outage.log`);
    console.log(`# workerd: exit ${w.wd.proc.exitCode} signal ${w.wd.proc.signalCode}`);
  }
  await cleanupWorkers();
});

for (const seconds of [60, 120]) {
  test(`Redis stopped for ${seconds} s under load (lease ${LEASE_MS} ms): no sandbox lost, every one answers, creates work again`,
    { timeout: (seconds + 300) * 1000 }, async () => {
      await outageUnderLoad({
        ws: A, worker: w, name: `stopped-${seconds}s`, holdMs: seconds * 1000,
        down: () => stack('stop-redis'),
        back: () => stack('start-redis'),
      });
    });
}
