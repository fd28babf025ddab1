// Faults a production worker meets (issue 8): a container dying under it is
// seen by the API within a second and stops counting; a workerd killed with
// -9 and restarted takes the next create in normal time and its sandboxes'
// traffic sees no 403 while gateways still cache its previous key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, newWorkspace, eventually, sleep } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, restartWorker, createSb, getSb, docker, ctrsOf, enrolledAs,
  envdOf, envdRun, envdToken, stopWorkerd, logOf } from './helpers.mjs';

let A, s;
before(async () => {
  A = newWorkspace();
  s = await stackWorker(A, { extra: 'cpu_cores = 64\nmemory_mb = 65536' });
});
after(async () => { if (process.env.KEEP_LOG) console.log(require_log()); await cleanupWorkers(); });
const require_log = () => (s ? logOf(s) : '');

const active = async () => (await api('GET', '/v1/workspace', { key: A.member })).body.active_sandboxes;
const gateway = `https://localhost:${Number(new URL(process.env.CORRAL_URL).port) + 1}`;
const viaGateway = (sbid) => fetch(`${gateway}/files?path=/etc/hostname`, {
  headers: { 'E2b-Sandbox-Id': sbid, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': envdToken(sbid) } });

async function running() {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  return r.body.sandbox_id;
}

// The API must say so within 1 s, whatever the long-poll is doing: three
// deaths in a row, so a report that waits for the poll's end cannot pass by luck.
test('docker kill of a sandbox container: exited in the API within 1 s, no longer counted', async () => {
  for (let i = 0; i < 3; i++) {
    const sbid = await running();
    const before = await active();
    const [c] = await ctrsOf(s.id, sbid);
    // sleep: the deaths come at different points of the poll, whatever it waits for.
    await sleep(300 + i * 600);
    assert.equal((await docker('POST', `/containers/${c.Id}/kill`)).status, 204);
    await eventually(async () => (await getSb(A, sbid)).body.state === 'exited',
      { timeout: 1000, every: 50, what: `sandbox ${sbid} exited in the API within 1 s` });
    assert.equal(await active(), before - 1, 'admission stopped counting it');
  }
});

test("a sandbox's main process exiting: exited with its code within 1 s", async () => {
  const sbid = await running();
  const envd = await envdOf(s.id, sbid);
  await envdRun(envd, 'kill -TERM 1', { user: 'root' }).catch(() => {});
  const g = await eventually(async () => { const x = await getSb(A, sbid); return x.body.state === 'exited' && x; },
    { timeout: 1000, every: 50, what: 'exited within 1 s' });
  assert.match(g.body.reason || g.raw, /exit code/);
});

test('kill -9 and restart of workerd: no 403 for its sandboxes, the next create answered in normal time', async () => {
  const sbid = await running();
  assert.equal((await viaGateway(sbid)).status, 200); // the gateway caches the route and key now
  const enrolments = enrolledAs(s.files.log).length;
  // Requests all through the restart: while workerd is down the gateway keeps
  // looking the route up (and caching the old key); once it is back, gateways
  // still sign with that key for their cache's TTL. 503 (retry) while it is
  // down, 200 after; never 403.
  const statuses = [];
  let back = 0;
  const load = (async () => {
    while (!back || Date.now() - back < 3000) {
      statuses.push((await viaGateway(sbid)).status);
      // sleep: the load's pace, a request every 25 ms (until 3 s after the restart).
      await sleep(25);
    }
  })();
  await stopWorkerd(s.wd, 'SIGKILL');
  restartWorker(s);
  await eventually(() => enrolledAs(s.files.log).length > enrolments, { timeout: 20000, every: 20, what: 're-enrolment' });
  back = Date.now();
  await load;
  assert.ok(!statuses.includes(403), `403 during the restart: ${statuses.join(',')}`);
  assert.deepEqual([...new Set(statuses)].filter((x) => x !== 200 && x !== 503), [], `statuses: ${statuses.join(',')}`);
  assert.equal(statuses.at(-1), 200, `statuses: ${statuses.join(',')}`);
  const c0 = Date.now();
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  // Redelivery after an abandoned poll costs 10 s; a normal create is a second or two.
  assert.ok(Date.now() - c0 < 8000, `the first create after the restart took ${Date.now() - c0} ms`);
});
