// Redis stopped for 60 s and for 120 s under load, with a real workerd on the
// real dockerd (issue 34 point 1, decision 0070): both far longer than the
// suite's lease (tests/workerd/run.sh: 10 s). No running sandbox is lost,
// every one answers afterwards in the same container, workerd is never told
// 410 and kills nothing a client did not, and creates work again within a
// bounded wait of Redis's return (tests/workerd/outage.mjs says all it checks).
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from './helpers.mjs';
import { outageUnderLoad, outageWorker, LEASE_MS } from './outage.mjs';

// Async, so that the load goes on while stack.sh stops or starts Redis.
const stack = (...args) => promisify(execFile)(`${ROOT}conf/stack.sh`, args, { env: process.env });

const ctx = outageWorker('workerd-redis-outage.log');

for (const seconds of [60, 120]) {
  test(`Redis stopped for ${seconds} s under load (lease ${LEASE_MS} ms): no sandbox lost, every one answers, creates work again`,
    { timeout: (seconds + 300) * 1000 }, async () => {
      await outageUnderLoad({
        ws: ctx.A, worker: ctx.w, name: `stopped-${seconds}s`, holdMs: seconds * 1000,
        down: () => stack('stop-redis'),
        back: () => stack('start-redis'),
      });
    });
}
