// Waiting for a condition with a deadline instead of a fixed sleep before an
// assertion: as fast as the condition when it comes, bounded when it never
// does. A fixed sleep is still right where a test measures time itself (a
// timeout expires, a cache's TTL passes, nothing must happen for a while) or
// paces what it sends; those stay sleeps, each under a `// sleep:` comment
// saying why (tests/lint/sleeps.sh checks it).
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

// As until, but a timeout throws, naming what was waited for and fn's last value.
export async function eventually(fn, { timeout = 15000, every = 100, what = 'condition' } = {}) {
  let last;
  const v = await until(async () => (last = await fn()), { timeoutMs: timeout, everyMs: every });
  if (v) return v;
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
