// A warm sandbox's envd (decision 0082): before workerd claims it through
// POST /init with the init secret, it serves nothing but /health; the claim
// brings the access token, env vars and default user, once. Written as an
// attacker who reaches a warm envd would try it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { ENVD_BIN, run, startEnvd, unary } from './lib.mjs';

const SECRET = crypto.randomBytes(32).toString('hex');
const TOKEN = 'claimed-' + crypto.randomBytes(8).toString('hex');
let envd;
before(async () => {
  envd = await startEnvd({ extraEnv: { CORRAL_ENVD_INIT_TOKEN: SECRET }, extraArgs: ['-warm'] });
});
after(async () => { await envd?.stop(); });

const init = (body, secret = SECRET) => fetch(`${envd.base}/init`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...(secret ? { 'X-Corral-Init': secret } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

test('a warm envd will not start without -warm\'s secret, nor open with a secret but no -warm', () => {
  const none = spawnSync(ENVD_BIN, ['-warm', '-port', '1'], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /-warm needs \$CORRAL_ENVD_INIT_TOKEN/);
  const stray = spawnSync(ENVD_BIN, ['-port', '1'], { env: { CORRAL_ENVD_INIT_TOKEN: 'x' }, encoding: 'utf8' });
  assert.equal(stray.status, 2);
  assert.match(stray.stderr, /set without -warm/);
  const both = spawnSync(ENVD_BIN, ['-warm', '-port', '1'], {
    env: { CORRAL_ENVD_INIT_TOKEN: 'x', CORRAL_ENVD_ACCESS_TOKEN: 'y' }, encoding: 'utf8' });
  assert.equal(both.status, 2);
  assert.match(both.stderr, /access token from \/init/);
});

test('before the claim: health only; commands, files and envs are 503 with or without any token', async () => {
  assert.equal((await fetch(`${envd.base}/health`)).status, 204);
  for (const token of ['', SECRET, TOKEN]) {
    const r = await unary(envd, 'process.Process/List', {}, { token });
    assert.equal(r.status, 503, `List with token '${token}'`);
    assert.equal(r.body.message, 'sandbox not claimed');
  }
  assert.equal((await fetch(`${envd.base}/envs`)).status, 503);
  assert.equal((await fetch(`${envd.base}/files?path=/etc/passwd`)).status, 503);
  const environ = execFileSync('cat', [`/proc/${envd.child.pid}/environ`]).toString();
  assert.ok(!environ.includes(SECRET), 'the init secret is wiped from /proc/<envd>/environ');
});

test('a wrong or missing secret, and a bad body, change nothing', async () => {
  for (const s of [null, 'guess', SECRET.slice(0, -1), `${SECRET}x`]) {
    const r = await init({ accessToken: 'evil' }, s);
    assert.equal(r.status, 401, `secret ${s}`);
    assert.match((await r.json()).message, /X-Corral-Init/);
  }
  const bad = [
    ['[]', /JSON object/],
    ['{"accessToken": ""}', /accessToken/],
    ['{"accessToken": "a b"}', /accessToken/],
    ['{"envVars": {"1X": "v"}}', /not a variable name/],
    ['{"envVars": {"A=B": "v"}}', /not a variable name/],
    ['{"envVars": {"A": 5}}', /must be a string/],
    ['{"defaultUser": "../root"}', /defaultUser/],
    ['{"sandboxId": "x"}', /unknown field 'sandboxId'/],
  ];
  for (const [body, why] of bad) {
    const r = await init(body);
    assert.equal(r.status, 400, body);
    assert.match((await r.json()).message, why, body);
  }
  assert.equal((await unary(envd, 'process.Process/List', {}, { token: '' })).status, 503,
    'still unclaimed');
});

test('the claim: token, env vars and user apply to every process; a second claim is 409', async () => {
  const r = await init({ accessToken: TOKEN, envVars: { CLAIM_VAR: 'hello world', EMPTY: '' }, defaultUser: 'root' });
  assert.equal(r.status, 204, await r.text());
  assert.equal((await unary(envd, 'process.Process/List', {}, { token: '' })).status, 401);
  assert.equal((await unary(envd, 'process.Process/List', {}, { token: SECRET })).status, 401,
    'the init secret is no token');
  envd.token = TOKEN;
  const out = await run(envd, 'echo "[$CLAIM_VAR][${EMPTY-unset}] $(id -un)"; env');
  assert.match(out.stdout, /^\[hello world\]\[\] root$/m);
  assert.ok(!out.stdout.includes(SECRET) && !out.stdout.includes(TOKEN), 'no secret in a process\'s environment');
  const again = await init({ accessToken: 'mine-now' });
  assert.equal(again.status, 409);
  const stolen = await init({ accessToken: 'mine-now' }, 'anything');
  assert.equal(stolen.status, 409, 'nothing to guess once claimed');
  assert.equal((await unary(envd, 'process.Process/List', {}, { token: 'mine-now' })).status, 401);
});

test('an envd not started warm has no /init; a blanked secret (a snapshot\'s) leaves it cold', async () => {
  const cold = await startEnvd({ token: 'cold-token', extraEnv: { CORRAL_ENVD_INIT_TOKEN: '' } });
  try {
    const r = await fetch(`${cold.base}/init`, { method: 'POST', headers: { 'X-Corral-Init': 'x' }, body: '{}' });
    assert.equal(r.status, 404);
    const out = await run(cold, 'echo "[${CORRAL_ENVD_INIT_TOKEN-unset}]"');
    assert.equal(out.stdout.trim(), '[unset]');
  } finally {
    await cold.stop();
  }
});
