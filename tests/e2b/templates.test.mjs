// Templates through the SDK's own Template API (issue 28, docs/templates.md):
// Template().fromTemplate('base') with copy (a folder with a mode, an owner
// and a symlink), runCmd as root, setEnvs, setWorkdir, setUser and a start
// command with a ready check, built by Template.build; Sandbox.create(name)
// then runs the service and sees every file, variable and user; a second
// build of the same template reuses every layer (its log says so); another
// workspace cannot create from it, see it or delete it; a template built while
// one worker holds it starts on the other (pulled from the registry).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sandbox } from './lib.mjs';
import { Template, SDK } from './sdk.mjs';
import { MODE } from './lib.mjs';
import { docker } from '../lib/engine.mjs';
import { until } from '../lib/poll.mjs';

const tag = `[${MODE} ${SDK}]`;
const other = { apiKey: process.env.CORRAL_OTHER_KEY };
const ctx = mkdtempSync(join(tmpdir(), 'corral-tpl-'));
after(() => rmSync(ctx, { recursive: true, force: true }));

mkdirSync(join(ctx, 'app', 'lib'), { recursive: true });
writeFileSync(join(ctx, 'app', 'run.sh'), '#!/bin/sh\necho run\n');
writeFileSync(join(ctx, 'app', 'lib', 'data.txt'), 'data from the build context\n');
symlinkSync('lib/data.txt', join(ctx, 'app', 'link.txt'));

const name = `sdk-tpl-${process.pid}-${MODE}-${SDK}`.replace(/[^a-z0-9-]/g, '-');
const recipe = () => Template({ fileContextPath: ctx })
  .fromTemplate('base')
  .copy('app', '/opt/app/', { user: 'user', mode: 0o755 })
  .runCmd('echo built-as-$(whoami) > /opt/built', { user: 'root' })
  .setEnvs({ GREETING: 'hello from the template' })
  .setWorkdir('/opt/app')
  .setUser('user')
  .setStartCmd('python3 -m http.server 8000 --directory /opt/app', 'curl -sf http://localhost:8000/run.sh');

async function build() {
  const logs = [];
  const info = await Template.build(recipe(), name, { onBuildLogs: (e) => logs.push(e.message), skipCache: false });
  return { info, logs };
}

test(`${tag} Template.build from base, then Sandbox.create(name): files, modes, owner, symlink, env, user, its service`, async () => {
  const { info, logs } = await build();
  assert.match(info.templateId, /^tpl-[0-9a-f]{20}$/);
  assert.ok(logs.some((l) => /COPY/.test(l)), logs.join('\n'));
  const sbx = await Sandbox.create(name, { timeoutMs: 120_000 });
  try {
    const run = (cmd) => sbx.commands.run(cmd).then((r) => r.stdout.trim());
    assert.equal(await run('cat /opt/built'), 'built-as-root');
    assert.equal(await run('cat /opt/app/link.txt'), 'data from the build context');
    assert.equal(await run('readlink /opt/app/link.txt'), 'lib/data.txt');
    assert.equal(await run('stat -c %a:%U /opt/app/run.sh'), '755:user');
    assert.equal(await run('echo $GREETING'), 'hello from the template');
    // The start command's service answers (the create waited for its ready check).
    assert.equal(await run('curl -sf http://localhost:8000/run.sh'), '#!/bin/sh\necho run');
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).templateId, name);
  } finally {
    await sbx.kill();
  }
});

test(`${tag} a second build of the unchanged template reuses every layer`, async () => {
  const { logs } = await build();
  const cached = logs.filter((l) => /^CACHED/.test(l));
  const ran = logs.filter((l) => /^\[\d+\/\d+\]/.test(l));
  assert.ok(cached.length >= 5, `every step cached:\n${logs.join('\n')}`);
  assert.equal(ran.length, 0, `nothing ran again:\n${ran.join('\n')}`);
});

// The registry's names of the template on this machine's dockerd (tags and digests).
async function localRefs(templateId) {
  const all = (await docker('GET', '/images/json')).body;
  return all.flatMap((i) => [...(i.RepoTags || []), ...(i.RepoDigests || [])])
    .filter((r) => r.includes(`/${templateId}:`) || r.includes(`/${templateId}@`));
}

test(`${tag} a worker without the image pulls it from the registry: two sandboxes at once, one per worker`, async () => {
  const tid = (await (await fetch(`${process.env.E2B_API_URL}/templates/aliases/${name}`, {
    headers: { 'X-API-Key': process.env.E2B_API_KEY } })).json()).templateID;
  const refs = await localRefs(tid);
  assert.ok(refs.length > 0, 'the build left its image on the builder');
  // Both workers share this machine's dockerd: the image is made absent for
  // them, so a create must pull it from the registry.
  for (const r of refs) assert.ok([200, 404].includes((await docker('DELETE', `/images/${encodeURIComponent(r)}`)).status));
  assert.deepEqual(await localRefs(tid), []);
  const made = await Promise.all([0, 1].map(() => Sandbox.create(name, { timeoutMs: 120_000 })));
  try {
    for (const s of made) assert.equal((await s.commands.run('cat /opt/built')).stdout.trim(), 'built-as-root');
    const workers = await Promise.all(made.map(async (s) => (await (await fetch(
      `${process.env.E2B_API_URL}/v1/sandboxes/${s.sandboxId}`, { headers: { 'X-API-Key': process.env.E2B_API_KEY } })).json()).worker_id));
    assert.equal(new Set(workers).size, 2, `one on each worker: ${workers}`);
    assert.ok((await localRefs(tid)).some((r) => r.includes('@sha256:')), 'pulled by its digest');
  } finally {
    await Promise.all(made.map((s) => s.kill()));
  }
});

test(`${tag} fromImage of a public registry: no registry is reachable here, and the build's error names the image and the registry tried`, async () => {
  await assert.rejects(Template.build(Template().fromImage('python:3.12').runCmd('true'), `${name}-public`),
    (e) => /python:3\.12/.test(e.message) && /docker\.io/.test(e.message));
});

const CLI = new URL('./node_modules/@e2b/cli/dist/index.js', import.meta.url).pathname;
const asMember = { headers: { 'X-API-Key': process.env.E2B_API_KEY } };
const getJson = async (path) => (await fetch(`${process.env.E2B_API_URL}${path}`, asMember)).json();

// The CLI brings its own SDK: run once, with the pinned SDK's files.
if (SDK === 'e2b') test(`${tag} the CLI: e2b template create from a Dockerfile whose FROM is the workspace's template in Corral's registry`, async () => {
  const { templateID } = await getJson(`/templates/aliases/${name}`);
  const { buildID } = await getJson(`/templates/${templateID}`);
  const ws = (await getJson('/v1/workspace')).id;
  const registry = `127.0.0.1:${Number(process.env.CORRAL_PORT) + 3}`; // conf/stack.sh's, off the default port
  const dir = mkdtempSync(join(tmpdir(), 'corral-cli-'));
  const cliName = `${name}-cli`;
  try {
    writeFileSync(join(dir, 'Dockerfile'),
      `FROM ${registry}/corral/w${ws}/${templateID}:${buildID}\nRUN echo from-the-cli > /tmp/cli.txt\n`);
    const out = await promisify(execFile)('node', [CLI, 'template', 'create', cliName, '-p', dir,
      '--cpu-count', '1', '--memory-mb', '512'], { env: process.env, timeout: 300_000 });
    assert.match(out.stdout + out.stderr, /Building sandbox template \S+ finished/, out.stdout + out.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const sbx = await Sandbox.create(cliName, { timeoutMs: 120_000 });
  try {
    assert.equal((await sbx.commands.run('cat /tmp/cli.txt')).stdout.trim(), 'from-the-cli');
    assert.equal((await sbx.commands.run('cat /opt/built')).stdout.trim(), 'built-as-root', 'its base template\'s files');
  } finally {
    await sbx.kill();
  }
});

test(`${tag} another workspace: cannot create from it, find it or delete it`, async () => {
  await assert.rejects(Sandbox.create(name, { timeoutMs: 30_000, ...other }), /not found|404/i);
  assert.equal(await Template.exists(name, other), false);
  const r = await fetch(`${process.env.E2B_API_URL}/templates`, { headers: { 'X-API-Key': other.apiKey } });
  assert.ok(!(await r.json()).some((t) => (t.names || []).includes(name)));
});

test(`${tag} the owner deletes it: gone for creates, and its images leave the workers`, async () => {
  const { templateID } = await getJson(`/templates/aliases/${name}`);
  assert.ok((await localRefs(templateID)).length > 0, 'the template\'s image is on this machine');
  const del = await fetch(`${process.env.E2B_API_URL}/templates/${templateID}`,
    { method: 'DELETE', headers: { 'X-API-Key': process.env.CORRAL_OWNER_KEY } });
  assert.equal(del.status, 204);
  await assert.rejects(Sandbox.create(name, { timeoutMs: 30_000 }), /not found|404/i);
  await until(async () => (await localRefs(templateID)).length === 0, { timeoutMs: 30_000, everyMs: 250 });
  assert.deepEqual(await localRefs(templateID), []);
});
