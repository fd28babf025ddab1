// The envd access token of a secure sandbox: headers, signed URLs, secrecy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { run, startEnvd, unary } from './lib.mjs';

const TOKEN = 'test-envd-token-' + crypto.randomBytes(8).toString('hex');
let envd;
before(async () => { envd = await startEnvd({ token: TOKEN }); });
after(async () => { await envd?.stop(); });

// The SDK's signature: v1_ + base64(sha256("path:op:user:token[:exp]")) without padding.
function sign(path, op, user, exp) {
  const raw = exp === undefined ? `${path}:${op}:${user}:${TOKEN}` : `${path}:${op}:${user}:${TOKEN}:${exp}`;
  return 'v1_' + crypto.createHash('sha256').update(raw).digest('base64').replace(/=+$/, '');
}

test('health needs no token', async () => {
  assert.equal((await fetch(`${envd.base}/health`)).status, 204);
});

test('RPCs need X-Access-Token', async () => {
  let r = await unary(envd, 'process.Process/List', {}, { token: '' });
  assert.equal(r.status, 401);
  assert.equal(r.body.code, 'unauthenticated');
  r = await unary(envd, 'process.Process/List', {}, { token: 'wrong' });
  assert.equal(r.status, 401);
  r = await unary(envd, 'process.Process/List', {});
  assert.equal(r.status, 200);
  const res = await fetch(`${envd.base}/envs`);
  assert.equal(res.status, 401);
});

test('files: header token, signed URLs, expiry, wrong signatures', async () => {
  const q = (p) => `${envd.base}/files?${new URLSearchParams(p)}`;
  let res = await fetch(q({ path: 'a.txt' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'secret',
  });
  assert.equal(res.status, 401);
  res = await fetch(q({ path: 'a.txt' }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream', 'X-Access-Token': TOKEN }, body: 'secret',
  });
  assert.equal(res.status, 200);
  // signed read without expiry, default user ("" in the signature)
  res = await fetch(q({ path: 'a.txt', signature: sign('a.txt', 'read', '') }));
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'secret');
  // signed write with expiry and explicit user
  const exp = Math.floor(Date.now() / 1000) + 60;
  res = await fetch(q({ path: 'b.txt', username: 'user', signature: sign('b.txt', 'write', 'user', exp), signature_expiration: exp }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'b',
  });
  assert.equal(res.status, 200);
  // a read signature does not allow writing
  res = await fetch(q({ path: 'b.txt', signature: sign('b.txt', 'read', '') }), {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: 'x',
  });
  assert.equal(res.status, 401);
  // expired
  const old = Math.floor(Date.now() / 1000) - 10;
  res = await fetch(q({ path: 'a.txt', signature: sign('a.txt', 'read', '', old), signature_expiration: old }));
  assert.equal(res.status, 401);
  assert.match((await res.json()).message, /expired/);
  // signature for another path
  res = await fetch(q({ path: 'a.txt', signature: sign('b.txt', 'read', '') }));
  assert.equal(res.status, 401);
  // wrong header token wins over a good signature
  res = await fetch(q({ path: 'a.txt', signature: sign('a.txt', 'read', '') }), { headers: { 'X-Access-Token': 'nope' } });
  assert.equal(res.status, 401);
});

test('processes never see the token', async () => {
  const env = await run(envd, 'env', { user: 'root' });
  assert.ok(!env.stdout.includes('CORRAL_ENVD_ACCESS_TOKEN'), 'variable leaked into a process');
  // envd's original environment block (what /proc/<envd>/environ shows) is wiped too
  const r = await run(envd, 'cat /proc/$PPID/environ | tr "\\0" "\\n"', { user: 'root' });
  assert.ok(!r.stdout.includes(TOKEN), 'token readable by a process');
  const envdEnviron = execFileSync('cat', [`/proc/${envd.child.pid}/environ`]).toString();
  assert.ok(!envdEnviron.includes(TOKEN), 'token still readable in /proc/<envd>/environ');
});

test('token from a file works the same', async () => {
  const other = await startEnvd({ tokenFile: 'file-token' });
  try {
    assert.equal((await unary(other, 'process.Process/List', {}, { token: '' })).status, 401);
    assert.equal((await unary(other, 'process.Process/List', {}, { token: 'file-token' })).status, 200);
  } finally {
    await other.stop();
  }
});

// Signed URLs' expiry (decision 0035). Each refused form is signed correctly
// over its exact text, so the refusal is the expiry's, not the signature's.
test('signed URLs: the expiry must be decimal seconds, not past, at most 7 days ahead', async () => {
  const res = await fetch(`${envd.base}/files?${new URLSearchParams({ path: 'exp.txt' })}`, {
    method: 'POST', headers: { 'Content-Type': 'application/octet-stream', 'X-Access-Token': TOKEN }, body: 'e',
  });
  assert.equal(res.status, 200);
  const get = (exp) => {
    const p = { path: 'exp.txt', signature: sign('exp.txt', 'read', '', exp) };
    if (exp !== undefined) p.signature_expiration = exp;
    return fetch(`${envd.base}/files?${new URLSearchParams(p)}`);
  };
  const now = Math.floor(Date.now() / 1000);
  const refused = [
    ['9999999999abc', /Unix time in seconds/],
    ['', /Unix time in seconds/],
    [`+${now + 60}`, /Unix time in seconds/],
    [`-${now + 60}`, /Unix time in seconds/],
    [` ${now + 60}`, /Unix time in seconds/],
    [`${now + 60} `, /Unix time in seconds/],
    ['0x7fffffff', /Unix time in seconds/],
    ['99999999999999999999', /Unix time in seconds/], // past LLONG_MAX
    ['9'.repeat(40), /Unix time in seconds/], // longer than envd reads
    [String(now - 10), /already expired/],
    [String(now + 8 * 86400), /more than 7 days ahead/],
    [String(Number.MAX_SAFE_INTEGER), /more than 7 days ahead/],
  ];
  for (const [exp, why] of refused) {
    const r = await get(exp);
    assert.equal(r.status, 401, `expiration ${JSON.stringify(exp)} was accepted`);
    const body = await r.json();
    assert.equal(body.code, 401);
    assert.match(body.message, why, `expiration ${JSON.stringify(exp)}`);
  }
  // Accepted: none at all (E2B's SDK default), a minute ahead, exactly 7 days ahead.
  for (const exp of [undefined, String(now + 60), String(now + 7 * 86400)]) {
    const r = await get(exp);
    assert.equal(r.status, 200, `expiration ${exp}: ${await r.clone().text()}`);
    assert.equal(await r.text(), 'e');
  }
});

test('signed URLs: -signature-expiration required refuses a URL without one', async () => {
  const strict = await startEnvd({ token: TOKEN, extraArgs: ['-signature-expiration', 'required'] });
  try {
    const put = await fetch(`${strict.base}/files?${new URLSearchParams({ path: 'r.txt' })}`, {
      method: 'POST', headers: { 'Content-Type': 'application/octet-stream', 'X-Access-Token': TOKEN }, body: 'r',
    });
    assert.equal(put.status, 200, 'the header token still works');
    let r = await fetch(`${strict.base}/files?${new URLSearchParams({ path: 'r.txt', signature: sign('r.txt', 'read', '') })}`);
    assert.equal(r.status, 401);
    assert.match((await r.json()).message, /signature_expiration is required/);
    const exp = String(Math.floor(Date.now() / 1000) + 60);
    r = await fetch(`${strict.base}/files?${new URLSearchParams({ path: 'r.txt', signature: sign('r.txt', 'read', '', exp), signature_expiration: exp })}`);
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'r');
  } finally {
    await strict.stop();
  }
  await assert.rejects(startEnvd({ token: TOKEN, extraArgs: ['-signature-expiration', 'sometimes'] }),
    /expected required or optional/);
});
