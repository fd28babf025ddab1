// The gate through the real SDK on an agent-mode workerd (decision 0054):
// strict mode allows the work tree and nothing else, as an attacker would try
// it (symlink, "..", a hard link, a rename out, a command reading a
// hardlocked file); hardlocks win inside the work tree; prompt mode answered
// on workerd's terminal (tmux) and a timeout denies; every decision is in the
// gate's audit.jsonl, in order, and in the workspace's audit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { until } from '../lib/poll.mjs';
import { Sandbox, MODE } from './lib.mjs';
import { BIN, startAgent, stopAgent, writeAgentConf } from './agent_lib.mjs';

process.env.CORRAL_URL ||= process.env.E2B_API_URL;
const { api, corralctl, newWorkspace } = await import('../lib/corral.mjs');

// The gate's prompt (envd/gate_ask.c): o allows once, d denies.
const ALLOW_ONCE = 'o';
const DENY = 'd';

let tree, outside, ws, strict, sbx;

// Each decision of the gate, oldest first.
const decisions = (w) => {
  const file = path.join(w.gate, 'audit.jsonl');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(JSON.parse) : [];
};

before(async () => {
  // The work tree holds workerd's own files (config, token, gate dir): they
  // are hardlocked, so they stay denied although inside it.
  tree = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'corral-gate-tree-')));
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'corral-gate-out-')));
  fs.writeFileSync(path.join(tree, 'inside.txt'), 'inside\n');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(tree, 'link-out'));
  ws = newWorkspace();
  strict = await startAgent(tree, 'strict', corralctl('join-token', 'create', '--workspace', ws.id).token, tree,
    'permission_mode = strict');
  await until(() => /enrolled as worker/.test(strict.read()), { timeoutMs: 15000 });
  // a hard link in the tree to workerd's join token: decided as the token
  // (decision 0053: a link is decided as the protected file it is)
  fs.linkSync(strict.tokenFile, path.join(tree, 'hard-token'));
  sbx = await Sandbox.create('base', { apiKey: ws.member, timeoutMs: 120_000 });
});

after(async () => {
  await sbx?.kill().catch(() => {});
  await stopAgent(strict);
  for (const d of [tree, outside]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

test(`[${MODE}] gate strict: the work tree is allowed`, async () => {
  assert.equal(await sbx.files.read(`${tree}/inside.txt`), 'inside\n');
  await sbx.files.write(`${tree}/new.txt`, 'new');
  assert.equal(fs.readFileSync(path.join(tree, 'new.txt'), 'utf8'), 'new');
  assert.ok((await sbx.files.list(tree)).some((e) => e.name === 'inside.txt'));
});

test(`[${MODE}] gate strict: outside the tree is denied, however it is reached`, async () => {
  for (const p of [`${outside}/secret.txt`, `${tree}/link-out`, `${tree}/../${path.basename(outside)}/secret.txt`,
    `${tree}/hard-token`]) {
    await assert.rejects(sbx.files.read(p), `read ${p}`);
  }
  await assert.rejects(sbx.files.write(`${outside}/dropped.txt`, 'x'));
  assert.equal(fs.existsSync(path.join(outside, 'dropped.txt')), false);
  await assert.rejects(sbx.files.rename(`${tree}/inside.txt`, `${outside}/moved.txt`));
  assert.ok(fs.existsSync(path.join(tree, 'inside.txt')) && !fs.existsSync(path.join(outside, 'moved.txt')));
  assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'secret\n');
});

test(`[${MODE}] gate strict: workerd's own files are hardlocked inside the tree`, async () => {
  for (const p of [strict.conf, strict.tokenFile, path.join(strict.gate, 'audit.jsonl')]) {
    await assert.rejects(sbx.files.read(p), `read ${p}`);
  }
  await assert.rejects(sbx.commands.run(`cat ${strict.tokenFile}`));
});

test(`[${MODE}] gate: every decision is in audit.jsonl in order, and in the workspace's audit`, async () => {
  const mine = decisions(strict).filter((d) => d.sandbox === sbx.sandboxId);
  assert.ok(mine.length >= 10, `${mine.length} decisions`);
  const times = mine.map((d) => Date.parse(d.time));
  assert.deepEqual(times, [...times].sort((a, b) => a - b));
  assert.ok(mine.some((d) => d.answer === 'deny' && d.branch === 'hardlock' && d.path === strict.tokenFile));
  assert.ok(mine.some((d) => d.answer === 'deny' && d.path === `${outside}/secret.txt`));
  assert.ok(mine.some((d) => d.answer === 'allow' && d.branch === 'worktree'));
  let events = [];
  await until(async () => {
    const r = await api('GET', `/v1/audit?sandbox=${sbx.sandboxId}&limit=1000`, { key: ws.owner });
    events = (r.body.events || []).filter((e) => e.event.startsWith('gate_'));
    return events.length >= mine.length;
  }, { timeoutMs: 15000 });
  assert.deepEqual(events.map((e) => JSON.parse(e.reason)), mine);
});

// workerd in a tmux session: the gate asks on its terminal.
async function promptAgent(name, workspace, timeoutS) {
  const w = await writeAgentConf(tree, name, corralctl('join-token', 'create', '--workspace', workspace.id).token,
    `permission_mode = prompt\nask_timeout = ${timeoutS}`);
  execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '200', '-y', '50', '-c', tree,
    `${BIN}/workerd -c ${w.conf} 2>>${w.log}`]);
  return { ...w, session: name };
}
const pane = (w) => execFileSync('tmux', ['capture-pane', '-p', '-t', w.session], { encoding: 'utf8' });

test(`[${MODE}] gate prompt: allow once and deny on workerd's terminal; a timeout denies`, async () => {
  const other = newWorkspace(); // the prompt agent is its only worker
  const w = await promptAgent(`corral-gate-${process.pid}`, other, 3);
  let s;
  try {
    await until(() => fs.existsSync(w.log) && /enrolled as worker/.test(fs.readFileSync(w.log, 'utf8')), { timeoutMs: 15000 });
    s = await Sandbox.create('base', { apiKey: other.member, timeoutMs: 60_000 });
    const secret = `${outside}/secret.txt`;

    let read = s.files.read(secret);
    await until(() => pane(w).includes(secret), { timeoutMs: 10000 });
    execFileSync('tmux', ['send-keys', '-t', w.session, ALLOW_ONCE, 'Enter']);
    assert.equal(await read, 'secret\n');

    read = s.files.read(secret); // once means once: asked again
    await until(() => pane(w).split(secret).length > 2, { timeoutMs: 10000 });
    execFileSync('tmux', ['send-keys', '-t', w.session, DENY, 'Enter']);
    await assert.rejects(read);

    const t0 = Date.now();
    await assert.rejects(s.files.read(secret)); // nobody answers
    assert.ok(Date.now() - t0 >= 2500, 'denied by the timeout, not at once');
    const last = decisions(w).filter((d) => d.sandbox === s.sandboxId).slice(-3);
    assert.deepEqual(last.map((d) => [d.branch, d.answer, d.by]),
      [['ask', 'allow', 'person'], ['ask', 'deny', 'person'], ['ask', 'deny', 'timeout']]);
  } finally {
    await s?.kill().catch(() => {});
    execFileSync('tmux', ['send-keys', '-t', w.session, 'C-c']); // SIGINT: workerd stops
    const gone = await until(() => { try { pane(w); return false; } catch { return true; } }, { timeoutMs: 10000 });
    if (!gone) execFileSync('tmux', ['kill-session', '-t', w.session]);
  }
});
