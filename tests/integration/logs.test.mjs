// Structured logs (decision 0046): corral-api and corral-sched write one JSON
// object per line with the context of what it is about, and never a secret.
// The test drives real requests through nginx (creates on a test worker that
// speaks the real handshake/heartbeat API, bad requests, a forged key, a
// wrong worker secret), then reads every line of every corral-api and
// corral-sched log file of the stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { api, assertError, corralctl, eventually, keyParts, newWorkspace, RUN } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const A = newWorkspace();
const joinToken = corralctl('join-token', 'create', '--workspace', A.id).token;
const w = new TestWorker(joinToken, { slots: 20 });
let enrolment;
before(async () => { enrolment = await w.handshake(); w.start(); });
after(async () => w.stop());

const LOGS = readdirSync(`${RUN}/log`).filter((f) => /^(api-\d+|sched(-\d+)?)\.log$/.test(f));
const secrets = new Map(); // what it is -> the secret text
const keep = (what, value) => { assert.ok(value && value.length >= 8, `${what}: a secret to look for`); secrets.set(what, value); };

// Every line of every log, parsed; a line that is not a JSON object fails here.
function lines() {
  assert.ok(LOGS.some((f) => f.startsWith('api-')) && LOGS.some((f) => f.startsWith('sched')),
    `corral-api and corral-sched logs in ${RUN}/log (found: ${LOGS.join(', ')})`);
  const out = [];
  for (const f of LOGS) {
    for (const text of readFileSync(`${RUN}/log/${f}`, 'utf8').split('\n')) {
      if (text === '') continue;
      let o;
      try { o = JSON.parse(text); } catch { assert.fail(`${f}: not JSON: ${text}`); }
      assert.equal(typeof o, 'object', `${f}: not an object: ${text}`);
      out.push({ ...o, file: f });
    }
  }
  return out;
}

const rid = (r) => {
  const id = r.headers.get('x-request-id');
  assert.match(id ?? '', /^[0-9a-f]{32}$/, 'nginx answers with its request id');
  return id;
};

let sbTimeout, sbKilled, createRid, badRid, forgedRid;

test('drive requests: creates, a timeout, a kill, bad input, wrong credentials', async () => {
  keep('owner key', A.owner);
  keep('member key', A.member);
  keep('member key secret', keyParts(A.member).secret);
  keep('join token', joinToken);
  keep('join token secret', joinToken.split('_').at(-1));
  keep('worker secret', enrolment.worker_secret);
  keep('worker data key', enrolment.data_key);
  keep('gateway secret', readFileSync(`${RUN}/gateway-secret`, 'utf8').trim());
  keep('server secret', readFileSync(`${RUN}/secret`, 'utf8').trim());

  const envValue = `env-value-${Math.random().toString(16).slice(2)}`;
  keep('env var value', envValue);
  let r = await api('POST', '/v2/sandboxes', { key: A.member,
    body: { templateID: 'base', timeout: 300, envVars: { DB_PASSWORD: envValue }, network: { allowPublicTraffic: false } } });
  assert.equal(r.status, 201, r.raw);
  createRid = rid(r);
  sbTimeout = r.body.sandboxID;
  keep('envd access token', r.body.envdAccessToken);
  keep('traffic access token', r.body.trafficAccessToken);
  assert.equal(w.running.get(sbTimeout).env.DB_PASSWORD, envValue, 'the worker got the env var');

  r = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'base', env: { TOKEN: `${envValue}-2` } } });
  assert.equal(r.status, 201, r.raw);
  sbKilled = r.body.sandbox_id;
  keep('native envd access token', r.body.envd_access_token);
  keep('second env var value', `${envValue}-2`);
  assert.equal((await api('DELETE', `/v1/sandboxes/${sbKilled}`, { key: A.member })).status, 204);

  // Bad input, with a would-be secret in it: 400, and the value is not logged.
  r = await api('POST', '/v2/sandboxes', { key: A.member, body: { templateID: 'base', envVars: { 'A B': `${envValue}-bad` } } });
  assertError(r, 400, /^envVars/);
  badRid = rid(r);
  keep('refused env var value', `${envValue}-bad`);
  // Malformed JSON (an unquoted value): jansson's message quotes the body near
  // the fault; the client sees it, the log does not.
  const word = `unq${[...Array(12)].map(() => 'abcdefghijklmnop'[Math.floor(Math.random() * 16)]).join('')}`;
  r = await api('POST', '/v2/sandboxes', { key: A.member, rawBody: `{"envVars":{"K":${word}}}`,
    headers: { 'Content-Type': 'application/json' } });
  assert.match(assertError(r, 400, /^malformed JSON/), new RegExp(`near '${word}'`), 'the client sees where its body broke');
  keep('malformed body as quoted to its client', word);

  const k = await api('POST', '/v1/keys', { key: A.owner, body: { role: 'member' } });
  assert.equal(k.status, 201, k.raw);
  keep('minted key', k.body.key);
  const forged = A.member.replace(/.{6}$/, 'abcdef');
  r = await api('GET', '/v1/sandboxes', { key: forged });
  assertError(r, 401);
  forgedRid = rid(r);
  keep('forged key secret', keyParts(forged).secret);

  const wrong = 'f'.repeat(48);
  r = await api('POST', '/v1/worker/heartbeat', { body: {},
    headers: { Authorization: `Bearer ${joinToken}`, 'X-Worker-Id': w.id, 'X-Worker-Secret': wrong } });
  assertError(r, 403);
  keep('wrong worker secret', wrong);

  // Timeout 0: corral-sched kills it on its next sweep.
  r = await api('POST', `/sandboxes/${sbTimeout}/timeout`, { key: A.member, body: { timeout: 0 } });
  assert.equal(r.status, 204, r.raw);
  await eventually(async () => (await api('GET', `/v1/sandboxes/${sbTimeout}`, { key: A.member })).status === 404,
    { what: 'the timed-out sandbox to be gone' });
  await eventually(() => !w.running.has(sbTimeout) && !w.running.has(sbKilled), { what: 'the worker to get both kills' });
});

test('every line of corral-api and corral-sched is a JSON object with time, level, service and msg', () => {
  const all = lines();
  assert.ok(all.length >= 10, `lines logged: ${all.length}`);
  for (const l of all) {
    assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `time of ${JSON.stringify(l)}`);
    assert.ok(['info', 'warn', 'error'].includes(l.level), `level of ${JSON.stringify(l)}`);
    assert.equal(l.service, l.file.startsWith('api-') ? 'corral-api' : 'corral-sched');
    assert.equal(typeof l.msg, 'string');
    assert.equal(typeof l.pid, 'number');
    for (const f of ['request_id', 'workspace', 'sandbox', 'worker', 'tier'])
      assert.ok(!(f in l) || (typeof l[f] === 'string' && l[f] !== ''), `${f} absent or set: ${JSON.stringify(l)}`);
  }
  assert.ok(all.some((l) => l.service === 'corral-api' && /^listening on/.test(l.msg)), 'corral-api said it listens');
  assert.ok(all.some((l) => l.service === 'corral-sched' && /^sweeping every/.test(l.msg)), 'corral-sched said it sweeps');
});

test("a request's lines carry its request id and, once authenticated, its workspace", () => {
  const all = lines();
  const of = (id) => all.filter((l) => l.request_id === id);
  const create = of(createRid);
  assert.ok(create.length >= 2, `the create's lines: ${JSON.stringify(create)}`);
  for (const l of create) {
    assert.equal(l.workspace, A.id);
    assert.equal(l.sandbox, sbTimeout);
  }
  assert.ok(create.some((l) => /^POST \/v2\/sandboxes -> 201/.test(l.msg)), 'the answer is logged');
  const bad = of(badRid);
  assert.equal(bad.length, 1, JSON.stringify(bad));
  assert.equal(bad[0].workspace, A.id);
  assert.match(bad[0].msg, /^POST \/v2\/sandboxes -> 400 \(\d+ ms\): envVars/);
  const forged = of(forgedRid);
  assert.equal(forged.length, 1, JSON.stringify(forged));
  assert.match(forged[0].msg, /-> 401 .*invalid API key/);
  assert.equal(forged[0].workspace, undefined, 'an unverified credential names no workspace');
});

test("a sandbox's lines carry its id; worker lines their worker; corral-sched's its workspace", () => {
  const all = lines();
  const enrolled = all.filter((l) => l.worker === w.id && /^enrolled/.test(l.msg));
  assert.equal(enrolled.length, 1, 'the handshake is logged with the worker id');
  assert.equal(enrolled[0].workspace, A.id);
  for (const sb of [sbTimeout, sbKilled]) {
    const running = all.filter((l) => l.sandbox === sb && /^running/.test(l.msg));
    assert.equal(running.length, 1, `${sb}: its report`);
    assert.equal(running[0].worker, w.id);
    assert.equal(running[0].workspace, A.id);
  }
  assert.ok(all.some((l) => l.sandbox === sbKilled && /^DELETE \/v1\/sandboxes\/\S+ -> 204/.test(l.msg)), 'the kill');
  assert.ok(all.some((l) => l.sandbox === sbTimeout && /^POST \/sandboxes\/\S+\/timeout -> 204/.test(l.msg)), 'the timeout');
  const swept = all.filter((l) => l.service === 'corral-sched' && l.sandbox === sbTimeout);
  assert.equal(swept.length, 1, `corral-sched's kill: ${JSON.stringify(swept)}`);
  assert.equal(swept[0].msg, 'killed: timeout');
  assert.equal(swept[0].workspace, A.id);
});

test('no secret the test handled appears in any log file', () => {
  const files = readdirSync(`${RUN}/log`).filter((f) => /^(api-\d+|sched(-\d+)?)\.log$/.test(f));
  assert.ok(secrets.size >= 15, `secrets collected: ${secrets.size}`);
  for (const f of files) {
    const text = readFileSync(`${RUN}/log/${f}`, 'utf8');
    for (const [what, value] of secrets) assert.ok(!text.includes(value), `${f} holds the ${what}`);
  }
});
