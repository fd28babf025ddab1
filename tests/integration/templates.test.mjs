// Templates in the control plane (issue 28, docs/templates.md), with test
// workers speaking the real worker routes: the E2B build routes as the SDK
// calls them, the upload URL's authority, a build placed as a sandbox with its
// steps, its log and last word heard only from its own worker, the template it
// makes, and the walls between workspaces: another workspace's template, build,
// files and reports are "not found", as absent ones.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { api, assertError, newWorkspace, setLimit } from '../lib/corral.mjs';
import { eventually } from '../lib/poll.mjs';
import { enrolWorker } from '../lib/test_worker.mjs';

const workers = [];
after(async () => { for (const w of workers) await w.stop(); });

const FILES = Buffer.from('pretend this is a gzipped tar of a COPY step\n'.repeat(100));
const HASH = createHash('sha256').update(FILES).digest('hex');
const DIGEST = `sha256:${'ab'.repeat(32)}`;

async function requestBuild(ws, name, extra = {}) {
  const r = await api('POST', '/v3/templates', { key: ws.member, body: { name, ...extra } });
  assert.equal(r.status, 202, r.raw);
  assert.match(r.body.templateID, /^tpl-[0-9a-f]{20}$/);
  assert.match(r.body.buildID, /^bld-[0-9a-f]{20}$/);
  return r.body;
}

async function upload(ws, tid) {
  const link = await api('GET', `/templates/${tid}/files/${HASH}`, { key: ws.member });
  assert.equal(link.status, 201, link.raw);
  if (link.body.present) return link.body;
  const put = await fetch(link.body.url, { method: 'PUT', body: FILES });
  assert.equal(put.status, 200, await put.text());
  return link.body;
}

const steps = [
  { type: 'COPY', args: ['app', '/app/', 'user', '0755'], filesHash: HASH, force: false },
  { type: 'RUN', args: ['echo hi > /app/hi', 'root'], force: false },
  { type: 'ENV', args: ['GREETING', 'hello'], force: false },
  { type: 'WORKDIR', args: ['/app'], force: false },
  { type: 'USER', args: ['user'], force: false },
];

const buildCreate = (w, bid) => w.received.find((c) => c.type === 'create' && c.sandbox.build?.id === bid);
const report = (w, bid, body) => api('POST', `/v1/worker/builds/${bid}`, { body, headers: w.headers() });
const status = (ws, tid, bid, q = '') => api('GET', `/templates/${tid}/builds/${bid}/status${q}`, { key: ws.member });
const entry = (message, level = 'info') => ({ timestamp: new Date().toISOString(), level, message });

async function startBuild(ws, w, name) {
  const req = await requestBuild(ws, name);
  await upload(ws, req.templateID);
  const r = await api('POST', `/v2/templates/${req.templateID}/builds/${req.buildID}`, { key: ws.member,
    body: { fromTemplate: 'base', steps, startCmd: 'python3 -m http.server 8000', readyCmd: 'curl -sf localhost:8000',
      force: false } });
  assert.equal(r.status, 202, r.raw);
  const cmd = await eventually(() => buildCreate(w, req.buildID), { what: `the build ${req.buildID}'s create` });
  return { ...req, cmd };
}

test('a build as the SDK drives it: upload once, steps in a sandbox, log by offset, the template it makes', async () => {
  const A = newWorkspace();
  await setLimit(A, 10);
  const w = await enrolWorker(workers, A);
  const b = await startBuild(A, w, 'app:v1');
  const sb = b.cmd.sandbox;
  assert.equal(sb.template, 'base');
  assert.deepEqual(sb.build.steps.map((s) => s.type), ['COPY', 'RUN', 'ENV', 'WORKDIR', 'USER']);
  assert.match(sb.build.target, new RegExp(`/corral/w${A.id}/${b.templateID}:${b.buildID}$`));
  assert.equal(sb.start, undefined, 'a build runs its steps, not a start command');
  // The build's sandbox is the build's: not one of the workspace's sandboxes.
  const list = await api('GET', '/v1/sandboxes', { key: A.member });
  assert.ok(!list.body.sandboxes.some((s) => s.sandbox_id === sb.id), JSON.stringify(list.body));
  const e2bList = await api('GET', '/sandboxes', { key: A.member });
  assert.ok(!e2bList.body.some((s) => s.sandboxID === sb.id), JSON.stringify(e2bList.body));

  // The files, once more: present now, so no second upload.
  const again = await api('GET', `/templates/${b.templateID}/files/${HASH}`, { key: A.member });
  assert.deepEqual(again.body, { present: true });
  const files = await api('GET', `/v1/worker/build-files/${b.buildID}/${HASH}`, { headers: w.headers() });
  assert.equal(files.status, 200);
  assert.equal(files.raw, FILES.toString());

  assert.equal((await report(w, b.buildID, { logs: [entry('step 1'), entry('step 2')] })).status, 200);
  let s = await status(A, b.templateID, b.buildID);
  assert.equal(s.body.status, 'building');
  assert.deepEqual(s.body.logEntries.map((e) => e.message), ['step 1', 'step 2']);
  assert.equal((await report(w, b.buildID, { logs: [entry('step 3')] })).status, 200);
  s = await status(A, b.templateID, b.buildID, '?logsOffset=2');
  assert.deepEqual(s.body.logEntries.map((e) => e.message), ['step 3']);

  const done = await report(w, b.buildID, { state: 'ready', digest: DIGEST, logs: [entry('pushed')] });
  assert.equal(done.status, 200, done.raw);
  s = await status(A, b.templateID, b.buildID);
  assert.equal(s.body.status, 'ready');
  await eventually(() => w.received.some((c) => c.type === 'kill' && c.sandbox_id === sb.id),
    { what: 'the build sandbox killed once the build is done' });
  assertError(await report(w, b.buildID, { state: 'error', reason: 'late' }), 404);

  // The template: by name, by name:tag, by id; its start command goes with it.
  const tpl = await api('GET', `/templates/${b.templateID}`, { key: A.member });
  assert.equal(tpl.body.buildID, b.buildID);
  assert.deepEqual(tpl.body.names, ['app']);
  assert.equal(tpl.body.builds[0].status, 'ready');
  assert.equal((await api('GET', '/templates/aliases/app', { key: A.member })).body.templateID, b.templateID);
  for (const ref of ['app', 'app:v1', b.templateID]) {
    const c = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: ref } });
    assert.equal(c.status, 201, `${ref}: ${c.raw}`);
    const cmd = await eventually(() => w.received.find((x) => x.type === 'create' && x.sandbox.id === c.body.sandbox_id));
    assert.match(cmd.sandbox.image, new RegExp(`/corral/w${A.id}/${b.templateID}@${DIGEST}$`));
    assert.equal(cmd.sandbox.template, 'base');
    assert.deepEqual(cmd.sandbox.start, { cmd: 'python3 -m http.server 8000', ready: 'curl -sf localhost:8000',
      user: 'user', workdir: '/app', timeout_s: 7 });
  }
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'app:nope' } }), 404, /not found/);
  const tags = await api('GET', `/templates/${b.templateID}/tags`, { key: A.member });
  assert.deepEqual(tags.body.map((t) => t.tag).sort(), ['v1']);
  const tagged = await api('POST', '/templates/tags', { key: A.member, body: { target: 'app:v1', tags: ['prod'] } });
  assert.equal(tagged.status, 201, tagged.raw);
  assert.equal(tagged.body.buildID, b.buildID);
  assert.equal((await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'app:prod' } })).status, 201);
  assert.equal((await api('DELETE', '/templates/tags', { key: A.member, body: { name: 'app', tags: ['prod'] } })).status, 204);
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'app:prod' } }), 404);

  // Only an owner deletes it; then it is gone for creates too.
  assertError(await api('DELETE', `/templates/${b.templateID}`, { key: A.member }), 403, /owner/);
  assert.equal((await api('DELETE', `/templates/${b.templateID}`, { key: A.owner })).status, 204);
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'app' } }), 404);
  // Its images leave the workers that may hold them.
  const gone = await eventually(() => w.received.find((c) => c.type === 'template_remove'),
    { what: 'a template_remove command' });
  assert.match(gone.args.repository, new RegExp(`/corral/w${A.id}/${b.templateID}$`));
});

test('another workspace: the same name is its own template; nothing of the first is found, by id, name, files or worker', async () => {
  const A = newWorkspace(), B = newWorkspace();
  await setLimit(A, 10);
  await setLimit(B, 10);
  const wa = await enrolWorker(workers, A), wb = await enrolWorker(workers, B);
  const a = await startBuild(A, wa, 'shared-name');
  const bReq = await requestBuild(B, 'shared-name');
  assert.notEqual(bReq.templateID, a.templateID);
  // B's key on A's template: as absent.
  assertError(await api('GET', `/templates/${a.templateID}`, { key: B.member }), 404);
  assertError(await api('GET', `/templates/${a.templateID}/files/${HASH}`, { key: B.member }), 404);
  assertError(await status(B, a.templateID, a.buildID), 404);
  assertError(await api('POST', `/v2/templates/${a.templateID}/builds/${a.buildID}`, { key: B.member,
    body: { fromTemplate: 'base' } }), 404);
  assertError(await api('GET', `/templates/${a.templateID}/tags`, { key: B.member }), 404);
  assertError(await api('DELETE', `/templates/${a.templateID}`, { key: B.owner }), 404);
  // A's files are not B's: B's build of the same COPY must upload its own.
  const bLink = await api('GET', `/templates/${bReq.templateID}/files/${HASH}`, { key: B.member });
  assert.equal(bLink.body.present, false);
  // B's worker on A's build: not one it runs.
  assertError(await api('GET', `/v1/worker/build-files/${a.buildID}/${HASH}`, { headers: wb.headers() }), 404);
  assertError(await report(wb, a.buildID, { state: 'ready', digest: DIGEST }), 404);
  assertError(await report(wb, a.buildID, { logs: [entry('forged')] }), 404);
  assert.equal((await report(wa, a.buildID, { state: 'ready', digest: DIGEST })).status, 200);
  // B cannot create from, list or alias-check A's template.
  const own = (await api('GET', '/templates', { key: B.member })).body.filter((t) => t.templateID.startsWith('tpl-'));
  assert.deepEqual(own.map((t) => t.templateID), [bReq.templateID]);
  assertError(await api('POST', '/v1/sandboxes', { key: B.member, body: { template: a.templateID } }), 404);
  assertError(await api('POST', '/v1/sandboxes', { key: B.member, body: { template: 'shared-name' } }), 409, /no ready build/);
});

test('the upload URL: once, for its hash only, unforgeable, capped', async () => {
  const A = newWorkspace();
  const req = await requestBuild(A, 'uploads');
  const link = await api('GET', `/templates/${req.templateID}/files/${HASH}`, { key: A.member });
  const url = new URL(link.body.url);
  assert.equal(url.pathname, `/templatefiles/${HASH}`);
  const other = createHash('sha256').update('x').digest('hex');
  const swapped = (await fetch(url.href.replace(HASH, other), { method: 'PUT', body: 'x' }));
  assert.equal(swapped.status, 403);
  const t = url.searchParams.get('t');
  const forged = new URL(url);
  forged.searchParams.set('t', t.slice(0, -1) + (t.endsWith('0') ? '1' : '0'));
  assert.equal((await fetch(forged, { method: 'PUT', body: FILES })).status, 403);
  assert.equal((await fetch(url, { method: 'PUT', body: FILES })).status, 200);
  const twice = await fetch(url, { method: 'PUT', body: FILES });
  assert.equal(twice.status, 409, 'an upload URL is used once');
  const big = await api('GET', `/templates/${req.templateID}/files/${other}`, { key: A.member });
  const over = await fetch(big.body.url, { method: 'PUT', body: Buffer.alloc(65 << 20) });
  assert.equal(over.status, 413);
  // Under the cap each, over the workspace's budget together (1 MiB in this
  // profile): the third is refused, and what was refused is not stored.
  const sizes = [400 << 10, 400 << 10, 400 << 10];
  const answers = [];
  for (const [i, n] of sizes.entries()) {
    const h = createHash('sha256').update(`budget-${i}`).digest('hex');
    const l = await api('GET', `/templates/${req.templateID}/files/${h}`, { key: A.member });
    answers.push({ h, status: (await fetch(l.body.url, { method: 'PUT', body: Buffer.alloc(n, i) })).status });
  }
  assert.deepEqual(answers.map((a) => a.status), [200, 200, 413]);
  const third = await api('GET', `/templates/${req.templateID}/files/${answers[2].h}`, { key: A.member });
  assert.equal(third.body.present, false);
});

test('a workspace\'s templates stop at the operator\'s max_templates (3 in this profile); a known name still builds', async () => {
  const A = newWorkspace();
  for (const n of ['one', 'two', 'three']) await requestBuild(A, n);
  assertError(await api('POST', '/v3/templates', { key: A.member, body: { name: 'four' } }), 403, /max_templates/);
  await requestBuild(A, 'two:v2');
  assert.equal((await api('GET', '/templates', { key: A.member })).body.filter((t) => t.templateID.startsWith('tpl-')).length, 3);
});

test('refusals: bad steps, bases that are Corral\'s own images, files not uploaded, a build started twice', async () => {
  const A = newWorkspace();
  const req = await requestBuild(A, 'refusals');
  const start = (body) => api('POST', `/v2/templates/${req.templateID}/builds/${req.buildID}`, { key: A.member, body });
  assertError(await start({ fromImage: '127.0.0.1:5000/corral/fleet/tpl-x:y' }), 400, /not an image a build may start from/);
  assertError(await start({ fromImage: 'corral-snap:snap-00000000000000000000' }), 400, /not an image/);
  assertError(await start({ fromTemplate: 'base', steps: [{ type: 'FROM', args: ['x'] }] }), 400, /steps\[0\]: type/);
  assertError(await start({ fromTemplate: 'base', steps: [{ type: 'COPY', args: ['a', '/b'],
    filesHash: 'c'.repeat(64) }] }), 400, /were not uploaded/);
  assertError(await api('POST', '/v3/templates', { key: A.member, body: { name: 'Bad Name' } }), 400, /name/);
  assertError(await api('PATCH', `/v2/templates/${req.templateID}`, { key: A.member, body: { public: true } }), 403, /operator/);
});

test('a build whose sandbox ends without its worker\'s word fails, saying why; an error report names its step', async () => {
  const A = newWorkspace();
  await setLimit(A, 10);
  const w = await enrolWorker(workers, A);
  const b = await startBuild(A, w, 'dies');
  assert.equal((await api('DELETE', `/v1/sandboxes/${b.cmd.sandbox.id}`, { key: A.member })).status, 204);
  const s = await status(A, b.templateID, b.buildID);
  assert.equal(s.body.status, 'error');
  assert.match(s.body.reason.message, /the build's sandbox/);

  const c = await startBuild(A, w, 'fails');
  await report(w, c.buildID, { logs: [entry('make: *** [all] Error 2', 'error')] });
  assert.equal((await report(w, c.buildID, { state: 'error', step: '2', reason: 'step 2: exit code 2' })).status, 200);
  const e = await status(A, c.templateID, c.buildID);
  assert.equal(e.body.status, 'error');
  assert.equal(e.body.reason.step, '2');
  assert.equal(e.body.reason.message, 'step 2: exit code 2');
  assert.deepEqual(e.body.reason.logEntries.map((x) => x.message), ['make: *** [all] Error 2']);
  await eventually(() => w.received.some((x) => x.type === 'kill' && x.sandbox_id === c.cmd.sandbox.id),
    { what: 'the failed build\'s sandbox killed' });
  assertError(await api('POST', '/v1/sandboxes', { key: A.member, body: { template: 'fails' } }), 409, /no ready build/);
});
