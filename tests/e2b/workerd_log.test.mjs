// workerd's log through a sandbox's whole life (issue 11, decision 0046): one
// JSON object a line, with time, level, service, pid and msg; the lines about
// a sandbox carry its id, its worker and its tier as fields; and none of the
// secrets that passed through workerd appears anywhere in it (the envd and
// traffic tokens, an env var's value, the join token, the worker secret).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { until } from '../lib/poll.mjs';
import { Sandbox, MODE } from './lib.mjs';
import { SDK } from './sdk.mjs';
import { createHops } from '../lib/create_hops.mjs';

const RUN = process.env.CORRAL_RUN;
// The stack's workers (tests/e2b/run.sh runs two, workerd and workerd-2):
// the sandbox lands on either, and no secret of either may be logged.
const WORKERS = ['workerd', 'workerd-2'].filter((n) => existsSync(`${RUN}/${n}.conf`));
const logs = () => WORKERS.map((n) => readFileSync(`${RUN}/log/${n}.log`, 'utf8')).join('\n');

test(`[${MODE} ${SDK}] workerd logs JSON lines with the sandbox's ids, and never a secret`, async () => {
  assert.ok(RUN, 'CORRAL_RUN (the stack of tests/e2b/run.sh) must be set');
  const value = `v-${randomBytes(12).toString('hex')}`;
  const sbx = await Sandbox.create('base', { timeoutMs: 60_000, envs: { CORRAL_TEST_SECRET: value },
    network: { allowPublicTraffic: false } });
  const id = sbx.sandboxId;
  try {
    assert.equal((await sbx.commands.run('echo "$CORRAL_TEST_SECRET"')).stdout.trim(), value);
    assert.equal(await sbx.pause(), true);
    await Sandbox.connect(id);
  } finally {
    await sbx.kill();
  }
  const killed = await until(() => logs().split('\n')
    .some((t) => t.includes(id) && t.includes('"msg":"killed"')), { timeoutMs: 15_000 });
  assert.ok(killed, 'the kill is logged');
  const text = logs();
  const lines = text.split('\n').filter(Boolean).map((t) => {
    try { return JSON.parse(t); } catch { assert.fail(`not a JSON object: ${t.slice(0, 200)}`); }
    return null;
  });
  for (const l of lines) {
    assert.equal(l.service, 'workerd');
    assert.ok(['info', 'warn', 'error'].includes(l.level), JSON.stringify(l));
    assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(typeof l.pid, 'number');
    assert.equal(typeof l.msg, 'string');
  }
  const mine = lines.filter((l) => l.sandbox === id);
  const msgs = mine.map((l) => l.msg);
  assert.ok(msgs.some((x) => createHops(x)), `no create line with its hops about the sandbox: ${msgs.join(' | ')}`);
  for (const m of [/^pause -> paused$/, /^resume -> running$/, /^killed$/]) {
    assert.ok(msgs.some((x) => m.test(x)), `no line ${m} about the sandbox: ${msgs.join(' | ')}`);
  }
  for (const l of mine) {
    assert.match(l.worker ?? '', /^[0-9a-f]{16}$/, `a line about the sandbox names its worker: ${JSON.stringify(l)}`);
    assert.equal(l.tier, 'CONTAINER', `a line about the sandbox names its tier: ${JSON.stringify(l)}`);
    assert.ok(!l.msg.includes(id), 'the id is a field, not spelt in the message');
  }
  const secrets = { 'envd token': sbx.envdAccessToken, 'traffic token': sbx.trafficAccessToken, 'env value': value };
  for (const n of WORKERS) {
    secrets[`${n}'s secret`] = readFileSync(`${RUN}/${n}-state/worker`, 'utf8').match(/worker_secret = (\S+)/)?.[1];
    // The join token's secret part: its id may be logged, as credentials are by id.
    secrets[`${n}'s join token secret`] = readFileSync(`${RUN}/${n}.token`, 'utf8').trim().split('_').pop();
  }
  for (const [what, s] of Object.entries(secrets)) {
    assert.ok(s && s.length >= 16, `the test holds the ${what}`);
    assert.ok(!text.includes(s), `the ${what} is in workerd's log`);
  }
});
