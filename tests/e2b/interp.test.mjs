// The real @e2b/code-interpreter (2.8.0) against Corral's template
// code-interpreter-v1 and its server, corral-interp (issue 30, decision
// 0088): what an agent written for E2B's code interpreter does, unchanged.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CodeInterpreter as CI } from './interp_sdk.mjs';
import { MODE, gatewayUrl } from './lib.mjs';
import { docker, sandboxContainer, isReadyWarm } from '../lib/engine.mjs';
import { until } from '../lib/poll.mjs';

const tag = `[${MODE}] code interpreter:`;
// Jupyter's tracebacks are coloured, as on E2B.
const plain = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
let sbx; // one sandbox for the tests that only run code in it

before(async () => {
  sbx = await CI.create({ timeoutMs: 300_000, envs: { SBX_VAR: 'from-create' } });
});
after(() => sbx?.kill().catch(() => {}));

async function withCI(opts, fn) {
  const s = await CI.create({ timeoutMs: 120_000, ...opts });
  try {
    return await fn(s);
  } finally {
    await s.kill().catch(() => {});
  }
}

test(`${tag} runCode right after create, state kept between calls, the final value as text`, async () => {
  await withCI({}, async (s) => {
    const first = await s.runCode('x = 41\nx + 1'); // no wait between create and the call
    assert.equal(first.error, undefined);
    assert.equal(first.text, '42');
    assert.equal(first.results[0].isMainResult, true);
    assert.ok(first.executionCount >= 1);
    const again = await s.runCode('x += 1\nprint("x is", x)\nx');
    assert.equal(again.logs.stdout.join(''), 'x is 42\n');
    assert.equal(again.text, '42');
    assert.equal(again.executionCount, first.executionCount + 1);
  });
});

test(`${tag} an exception's name, value and traceback`, async () => {
  const r = await sbx.runCode('def f():\n    return 1 / 0\nf()');
  assert.equal(r.error.name, 'ZeroDivisionError');
  assert.equal(r.error.value, 'division by zero');
  assert.match(plain(r.error.traceback), /ZeroDivisionError/);
  assert.match(plain(r.error.traceback), /return 1 \/ 0/);
  assert.equal(r.results.length, 0);
});

test(`${tag} each language: hello world and its error`, async () => {
  const cases = {
    r: ['cat("hello from r\\n")', 'stop("r failed")', /r failed/],
    bash: ['echo hello from bash', 'ls /no/such/dir', /No such file/],
    js: ['console.log("hello from js")', 'throw new TypeError("js failed")', /js failed/],
    ts: ['const n: number = 1; console.log("hello from ts", n)', 'throw new RangeError("ts failed")', /ts failed/],
  };
  for (const [language, [hello, bad, why]] of Object.entries(cases)) {
    const ok = await sbx.runCode(hello, { language });
    assert.equal(ok.error, undefined, `${language}: ${JSON.stringify(ok.error)}`);
    assert.match(ok.logs.stdout.join(''), new RegExp(`hello from ${language}`));
    const failed = await sbx.runCode(bad, { language });
    assert.ok(failed.error, `${language}: no error for ${bad}`);
    // bash's own complaint is its stderr; the error is the exit status
    const said = `${failed.error.name} ${failed.error.value} ${failed.error.traceback} ${failed.logs.stderr.join('')}`;
    assert.match(plain(said), why, language);
  }
  const js = await sbx.runCode('throw new TypeError("x")', { language: 'js' });
  assert.equal(js.error.name, 'TypeError');
  const bash = await sbx.runCode('exit 3', { language: 'bash' });
  assert.match(`${bash.error.name} ${bash.error.value}`, /exited/);
  assert.match((await sbx.runCode('echo still here', { language: 'bash' })).logs.stdout.join(''), /still here/,
    'the bash context answers after its shell exited');
});

test(`${tag} env vars: the sandbox's in every language, a call's for that call only`, async () => {
  const read = {
    python: (k) => `import os; print(os.environ.get("${k}", "unset"))`,
    r: (k) => `cat(Sys.getenv("${k}", "unset"), "\\n", sep = "")`,
    bash: (k) => `echo "\${${k}-unset}"`,
    js: (k) => `console.log(process.env.${k} ?? "unset")`,
    ts: (k) => `console.log(process.env.${k} ?? "unset")`,
  };
  const out = (r) => r.logs.stdout.join('').trim();
  for (const [language, code] of Object.entries(read)) {
    assert.equal(out(await sbx.runCode(code('SBX_VAR'), { language })), 'from-create', language);
    const envs = { CALL_VAR: "it's \"quoted\" $HOME", SBX_VAR: 'overridden' };
    const during = await sbx.runCode(`${code('CALL_VAR')}\n${code('SBX_VAR')}`, { language, envs });
    assert.equal(out(during), `it's "quoted" $HOME\noverridden`, language);
    const afterwards = await sbx.runCode(`${code('CALL_VAR')}\n${code('SBX_VAR')}`, { language });
    assert.equal(out(afterwards), 'unset\nfrom-create', `${language}: the call's env vars stayed`);
  }
  await freeKernels(sbx);
});

// A kernel of every language and a few contexts more are over the default
// 512 MB of a sandbox (about 100 MB a kernel: decision 0088), where it then
// swaps to a crawl: the other languages' kernels go once they are tested.
async function freeKernels(s) {
  for (const c of await s.listCodeContexts()) if (c.language !== 'python') await s.removeCodeContext(c.id);
}

test(`${tag} contexts: their own cwd and state, listed, restarted, removed`, async () => {
  const ctx = await sbx.createCodeContext({ cwd: '/tmp', language: 'python' });
  assert.equal(ctx.cwd, '/tmp');
  assert.equal(ctx.language, 'python');
  const cwd = await sbx.runCode('import os; os.getcwd()', { context: ctx });
  assert.equal(cwd.text, "'/tmp'");
  await sbx.runCode('only_here = 7', { context: ctx });
  assert.equal((await sbx.runCode('only_here', { context: ctx })).text, '7');
  assert.equal((await sbx.runCode('only_here')).error?.name, 'NameError', 'the default context shares it');
  assert.ok((await sbx.listCodeContexts()).some((c) => c.id === ctx.id));

  await sbx.restartCodeContext(ctx);
  assert.equal((await sbx.runCode('only_here', { context: ctx })).error?.name, 'NameError');

  const bash = await sbx.createCodeContext({ language: 'bash', cwd: '/var' });
  assert.equal((await sbx.runCode('pwd', { context: bash })).logs.stdout.join(''), '/var\n');
  await sbx.removeCodeContext(ctx);
  await sbx.removeCodeContext(bash.id);
  assert.ok(!(await sbx.listCodeContexts()).some((c) => c.id === ctx.id || c.id === bash.id));
  await assert.rejects(sbx.runCode('1', { context: ctx }), (e) => e.name === 'NotFoundError' || /404|not found/i.test(e.message));
});

test(`${tag} timeoutMs interrupts an endless loop; the next call works, state kept`, async () => {
  const ctx = await sbx.createCodeContext();
  await sbx.runCode('kept = "yes"', { context: ctx });
  await assert.rejects(sbx.runCode('while True:\n    pass', { context: ctx, timeoutMs: 2000 }),
    (e) => e.name === 'TimeoutError');
  const next = await sbx.runCode('kept', { context: ctx, timeoutMs: 30_000 });
  assert.equal(next.error, undefined, JSON.stringify(next.error));
  assert.equal(next.text, "'yes'");
  await sbx.removeCodeContext(ctx);
});

test(`${tag} a matplotlib figure: a PNG and chart data; a DataFrame as HTML`, async () => {
  const line = await sbx.runCode(`
import matplotlib.pyplot as plt
plt.figure()
plt.plot([1, 2, 3], [2, 4, 8], label="doubling")
plt.title("Growth"); plt.xlabel("step"); plt.ylabel("value")
plt.show()`);
  assert.equal(line.error, undefined, JSON.stringify(line.error));
  const fig = line.results.find((r) => r.png);
  assert.ok(fig, 'a result with a PNG');
  assert.equal(Buffer.from(fig.png, 'base64').subarray(1, 4).toString(), 'PNG');
  assert.equal(fig.chart.type, 'line');
  assert.equal(fig.chart.title, 'Growth');
  assert.equal(fig.chart.x_label, 'step');
  assert.equal(fig.chart.elements[0].label, 'doubling');
  assert.deepEqual(fig.chart.elements[0].points, [[1, 2], [2, 4], [3, 8]]);

  const bars = await sbx.runCode(`
plt.figure(); plt.bar(["a", "b"], [3, 5], label="n"); plt.show()`);
  const bar = bars.results.find((r) => r.chart).chart;
  assert.equal(bar.type, 'bar');
  assert.deepEqual(bar.elements.map((e) => [e.label, Number(e.value)]), [['a', 3], ['b', 5]]);

  const df = await sbx.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})');
  assert.match(df.results[0].html, /<table/);
  assert.match(df.results[0].text, /a\s+b/);
  assert.deepEqual(df.results[0].data.columns, ['a', 'b']);
  assert.deepEqual(df.results[0].data.data, [[1, 'x'], [2, 'y']]);
});

test(`${tag} rich results: each MIME type under the package's name, display_data in order, then the value`, async () => {
  const r = await sbx.runCode(`
from IPython.display import display, Markdown, SVG, Latex, JSON, Javascript, HTML
display(Markdown("**bold**"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'))
display(Latex(r"$x^2$"))
display(JSON({"k": [1, 2]}))
display(Javascript("console.log(1)"))
display(HTML("<b>h</b>"))
"last"`);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  const [md, svg, latex, json, js, html, last] = r.results;
  assert.equal(md.markdown, '**bold**');
  assert.match(svg.svg, /<svg/);
  assert.equal(latex.latex, '$x^2$');
  assert.deepEqual(json.json, { k: [1, 2] });
  assert.equal(js.javascript, 'console.log(1)');
  assert.equal(html.html, '<b>h</b>');
  assert.deepEqual(r.results.map((x) => x.isMainResult), [false, false, false, false, false, false, true]);
  assert.equal(last.text, "'last'");
});

test(`${tag} a kernel that dies is an error; the next call gets a fresh one`, async () => {
  const ctx = await sbx.createCodeContext();
  await sbx.runCode('before = 1', { context: ctx });
  const died = await sbx.runCode('import os\nos._exit(3)', { context: ctx });
  assert.ok(died.error, 'an error for the dead kernel');
  assert.match(`${died.error.name} ${died.error.value}`, /exit|died/i);
  const next = await sbx.runCode('"fresh"', { context: ctx });
  assert.equal(next.error, undefined, JSON.stringify(next.error));
  assert.equal(next.text, "'fresh'");
  assert.equal((await sbx.runCode('before', { context: ctx })).error?.name, 'NameError', 'a fresh kernel, its state gone');
  await sbx.removeCodeContext(ctx);
});

test(`${tag} callbacks fire as output happens, in order`, async () => {
  const seen = [];
  const at = (kind) => (m) => seen.push({ kind, text: m.line ?? m.text ?? m.name, t: Date.now() });
  const r = await sbx.runCode(`
import sys, time
for i in range(3):
    print("tick", i, flush=True)
    time.sleep(1)
print("oops", file=sys.stderr, flush=True)
"done"
raise ValueError("last")`, { onStdout: at('stdout'), onStderr: at('stderr'), onResult: at('result'), onError: at('error') });
  assert.deepEqual(seen.map((s) => s.kind), ['stdout', 'stdout', 'stdout', 'stderr', 'error']);
  assert.deepEqual(seen.slice(0, 3).map((s) => s.text), ['tick 0\n', 'tick 1\n', 'tick 2\n']);
  // Each line arrives before the next is printed, a second later: streamed,
  // not gathered at the end.
  assert.ok(seen[1].t - seen[0].t > 700 && seen[2].t - seen[1].t > 700,
    `gaps ${seen[1].t - seen[0].t} and ${seen[2].t - seen[1].t} ms`);
  assert.equal(r.error.name, 'ValueError');
});

test(`${tag} the server runs as the sandbox's user, and /execute needs the sandbox's token`, async () => {
  const ps = await sbx.commands.run('ps -o user=,args= -C corral-interp');
  assert.match(ps.stdout, /^user\s+corral-interp/m);
  assert.doesNotMatch(ps.stdout, /^root/m);
  const { url, headers } = gatewayUrl(sbx, 49999);
  const call = (token) => fetch(`${url}/execute`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json', ...(token ? { 'X-Access-Token': token } : {}) },
    body: JSON.stringify({ code: 'open("/tmp/ran", "w").write("ran")' }),
  });
  assert.equal((await call()).status, 401);
  assert.equal((await call('e2b-forged-token')).status, 401);
  assert.equal((await call(`${sbx.envdAccessToken}x`)).status, 401);
  await assert.rejects(sbx.files.read('/tmp/ran'), 'no code ran');
  const ok = await call(sbx.envdAccessToken);
  assert.equal(ok.status, 200);
  await ok.text();
  assert.equal(await sbx.files.read('/tmp/ran'), 'ran');
});

test(`${tag} reconnecting with Sandbox.connect continues in the same context`, async () => {
  await withCI({}, async (s) => {
    const ctx = await s.createCodeContext();
    await s.runCode('carried = [1, 2]', { context: ctx });
    const again = await CI.connect(s.sandboxId);
    const r = await again.runCode('carried + [3]', { context: ctx });
    assert.equal(r.text, '[1, 2, 3]');
    assert.equal((await again.runCode('carried', { context: { id: ctx.id } })).text, '[1, 2]');
  });
});

test(`${tag} a killed sandbox's runCode fails with the package's own error`, async () => {
  const s = await CI.create({ timeoutMs: 60_000 });
  await s.runCode('1');
  await s.kill();
  await assert.rejects(s.runCode('1', { requestTimeoutMs: 20_000 }), (e) => {
    assert.ok(['TimeoutError', 'NotFoundError', 'SandboxError'].includes(e.name) || e instanceof Error, e);
    assert.ok(e.constructor !== Error || /sandbox|not found|killed/i.test(e.message), `${e.name}: ${e.message}`);
    return true;
  });
});

test(`${tag} two workspaces: no state, file or kernel shared; neither reaches the other's server`, async () => {
  const keyB = process.env.CORRAL_OTHER_KEY;
  assert.ok(keyB, 'CORRAL_OTHER_KEY (a key of another workspace) must be set');
  await withCI({}, async (a) => {
    await withCI({ apiKey: keyB }, async (b) => {
      await a.runCode('secret_a = "a-only"\nopen("/tmp/a.txt", "w").write("a")');
      const ctxA = await a.createCodeContext();
      assert.equal((await b.runCode('secret_a')).error?.name, 'NameError');
      assert.equal((await b.runCode('import os; os.path.exists("/tmp/a.txt")')).text, 'False');
      assert.ok(!(await b.listCodeContexts()).some((c) => c.id === ctxA.id));
      // B's kernels are its own processes: A's kernel pids are not in B.
      const pidsA = (await a.commands.run('pgrep -f ipykernel_launcher')).stdout.trim();
      assert.ok(pidsA.length > 0);
      const inB = await b.commands.run('ps -eo args=');
      assert.doesNotMatch(inB.stdout, new RegExp(ctxA.id));
      // B's token on A's server, by A's id through the gateway: refused.
      const { url, headers } = gatewayUrl(a, 49999);
      const r = await fetch(`${url}/execute`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json', 'X-Access-Token': b.envdAccessToken, 'X-API-KEY': keyB },
        body: JSON.stringify({ code: 'secret_a' }),
      });
      assert.equal(r.status, 401);
      await r.text();
      // And B's key cannot connect to A's sandbox at all.
      await assert.rejects(CI.connect(a.sandboxId, { apiKey: keyB }));
      assert.equal((await a.runCode('secret_a')).text, "'a-only'");
    });
  });
});

// tests/e2b/run.sh's workerd keeps one code-interpreter-v1 sandbox warm
// (decision 0082): its envd starts the server only once claimed, when the
// create's env vars and token are known.
test(`${tag} claimed from the warm pool: the create's env vars and token reach the server`, async () => {
  const ready = async () => (await docker('GET', '/containers/json')).body
    .some((c) => isReadyWarm(c) && c.Labels['corral.template'] === 'code-interpreter-v1');
  assert.ok(await until(ready, { timeoutMs: 120_000, everyMs: 250 }), 'no warm code-interpreter-v1 sandbox was made');
  await withCI({ envs: { WARM_VAR: 'given-at-claim' } }, async (s) => {
    assert.equal((await sandboxContainer(s.sandboxId)).Labels['corral.role'], 'warm', 'claimed, not made cold');
    const r = await s.runCode('import os; os.environ.get("WARM_VAR")');
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.text, "'given-at-claim'");
    const { url, headers } = gatewayUrl(s, 49999);
    const refused = await fetch(`${url}/execute`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{"code":"1"}' });
    assert.equal(refused.status, 401, 'the token given at the claim is asked for');
    await refused.text();
  });
});
