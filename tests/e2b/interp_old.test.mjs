// Older @e2b/code-interpreter packages against the same template (issue 30,
// decision 0088): 2.0.0 unchanged; 1.5.1 (on e2b 1.x), which reaches port
// 49999 by host only and never sends X-Access-Token, so that on a secure
// sandbox (its default) running code is refused, and works on one created
// with secure: false. This file runs by host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox as CI200 } from 'code-interpreter-old';
import { Sandbox as CI151 } from 'code-interpreter-1x';
import { MODE } from './lib.mjs';

async function exercise(s) {
  assert.equal((await s.runCode('y = 20\ny * 2')).text, '40');
  assert.equal((await s.runCode('y + 1')).text, '21');
  const bad = await s.runCode('undefined_name');
  assert.equal(bad.error.name, 'NameError');
  const ctx = await s.createCodeContext({ cwd: '/tmp' });
  assert.equal((await s.runCode('import os; os.getcwd()', { context: ctx })).text, "'/tmp'");
  const fig = await s.runCode('import matplotlib.pyplot as plt\nplt.scatter([1, 2], [3, 4]); plt.show()');
  const chart = fig.results.find((r) => r.chart)?.chart;
  assert.equal(chart?.type, 'scatter');
  assert.ok(fig.results.find((r) => r.png));
  const js = await s.runCode('console.log(6 * 7)', { language: 'js' });
  assert.equal(js.logs.stdout.join(''), '42\n');
  const out = [];
  await s.runCode('print("streamed")', { onStdout: (m) => out.push(m.line) });
  assert.deepEqual(out, ['streamed\n']);
}

test(`[${MODE}] @e2b/code-interpreter 2.0.0 unchanged: state, errors, contexts, charts, js, streaming`, async () => {
  const s = await CI200.create({ timeoutMs: 120_000 });
  try {
    await exercise(s);
  } finally {
    await s.kill().catch(() => {});
  }
});

test(`[${MODE}] @e2b/code-interpreter 1.5.1: refused on a secure sandbox (no token sent), served on one without`, async () => {
  if (MODE !== 'domain') throw new Error('the 1.x package reaches sandboxes by host only: run with E2B_DOMAIN');
  const secure = await CI151.create({ timeoutMs: 60_000 });
  try {
    await assert.rejects(secure.runCode('open("/tmp/ran", "w")'), /401/);
    await assert.rejects(secure.files.read('/tmp/ran'), 'nothing ran');
  } finally {
    await secure.kill().catch(() => {});
  }
  const s = await CI151.create({ timeoutMs: 120_000, secure: false });
  try {
    await exercise(s);
  } finally {
    await s.kill().catch(() => {});
  }
});

