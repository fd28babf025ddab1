// The permission gate in prompt mode (decision 0053), through a real
// terminal: envd runs inside tmux, whose pane is the terminal the person
// answers on (-gate-tty defaults to /dev/tty). The test reads each question
// with capture-pane and answers with send-keys: allow once, deny, an answer
// that is no answer (asked again), allow for the session, no answer (the
// timeout denies), allow always (persisted: it survives an envd restart,
// where the session grant does not), two sandboxes asking at once (one
// question at a time). Every decision is in audit.jsonl, in order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sleep, until } from '../lib/poll.mjs';
import { decisions, fsCall, gateFixture, getFile, nthQuestion, startCmd, startPrompting } from './gate_lib.mjs';

const TIMEOUT_S = 5;
let fx, envd;
const expected = [];
const expect = (op, subject, branch, answer, by) => expected.push([op, subject, branch, answer, by]);
const prompts = () => envd.tmux.screen().split('\n').filter((l) => l.includes('[d]eny?')).length;

before(async () => {
  fx = gateFixture();
  envd = await startPrompting(fx, 'sbx-prompt', ['-ask-timeout', String(TIMEOUT_S)]);
});
after(async () => { await envd?.stop(); fx?.cleanup(); });

test('allow once: the question names sandbox, operation and canonical path; once is not remembered', async () => {
  const one = path.join(fx.outside, 'one.txt');
  fs.writeFileSync(one, 'one');
  fs.symlinkSync(fx.outside, path.join(fx.work, 'ln'));
  const pending = getFile(envd, path.join(fx.work, 'ln/one.txt'));
  const q = await nthQuestion(envd, 1);
  assert.ok(q.includes(`corral: sandbox sbx-prompt wants to read ${one}`), q);
  envd.tmux.answer('o');
  const res = await pending;
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'one');
  expect('read', one, 'ask', 'allow', 'person');

  const again = getFile(envd, one);
  await nthQuestion(envd, 2);
  const before = prompts();
  envd.tmux.answer('yes please'); // not an answer: the same question is asked again
  assert.ok(await until(() => prompts() === before + 1), envd.tmux.screen());
  envd.tmux.answer('d');
  const denied = await again;
  assert.equal(denied.status, 403);
  assert.match((await denied.json()).message, /\(ask, person\)/);
  assert.equal(envd.questions().length, 2);
  expect('read', one, 'ask', 'deny', 'person');
});

test('allow for the session; the sandbox\'s other requests go on while a question is open', async () => {
  const s = path.join(fx.outside, 's.txt');
  fs.writeFileSync(s, 's');
  const inside = path.join(fx.work, 'inside.txt');
  fs.writeFileSync(inside, 'i');
  const pending = fsCall(envd, 'Stat', { path: s });
  await nthQuestion(envd, 3);
  const t0 = Date.now();
  const meanwhile = await fsCall(envd, 'Stat', { path: inside });
  assert.equal(meanwhile.status, 200);
  assert.ok(Date.now() - t0 < 2000, 'a work-tree request waited for the open question');
  expect('stat', inside, 'worktree', 'allow', 'gate');
  envd.tmux.answer('s');
  assert.equal((await pending).status, 200);
  expect('stat', s, 'ask', 'allow', 'person');
  const second = await fsCall(envd, 'Stat', { path: s });
  assert.equal(second.status, 200);
  assert.equal(envd.questions().length, 3, 'a session grant is not asked again');
  expect('stat', s, 'session', 'allow', 'gate');
});

test('no answer before -ask-timeout denies', async () => {
  const t = path.join(fx.outside, 't.txt');
  fs.writeFileSync(t, 't');
  const t0 = Date.now();
  const pending = fsCall(envd, 'Stat', { path: t });
  await nthQuestion(envd, 4);
  const r = await pending;
  assert.ok(Date.now() - t0 >= (TIMEOUT_S - 1) * 1000);
  assert.equal(r.status, 403);
  assert.equal(r.body.code, 'permission_denied');
  assert.match(r.body.message, /\(ask, timeout\)/);
  assert.ok(await until(() => envd.tmux.screen().includes('no answer in time: denied')));
  expect('stat', t, 'ask', 'deny', 'timeout');
});

test('allow always persists across an envd restart; a session grant does not', async () => {
  const a = path.join(fx.outside, 'a.txt');
  fs.writeFileSync(a, 'always');
  const pending = getFile(envd, a);
  await nthQuestion(envd, 5);
  envd.tmux.answer('a');
  assert.equal(await (await pending).text(), 'always');
  expect('read', a, 'ask', 'allow', 'person');
  const cmd = startCmd(envd, ['/bin/cat', a], fx.work);
  const q = await nthQuestion(envd, 6);
  assert.ok(q.includes(`wants to run /bin/cat ${a}`), q);
  envd.tmux.answer('a');
  assert.equal((await cmd).stdout, 'always');
  expect('exec', `/bin/cat ${a}`, 'ask', 'allow', 'person');
  assert.equal(fs.readFileSync(path.join(fx.gateDir, 'grants'), 'utf8'),
    `allow ${a}\nallow-command /bin/cat ${a}\n`);

  await envd.stop();
  envd = await startPrompting(fx, 'sbx-prompt-2', ['-ask-timeout', String(TIMEOUT_S)]);
  const res = await getFile(envd, a);
  assert.equal(await res.text(), 'always');
  expect('read', a, 'permanent', 'allow', 'gate');
  assert.equal((await startCmd(envd, ['/bin/cat', a], fx.work)).stdout, 'always');
  expect('exec', `/bin/cat ${a}`, 'permanent', 'allow', 'gate');
  assert.equal(envd.questions().length, 0);

  const s = path.join(fx.outside, 's.txt'); // granted for the previous sandbox's session only
  const pendingStat = fsCall(envd, 'Stat', { path: s });
  await nthQuestion(envd, 1);
  envd.tmux.answer('d');
  assert.equal((await pendingStat).body.code, 'permission_denied');
  expect('stat', s, 'ask', 'deny', 'person');
});

test('two sandboxes asking at once: the second question waits for the first answer', async () => {
  const other = await startPrompting(fx, 'sbx-prompt-b', ['-ask-timeout', String(TIMEOUT_S)]);
  try {
    const qa = path.join(fx.outside, 'qa.txt');
    const qb = path.join(fx.outside, 'qb.txt');
    const first = fsCall(envd, 'Stat', { path: qa });
    await nthQuestion(envd, 2);
    const second = fsCall(other, 'Stat', { path: qb });
    // sleep: a window, not a condition: no second question may be asked in it.
    await sleep(700);
    assert.equal(other.questions().length, 0, 'a second question was asked while the first was open');
    envd.tmux.answer('o');
    assert.equal((await first).body.code, 'not_found'); // allowed; the file does not exist
    expect('stat', qa, 'ask', 'allow', 'person');
    const q = await nthQuestion(other, 1);
    assert.ok(q.includes(`sandbox sbx-prompt-b wants to stat ${qb}`), q);
    other.tmux.answer('d');
    assert.equal((await second).body.code, 'permission_denied');
    expect('stat', qb, 'ask', 'deny', 'person');
  } finally {
    await other.stop();
  }
});

test('every decision of the run is in audit.jsonl, in order', () => {
  const lines = fx.audit();
  assert.deepEqual(decisions(lines), expected);
  assert.deepEqual([...new Set(lines.map((l) => l.sandbox))],
    ['sbx-prompt', 'sbx-prompt-2', 'sbx-prompt-b']);
});
