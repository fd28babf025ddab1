// corral-interp on this host against Debian's ipykernel (tests/interp/run.sh;
// issue 30, decision 0088), driven over HTTP as @e2b/code-interpreter 2.8.0
// drives port 49999: POST /execute read line by line as the answer
// streams, /contexts. What the package reads of each line is the contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';

const URL_ = process.env.CORRAL_INTERP_URL, WORK = process.env.CORRAL_INTERP_WORK;
if (!URL_ || !WORK) throw new Error('run through tests/interp/run.sh: CORRAL_INTERP_URL, CORRAL_INTERP_WORK');

// POST /execute: {status, lines: [{...line, at (ms since the request)}]}.
async function execute(body, { signal } = {}) {
  const t0 = Date.now();
  const r = await fetch(`${URL_}/execute`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body), signal });
  if (!r.ok) return { status: r.status, body: await r.json(), lines: [] };
  const lines = [];
  let buf = '';
  const decoder = new TextDecoder();
  for await (const chunk of r.body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push({ ...JSON.parse(buf.slice(0, nl)), at: Date.now() - t0 });
      buf = buf.slice(nl + 1);
    }
  }
  assert.equal(buf, '', 'the answer ended mid-line');
  return { status: r.status, lines };
}
const of = (lines, type) => lines.filter((l) => l.type === type);
const mainText = (lines) => of(lines, 'result').find((l) => l.is_main_result)?.text;
const call = async (method, path, body) => {
  const r = await fetch(`${URL_}${path}`, { method, headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
};

test('health, and state kept between calls in the default python context', async () => {
  assert.equal((await fetch(`${URL_}/health`)).status, 200);
  const a = await execute({ code: 'x = 20\nprint("set")\nx + 1' });
  assert.equal(a.status, 200);
  assert.deepEqual(a.lines.map((l) => l.type), ['stdout', 'result', 'number_of_executions']);
  assert.equal(of(a.lines, 'stdout')[0].text, 'set\n');
  assert.equal(mainText(a.lines), '21');
  const b = await execute({ code: 'x * 2' });
  assert.equal(mainText(b.lines), '40');
  assert.equal(of(b.lines, 'number_of_executions')[0].execution_count,
    of(a.lines, 'number_of_executions')[0].execution_count + 1);
});

test('an exception: its name, value and traceback, then the count', async () => {
  const r = await execute({ code: 'def f():\n    return 1 / 0\nf()' });
  const [err] = of(r.lines, 'error');
  assert.equal(err.name, 'ZeroDivisionError');
  assert.equal(err.value, 'division by zero');
  assert.match(err.traceback, /ZeroDivisionError/);
  assert.equal(typeof err.traceback, 'string');
  assert.equal(r.lines.at(-1).type, 'number_of_executions');
});

test('output streams as it happens: each line arrives before the cell ends', async () => {
  const r = await execute({ code: 'import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.7)' });
  const out = of(r.lines, 'stdout');
  assert.deepEqual(out.map((l) => l.text).join(''), '0\n1\n2\n');
  const end = r.lines.at(-1).at;
  assert.ok(end - out[0].at >= 1000, `the first line came ${end - out[0].at} ms before the end, not as it was printed`);
});

test('display_data in order, each format under the package\'s key; the main result last', async () => {
  const r = await execute({ code: [
    'from IPython.display import display, HTML',
    'display(HTML("<b>one</b>"))',
    'display({"application/json": {"n": 2}, "text/plain": "two"}, raw=True)',
    '"three"',
  ].join('\n') });
  const results = of(r.lines, 'result');
  assert.equal(results.length, 3);
  assert.equal(results[0].html, '<b>one</b>');
  assert.equal(results[0].is_main_result, false);
  assert.deepEqual(results[1].json, { n: 2 });
  assert.equal(results[1].text, 'two');
  assert.equal(results[2].is_main_result, true);
  assert.equal(results[2].text, "'three'");
});

test('contexts: their own cwd and state; listed; restarted empty; removed', async () => {
  mkdirSync(`${WORK}/ctx`, { recursive: true });
  const c = await call('POST', '/contexts', { language: 'python', cwd: `${WORK}/ctx` });
  assert.equal(c.status, 200);
  assert.match(c.body.id, /^[0-9a-f]{32}$/);
  assert.deepEqual({ language: c.body.language, cwd: c.body.cwd }, { language: 'python', cwd: `${WORK}/ctx` });
  const id = c.body.id;
  assert.equal(mainText((await execute({ code: 'import os; y = 7; os.getcwd()', context_id: id })).lines), `'${WORK}/ctx'`);
  const elsewhere = await execute({ code: 'y' });
  assert.equal(of(elsewhere.lines, 'error')[0]?.name, 'NameError', 'the default context saw another context\'s y');
  assert.ok((await call('GET', '/contexts')).body.some((x) => x.id === id));
  assert.equal((await call('POST', `/contexts/${id}/restart`)).status, 204);
  assert.equal(of((await execute({ code: 'y', context_id: id })).lines, 'error')[0]?.name, 'NameError');
  assert.equal((await call('DELETE', `/contexts/${id}`)).status, 204);
  const gone = await execute({ code: '1', context_id: id });
  assert.equal(gone.status, 404);
  assert.deepEqual(gone.body, { code: 404, message: `context ${id} not found` });
  assert.ok(!(await call('GET', '/contexts')).body.some((x) => x.id === id));
});

test('env vars: a call\'s own, put back after it; the server\'s environment beneath', async () => {
  const code = 'import os; (os.environ.get("CORRAL_INTERP_TEST_ENV"), os.environ.get("ONLY_THIS_CALL"))';
  const r = await execute({ code, env_vars: { CORRAL_INTERP_TEST_ENV: 'from-the-call', ONLY_THIS_CALL: 'a "quoted"\nvalue' } });
  assert.equal(mainText(r.lines), `('from-the-call', 'a "quoted"\\nvalue')`);
  assert.equal(mainText((await execute({ code })).lines), "('from-the-server', None)");
  // a call that fails still has its env vars put back (not aborted after its error)
  const failed = await execute({ code: 'raise ValueError("no")', env_vars: { ONLY_THIS_CALL: 'x' } });
  assert.equal(of(failed.lines, 'error')[0]?.name, 'ValueError');
  assert.equal(mainText((await execute({ code })).lines), "('from-the-server', None)");
});

test('a client that goes away interrupts its cell; the context answers the next call', async () => {
  const ctl = new AbortController();
  const running = execute({ code: 'n = 0\nwhile True:\n    n += 1' }, { signal: ctl.signal }).catch((e) => e);
  // sleep: the loop is running before the client goes away
  await new Promise((r) => setTimeout(r, 800));
  ctl.abort();
  assert.ok((await running) instanceof Error);
  const next = await execute({ code: 'n > 0' });
  assert.equal(mainText(next.lines), 'True', JSON.stringify(next.lines));
});

test('a kernel that dies is an error line; the next call gets a fresh one', async () => {
  await execute({ code: 'z = 1' });
  const r = await execute({ code: 'import os; os._exit(3)' });
  assert.equal(of(r.lines, 'error')[0]?.name, 'KernelDied', JSON.stringify(r.lines));
  const next = await execute({ code: 'z' });
  assert.equal(of(next.lines, 'error')[0]?.name, 'NameError', 'the new kernel kept the dead one\'s state');
});

test('bad requests: 4xx in the error shape, nothing run', async () => {
  const cases = [
    [{ language: 'python' }, 400, /code is required/],
    [{ code: 1 }, 400, /code must be a string/],
    [{ code: '1', language: 'cobol' }, 400, /cobol/],
    [{ code: '1', language: 'python', context_id: 'f'.repeat(32) }, 400, /not both/],
    [{ code: '1', context_id: 'f'.repeat(32) }, 404, /not found/],
    [{ code: '1', env_vars: { A: 1 } }, 400, /A must be a name/],
    ['{"code":', 400, /not a JSON object/],
  ];
  for (const [body, status, message] of cases) {
    const r = await execute(body);
    assert.equal(r.status, status, JSON.stringify(body));
    assert.equal(r.body.code, status);
    assert.match(r.body.message, message);
  }
  assert.equal((await call('GET', '/nope')).status, 404);
  assert.equal((await call('DELETE', '/contexts/../../etc')).status, 404);
  assert.equal((await call('POST', '/contexts', { language: 'cobol' })).status, 400);
});

test('bash: a persistent shell per context: variables and cwd kept, stderr apart, a failure\'s status', async () => {
  const c = await call('POST', '/contexts', { language: 'bash', cwd: WORK });
  assert.equal(c.status, 200, JSON.stringify(c.body));
  const id = c.body.id;
  const a = await execute({ code: 'GREETING=hello; mkdir -p sub && cd sub; echo "$GREETING"; echo warn >&2', context_id: id });
  assert.equal(of(a.lines, 'stdout').map((l) => l.text).join(''), 'hello\n');
  assert.equal(of(a.lines, 'stderr').map((l) => l.text).join(''), 'warn\n');
  const b = await execute({ code: 'echo "$GREETING from $(pwd)"; printf no-newline', context_id: id });
  assert.equal(of(b.lines, 'stdout').map((l) => l.text).join(''), `hello from ${WORK}/sub\nno-newline`);
  const f = await execute({ code: 'ls /nonexistent-dir', context_id: id });
  const [err] = of(f.lines, 'error');
  assert.equal(err?.name, 'CommandExitError', JSON.stringify(f.lines));
  assert.equal(err.value, 'exit status 2');
  assert.match(of(f.lines, 'stderr').map((l) => l.text).join(''), /nonexistent-dir/);
  // the caller gone: the running command is interrupted, the shell stays
  const ctl = new AbortController();
  const running = execute({ code: 'sleep 60', context_id: id }, { signal: ctl.signal }).catch((e) => e);
  // sleep: the command is running before the client goes away
  await new Promise((r) => setTimeout(r, 800));
  ctl.abort();
  assert.ok((await running) instanceof Error);
  const after = await execute({ code: 'echo "$GREETING again"', context_id: id });
  assert.equal(of(after.lines, 'stdout').map((l) => l.text).join(''), 'hello again\n', JSON.stringify(after.lines));
  assert.equal((await call('DELETE', `/contexts/${id}`)).status, 204);
});

test('js and ts: one persistent context each, values as results, errors by name, a looping cell interrupted', async () => {
  const a = await execute({ code: 'let total = 40; console.log("sum", { total }); total + 2', language: 'js' });
  assert.equal(of(a.lines, 'stdout')[0]?.text, 'sum { total: 40 }\n', JSON.stringify(a.lines));
  assert.equal(mainText(a.lines), '42');
  assert.equal(mainText((await execute({ code: 'total * 2', language: 'js' })).lines), '80');
  const e = await execute({ code: 'null.x', language: 'js' });
  assert.equal(of(e.lines, 'error')[0]?.name, 'TypeError');
  assert.match(of(e.lines, 'error')[0].value, /Cannot read properties of null/);
  const ctl = new AbortController();
  const running = execute({ code: 'while (true) {}', language: 'js' }, { signal: ctl.signal }).catch((x) => x);
  // sleep: the loop is running before the client goes away
  await new Promise((r) => setTimeout(r, 800));
  ctl.abort();
  assert.ok((await running) instanceof Error);
  assert.equal(mainText((await execute({ code: 'total', language: 'js' })).lines), '40', 'the js context lost its state');
  const t = await execute({ code: 'const n: number = 21;\nfunction twice(x: number): number { return x * 2 }\ntwice(n)', language: 'ts' });
  assert.equal(mainText(t.lines), '42', JSON.stringify(t.lines));
  assert.equal(of((await execute({ code: 'undefinedName', language: 'ts' })).lines, 'error')[0]?.name, 'ReferenceError');
});

test('r: IRkernel, its state kept, its values in every format it gives, its errors', async () => {
  const a = await execute({ code: 'x <- 21\nprint("hello")\nx * 2', language: 'r' });
  assert.equal(of(a.lines, 'stdout')[0]?.text, '[1] "hello"\n', JSON.stringify(a.lines));
  // IRkernel shows a value as display_data, in text, html, markdown and latex
  const [v] = of(a.lines, 'result');
  assert.equal(v.text, '[1] 42');
  assert.equal(v.html, '42');
  assert.equal(of((await execute({ code: 'x + 1', language: 'r' })).lines, 'result')[0]?.text, '[1] 22');
  const e = await execute({ code: 'stop("boom")', language: 'r' });
  assert.match(of(e.lines, 'error')[0]?.value ?? '', /boom/);
  const df = await execute({ code: 'data.frame(a = 1:2)', language: 'r' });
  assert.match(of(df.lines, 'result')[0]?.html ?? '', /<table/);
});
