// The permission gate in strict mode (decision 0053): envd started with the
// gate's flags against a temporary HOME holding a fake ~/.ssh/id_rsa and a
// work tree. Work-tree operations succeed; everything outside is denied
// without a question and changes nothing; escapes an attacker would try (a
// symlink out, "..", a hard link, a rename into a denied path, a command that
// reads the key) are denied; every decision is in audit.jsonl, in order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { decisions, fsCall, gateFixture, getFile, putFile, startCmd, startGated } from './gate_lib.mjs';

let fx, envd;
const expected = [];
const expect = (op, subject, branch, answer) => expected.push([op, subject, branch, answer, 'gate']);

before(async () => {
  fx = gateFixture();
  envd = await startGated(fx, 'strict', 'sbx-strict');
});
after(async () => { await envd?.stop(); fx?.cleanup(); });

async function denied403(res, branch) {
  assert.equal(res.status, 403);
  const body = await res.json();
  assert.equal(body.code, 403);
  assert.match(body.message, new RegExp(`permission denied by the gate \\(${branch}, gate\\)`));
}

function deniedRpc(r, branch) {
  assert.equal(r.status, 403);
  assert.equal(r.body.code, 'permission_denied');
  assert.match(r.body.message, new RegExp(`\\(${branch}, gate\\)`));
}

test('operations inside the work tree are allowed', async () => {
  const a = path.join(fx.work, 'a.txt');
  let res = await putFile(envd, a, 'hello');
  assert.equal(res.status, 200);
  expect('write', a, 'worktree', 'allow');
  res = await getFile(envd, a);
  assert.equal(await res.text(), 'hello');
  expect('read', a, 'worktree', 'allow');
  let r = await fsCall(envd, 'Stat', { path: a });
  assert.equal(r.body.entry.size, '5');
  expect('stat', a, 'worktree', 'allow');
  const d = path.join(fx.work, 'd');
  r = await fsCall(envd, 'MakeDir', { path: d });
  assert.equal(r.status, 200);
  expect('write', d, 'worktree', 'allow');
  r = await fsCall(envd, 'ListDir', { path: fx.work, depth: 1 });
  assert.deepEqual(r.body.entries.map((e) => e.name).sort(), ['a.txt', 'd', 'secrets.env']);
  expect('list', fx.work, 'worktree', 'allow');
  const b = path.join(d, 'b.txt');
  r = await fsCall(envd, 'Move', { source: a, destination: b });
  assert.equal(r.status, 200);
  expect('move', a, 'worktree', 'allow');
  expect('move', b, 'worktree', 'allow');
  const ls = await startCmd(envd, ['/bin/ls', d], fx.work);
  assert.equal(ls.code, null, ls.message);
  assert.equal(ls.stdout, 'b.txt\n');
  expect('exec', `/bin/ls ${d}`, 'worktree', 'allow');
  r = await fsCall(envd, 'Remove', { path: d });
  assert.equal(r.status, 200);
  assert.ok(!fs.existsSync(d));
  expect('remove', d, 'worktree', 'allow');
});

test('strict mode denies outside the work tree without asking, and changes nothing', async () => {
  const o = path.join(fx.outside, 'o.txt');
  fs.writeFileSync(o, 'outside');
  await denied403(await getFile(envd, o), 'ask');
  expect('read', o, 'ask', 'deny');
  const n = path.join(fx.outside, 'new.txt');
  await denied403(await putFile(envd, n, 'x'), 'ask');
  assert.ok(!fs.existsSync(n));
  expect('write', n, 'ask', 'deny');
  deniedRpc(await fsCall(envd, 'Stat', { path: o }), 'ask');
  expect('stat', o, 'ask', 'deny');
  const nd = path.join(fx.outside, 'nd');
  deniedRpc(await fsCall(envd, 'MakeDir', { path: nd }), 'ask');
  assert.ok(!fs.existsSync(nd));
  expect('write', nd, 'ask', 'deny');
  deniedRpc(await fsCall(envd, 'Remove', { path: o }), 'ask');
  assert.equal(fs.readFileSync(o, 'utf8'), 'outside');
  expect('remove', o, 'ask', 'deny');
  const m = path.join(fx.work, 'm.txt');
  fs.writeFileSync(m, 'm');
  deniedRpc(await fsCall(envd, 'Move', { source: m, destination: path.join(fx.outside, 'm.txt') }), 'ask');
  assert.ok(fs.existsSync(m) && !fs.existsSync(path.join(fx.outside, 'm.txt')));
  expect('move', m, 'worktree', 'allow');
  expect('move', path.join(fx.outside, 'm.txt'), 'ask', 'deny');
  const ls = await startCmd(envd, ['/bin/ls', fx.outside], fx.work);
  assert.equal(ls.started, false);
  assert.equal(ls.code, 'permission_denied');
  expect('exec', `/bin/ls ${fx.outside}`, 'ask', 'deny');
});

test('escapes an attacker would try are denied', async () => {
  // a symlink in the work tree pointing at the key
  const link = path.join(fx.work, 'escape');
  fs.symlinkSync(fx.key, link);
  await denied403(await getFile(envd, link), 'hardlock');
  expect('read', fx.key, 'hardlock', 'deny');
  // ".." out of the work tree
  await denied403(await getFile(envd, `${fx.work}/../home/.ssh/id_rsa`), 'hardlock');
  expect('read', fx.key, 'hardlock', 'deny');
  // a hard link made outside the gate: another name of the same file
  const hard = path.join(fx.work, 'innocent.txt');
  fs.linkSync(fx.key, hard);
  const res = await getFile(envd, hard);
  assert.ok(!(await res.clone().text()).includes('FAKE-PRIVATE-KEY'));
  await denied403(res, 'hardlock');
  expect('read', fx.key, 'hardlock', 'deny');
  // a rename into the policy's denied directory, into ~/.ssh, and out of it
  const r1 = path.join(fx.work, 'r.txt');
  fs.writeFileSync(r1, 'r');
  deniedRpc(await fsCall(envd, 'Move', { source: r1, destination: path.join(fx.denied, 'r.txt') }), 'policy');
  expect('move', r1, 'worktree', 'allow');
  expect('move', path.join(fx.denied, 'r.txt'), 'policy', 'deny');
  const ak = path.join(fx.home, '.ssh/authorized_keys');
  deniedRpc(await fsCall(envd, 'Move', { source: r1, destination: ak }), 'hardlock');
  expect('move', r1, 'worktree', 'allow');
  expect('move', ak, 'hardlock', 'deny');
  assert.ok(fs.existsSync(r1) && !fs.existsSync(path.join(fx.denied, 'r.txt')) && !fs.existsSync(ak));
  deniedRpc(await fsCall(envd, 'Move', { source: fx.key, destination: path.join(fx.work, 'stolen') }), 'hardlock');
  expect('move', fx.key, 'hardlock', 'deny');
  assert.ok(fs.existsSync(fx.key) && !fs.existsSync(path.join(fx.work, 'stolen')));
  // commands that read the key: by argument, and inside a shell's -c script (how the SDK runs)
  let c = await startCmd(envd, ['cat', fx.key], fx.work);
  assert.equal(c.code, 'permission_denied');
  assert.equal(c.started, false);
  expect('exec', `cat ${fx.key}`, 'hardlock', 'deny');
  c = await startCmd(envd, ['/bin/bash', '-l', '-c', 'cat ~/.ssh/id_rsa'], fx.work);
  assert.equal(c.code, 'permission_denied');
  expect('exec', '/bin/bash -l -c cat ~/.ssh/id_rsa', 'hardlock', 'deny');
  // a hardlocked file inside the work tree stays denied; so does removing the tree around it
  await denied403(await getFile(envd, fx.secret), 'hardlock');
  expect('read', fx.secret, 'hardlock', 'deny');
  deniedRpc(await fsCall(envd, 'Remove', { path: fx.work }), 'hardlock');
  assert.ok(fs.existsSync(fx.secret));
  expect('remove', fx.work, 'hardlock', 'deny');
  // the policy's command denial, the gate's own files and the policy file
  c = await startCmd(envd, ['curl', '--version'], fx.work);
  assert.equal(c.code, 'permission_denied');
  expect('exec', 'curl --version', 'policy', 'deny');
  const audit = path.join(fx.gateDir, 'audit.jsonl');
  await denied403(await getFile(envd, audit), 'hardlock');
  expect('read', audit, 'hardlock', 'deny');
  await denied403(await putFile(envd, fx.policy, 'allow /'), 'hardlock');
  assert.match(fs.readFileSync(fx.policy, 'utf8'), /deny-command curl/);
  expect('write', fx.policy, 'hardlock', 'deny');
});

test('every decision of the run is in audit.jsonl, in order', () => {
  const lines = fx.audit();
  assert.deepEqual(decisions(lines), expected);
  for (const l of lines) {
    assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(l.sandbox, 'sbx-strict');
  }
  assert.equal((fs.statSync(path.join(fx.gateDir, 'audit.jsonl')).mode & 0o777), 0o600);
});
