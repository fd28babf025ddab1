// workerd's line for a create that ran (workerd/apply.c log_running): when
// the control plane queued it (epoch ms), how long its delivery took, how
// long it waited on the worker, and each of the worker's phases, in ms.
// null for any other line.
const LINE = new RegExp('^create \\((\\w+)\\) -> running; queued at (\\d+), here (-?\\d+) ms later, '
  + 'waited here (\\d+) ms, then prepared (\\d+), warm pool (\\d+)( \\(claimed\\))?, network (\\d+), '
  + 'container (\\d+), start (\\d+), envd (\\d+) ms$');

export function createHops(msg) {
  const m = LINE.exec(msg);
  if (!m) return null;
  const n = (i) => Number(m[i]);
  return {
    runtime: m[1], queuedAt: n(2), delivery: n(3), waited: n(4), prepared: n(5), warmPool: n(6),
    claimed: Boolean(m[7]), network: n(8), container: n(9), start: n(10), envd: n(11),
  };
}
