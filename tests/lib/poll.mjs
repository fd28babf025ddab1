// Waiting for a condition with a deadline instead of a fixed sleep before an
// assertion: as fast as the condition when it comes, bounded when it never
// does. A fixed sleep is still right for a window in which something must NOT
// happen, or for pacing; those stay sleeps.
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Calls fn (sync or async) until it returns a truthy value, and returns that
// value: every everyMs, for at most timeoutMs (fn runs once more at the
// deadline). On timeout it returns fn's last, falsy, value rather than
// throwing, so the assertion after it fails with its own message.
export async function until(fn, { timeoutMs = 10000, everyMs = 50 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v || Date.now() >= end) return v;
    await sleep(Math.min(everyMs, Math.max(0, end - Date.now())));
  }
}
