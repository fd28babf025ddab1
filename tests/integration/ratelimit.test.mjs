// The per-key rate limit counts only verified credentials (issue 14 finding 3,
// decision 0028): nginx used to key its limit on the public part of a key
// (ck_<ws>_<id>_), so anyone could flood that prefix with a wrong secret and
// lock the real holder out with 429s. Now corral-api counts a request against
// a key only once its secret has been verified.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, assertError, newWorkspace, RUN } from '../lib/corral.mjs';

function confValue(name) {
  const m = readFileSync(`${RUN}/corral.conf`, 'utf8').match(new RegExp(`^${name} = (\\d+)$`, 'm'));
  assert.ok(m, `${name} missing from corral.conf`);
  return Number(m[1]);
}
const RATE = confValue('key_rate');
const BURST = confValue('key_burst');

// Sends GET /v1/workspace with `key`, 100 at a time, until `enough(sent, elapsedSeconds)`
// or a 15 s deadline. Returns every answer and the elapsed time.
async function flood(key, enough) {
  const start = Date.now();
  const results = [];
  const elapsed = () => (Date.now() - start) / 1000;
  while (!enough(results, elapsed())) {
    assert.ok(elapsed() < 15, `flood too slow: ${results.length} requests in 15 s`);
    results.push(...await Promise.all(Array.from({ length: 100 }, () => api('GET', '/v1/workspace', { key }))));
  }
  return { results, seconds: elapsed() };
}

test('a wrong secret under a real key id, far past the key\'s burst, costs the key nothing', async () => {
  const W = newWorkspace();
  const publicPart = W.member.slice(0, W.member.lastIndexOf('_') + 1);
  const forged = publicPart + 'f'.repeat(W.member.length - publicPart.length);
  assert.notEqual(forged, W.member);
  // Well past: twice the burst more than the bucket could refill meanwhile, so
  // a limit keyed on the public part would be empty when the real key calls.
  const { results, seconds } = await flood(forged, (r, s) => r.length >= 2 * BURST + RATE * s);
  assert.ok(results.length >= 2 * BURST + RATE * seconds);
  for (const r of results) assertError(r, 401, /invalid API key/);
  // Then the real key still has its whole burst: half of it at once all
  // answer 200 (a bucket the flood had emptied would refill 1 request per
  // 1/RATE s, far too slow for that).
  const real = [];
  for (let i = 0; i < BURST / 2; i += 100) {
    real.push(...await Promise.all(Array.from({ length: Math.min(100, BURST / 2 - i) },
      () => api('GET', '/v1/workspace', { key: W.member }))));
  }
  for (const r of real) assert.equal(r.status, 200, `the real key was locked out: ${r.raw}`);
});

test('the real key past its burst gets 429 with Retry-After; its workspace\'s other keys do not', async () => {
  const W = newWorkspace();
  const { results } = await flood(W.member, (r) => r.some((x) => x.status === 429));
  const limited = results.filter((r) => r.status === 429);
  assertError(limited[0], 429, /rate limit of this API key exceeded/);
  assert.match(limited[0].headers.get('retry-after'), /^[1-9][0-9]*$/);
  // at least the burst went through before the first refusal
  assert.ok(results.filter((r) => r.status === 200).length >= BURST,
    `only ${results.filter((r) => r.status === 200).length} answered before the limit`);
  const other = await api('GET', '/v1/workspace', { key: W.owner });
  assert.equal(other.status, 200, other.raw);
});
