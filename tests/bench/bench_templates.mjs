// Issue 28's benchmark: a small template (from base, one RUN, one COPY of
// 10 MB) built cold and fully cached through the SDK's Template.build,
// against `docker build` of the equivalent Dockerfile on the same dockerd in
// the same run; then the first create of the template on a dockerd that must
// pull it, and creates after, against creates from base. Medians of a few
// runs: these machines are shared and noisy, so ratios are what to read.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sandbox, Template } from '../e2b/sdk.mjs';
import { docker } from '../lib/engine.mjs';

const RUNS = Number(process.env.BENCH_TEMPLATE_RUNS || 3);
const CREATES = Number(process.env.BENCH_TEMPLATE_CREATES || 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const timed = async (fn) => { const t = performance.now(); await fn(); return performance.now() - t; };

const ctx = mkdtempSync(join(tmpdir(), 'corral-bench-tpl-'));
writeFileSync(join(ctx, 'blob'), randomBytes(10 << 20));
writeFileSync(join(ctx, 'Dockerfile'), 'FROM corral/base\nRUN echo built > /built\nCOPY blob /blob\n');
const name = `bench-tpl-${Date.now().toString(36)}`;
const recipe = () => Template({ fileContextPath: ctx }).fromTemplate('base')
  .runCmd('echo built > /built', { user: 'root' }).copy('blob', '/blob');

try {
  // Once, untimed: the registry gets the base image's layers (every later
  // push sends only the build's own).
  await Template.build(recipe(), name, { skipCache: true });
  const dockerMs = [], coldMs = [], cachedMs = [];
  for (let i = 0; i < RUNS; i++) {
    dockerMs.push(await timed(async () => execFileSync('docker',
      ['build', '-q', '--no-cache', '-t', `${name}-baseline`, ctx], { stdio: 'pipe' })));
    coldMs.push(await timed(() => Template.build(recipe(), name, { skipCache: true })));
    cachedMs.push(await timed(() => Template.build(recipe(), name)));
  }
  console.log(`template build (from base, RUN, COPY of 10 MB), median of ${RUNS}:`);
  console.log(`  docker build --no-cache  ${median(dockerMs).toFixed(0)} ms`);
  console.log(`  Corral, cold             ${median(coldMs).toFixed(0)} ms   ratio ${(median(coldMs) / median(dockerMs)).toFixed(2)} (goal < 1.3)`);
  console.log(`  Corral, fully cached     ${median(cachedMs).toFixed(0)} ms   (goal < 2000 ms)`);

  // The template's image made absent: the next create pulls it.
  const tid = (await (await fetch(`${process.env.E2B_API_URL}/templates/aliases/${name}`,
    { headers: { 'X-API-Key': process.env.E2B_API_KEY } })).json()).templateID;
  for (const img of (await docker('GET', '/images/json')).body) {
    for (const r of [...(img.RepoTags || []), ...(img.RepoDigests || [])]) {
      if (r.includes(`/${tid}:`) || r.includes(`/${tid}@`)) await docker('DELETE', `/images/${encodeURIComponent(r)}`);
    }
  }
  const createKill = async (t) => { let s; const ms = await timed(async () => { s = await Sandbox.create(t, { timeoutMs: 120_000 }); }); await s.kill(); return ms; };
  const first = await createKill(name);
  const fromTpl = [], fromBase = [];
  for (let i = 0; i < CREATES; i++) {
    fromTpl.push(await createKill(name));
    fromBase.push(await createKill('base'));
  }
  console.log(`creates (p50 of ${CREATES}):`);
  console.log(`  first, pulling the image ${first.toFixed(0)} ms   ratio to base ${(first / median(fromBase)).toFixed(2)}`);
  console.log(`  of the template after    ${median(fromTpl).toFixed(0)} ms   ratio to base ${(median(fromTpl) / median(fromBase)).toFixed(2)}`);
  console.log(`  from base                ${median(fromBase).toFixed(0)} ms`);
} finally {
  rmSync(ctx, { recursive: true, force: true });
  await docker('DELETE', `/images/${name}-baseline?force=1`).catch(() => {});
}
