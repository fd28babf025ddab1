// A network policy recorded by updateNetwork (PUT /sandboxes/{id}/network)
// is applied when the sandbox resumes (issue 25, decision 0074), with the
// loopback stand-ins of tests/lib/standins.mjs: an allow-list changed while
// running is the old one until the pause, the new one after the resume,
// whichever way it was paused. A resume that boots afresh may also add or
// remove the proxy; one that keeps the memory refuses that, saying why, and
// the SDK's connect({onResume: 'reboot'}) then applies it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { ALL_TRAFFIC, SDK } from './sdk.mjs';
import { withSandbox, Sandbox, MODE, useStandins, fetchFrom } from './lib.mjs';
import { INET, PORT } from '../lib/standins.mjs';

const tag = `[${MODE} ${SDK}]`;
useStandins();
const api = `http://api.allowed.test:${PORT}/`, other = `http://other.test:${PORT}/`;
const literal = `http://${INET.addrs[0]}:${PORT}/`;
const URLS = [api, other, literal];
const onlyApi = { [api]: 'public stand-in', [other]: 'HTTP 403', [literal]: 'HTTP 403' };
const onlyOther = { [api]: 'HTTP 403', [other]: 'public stand-in', [literal]: 'HTTP 403' };
const proxyVar = async (sbx) => (await sbx.commands.run('echo "${HTTP_PROXY:-unset}"')).stdout.trim();
const native = async (id) => (await fetch(`${process.env.E2B_API_URL}/v1/sandboxes/${id}`, {
  headers: { 'X-API-Key': process.env.E2B_API_KEY } })).json();

for (const keepMemory of [true, false]) {
  test(`${tag} an allow-list changed by updateNetwork while paused: the old one until the pause, the new one after a resume (keepMemory ${keepMemory})`, async () => {
    await withSandbox({ network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }, async (sbx) => {
      assert.deepEqual(await fetchFrom(sbx, URLS), onlyApi);
      assert.equal(await sbx.pause({ keepMemory }), true);
      await Sandbox.updateNetwork(sbx.sandboxId, { denyOut: [ALL_TRAFFIC], allowOut: ['other.test'] });
      assert.equal((await native(sbx.sandboxId)).egress_next.egress.allow[0], 'other.test', 'recorded');
      const back = await Sandbox.connect(sbx.sandboxId);
      assert.deepEqual(await fetchFrom(back, URLS), onlyOther, 'the new stand-in reached, the old one not');
      const view = await native(sbx.sandboxId);
      assert.equal(view.egress.allow[0], 'other.test', 'the policy in force');
      assert.equal(view.egress_next, null, 'nothing left to apply');
    });
  });
}

test(`${tag} a resume without memory removes a policy, then adds one: the proxy and its variables follow`, async () => {
  await withSandbox({ network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }, async (sbx) => {
    await sbx.files.write('/home/user/kept.txt', 'kept');
    assert.deepEqual(await fetchFrom(sbx, URLS), onlyApi);
    await sbx.updateNetwork({}); // no policy: public destinations open, directly
    assert.equal(await sbx.pause({ keepMemory: false }), true);
    let back = await Sandbox.connect(sbx.sandboxId);
    assert.equal(await proxyVar(back), 'unset', 'no proxy variables without a proxy');
    assert.deepEqual(await fetchFrom(back, URLS),
      { [api]: 'URLError', [other]: 'URLError', [literal]: 'public stand-in' },
      'no policy: the stand-in reached directly (its names are known only to proxies)');
    assert.equal((await native(sbx.sandboxId)).egress, null);
    await back.updateNetwork({ denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] });
    assert.equal(await back.pause({ keepMemory: false }), true);
    back = await Sandbox.connect(sbx.sandboxId);
    assert.match(await proxyVar(back), /^http:\/\/corral-egress:/);
    assert.deepEqual(await fetchFrom(back, URLS), onlyApi, 'a policy again, through a proxy again');
    assert.equal(await back.files.read('/home/user/kept.txt'), 'kept', 'the files stayed throughout');
  });
});

test(`${tag} a resume keeping the memory refuses to add a policy (409, why); a fresh start applies it`, async () => {
  await withSandbox({}, async (sbx) => {
    assert.equal((await fetchFrom(sbx, [literal]))[literal], 'public stand-in');
    await sbx.updateNetwork({ denyOut: [ALL_TRAFFIC] });
    assert.equal(await sbx.pause(), true);
    await assert.rejects(Sandbox.connect(sbx.sandboxId), /fresh start/, 'refused, naming why');
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused', 'and it stays paused');
    const back = SDK === 'e2b'
      ? await Sandbox.connect(sbx.sandboxId, { onResume: 'reboot' })
      : await resumeFresh(sbx.sandboxId);
    assert.deepEqual(await fetchFrom(back, [literal]), { [literal]: 'HTTP 403' }, 'the new policy holds');
  });
});

test(`${tag} a resume keeping the memory refuses to remove a policy (409, why); the native resume with keep_memory false applies it`, async () => {
  await withSandbox({ network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }, async (sbx) => {
    await sbx.updateNetwork({});
    assert.equal(await sbx.pause(), true);
    const refused = await postJson(`/sandboxes/${sbx.sandboxId}/resume`, {});
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.text, /removes an egress policy.*fresh start/);
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused', 'and it stays paused');
    const bad = await postJson(`/v1/sandboxes/${sbx.sandboxId}/resume`, { keep_memory: 'no' });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /keep_memory/);
    const fresh = await postJson(`/v1/sandboxes/${sbx.sandboxId}/resume`, { keep_memory: false });
    assert.equal(fresh.status, 200, fresh.text);
    const back = await Sandbox.connect(sbx.sandboxId);
    assert.equal(await proxyVar(back), 'unset', 'booted afresh without the proxy');
    assert.equal((await native(sbx.sandboxId)).egress, null);
  });
});

async function postJson(path, body) {
  const r = await fetch(`${process.env.E2B_API_URL}${path}`, {
    method: 'POST', headers: { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
}

// The older SDK has no onResume: the API's resume with {memory: false}.
async function resumeFresh(id) {
  const r = await fetch(`${process.env.E2B_API_URL}/sandboxes/${id}/resume`, {
    method: 'POST', headers: { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ memory: false }) });
  assert.equal(r.status, 201, await r.text());
  return Sandbox.connect(id);
}

// A change that failed after the container moved (dockerd going away before
// the old network was removed) comes again and finds the container where it
// wants it: what the first try left must go then. Stood in for by the open
// network a sandbox given a policy leaves, made by hand with its labels; the
// next change (another allow-list, applied at the resume) must remove it.
test(`${tag} a network left by a change that failed after its move is removed by the next change`, async () => {
  await withSandbox({ network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }, async (sbx) => {
    const docker = (...a) => execFileSync('docker', a, { encoding: 'utf8', timeout: 20_000 }).trim();
    const wid = docker('ps', '--filter', `label=corral.sandbox=${sbx.sandboxId}`, '--format',
      '{{.Label "corral.worker"}}').split('\n')[0];
    assert.match(wid, /^[0-9a-f]{16}$/, 'the control: its container names its worker');
    const left = `corral-${sbx.sandboxId}-${wid}`;
    docker('network', 'create', '--label', `corral.sandbox=${sbx.sandboxId}`,
      '--label', `corral.worker=${wid}`, '--label', 'corral.role=sandbox', left);
    const exists = () => docker('network', 'ls', '-q', '--filter', `name=^${left}$`) !== '';
    assert.ok(exists(), 'the control: the stand-in leftover exists');
    assert.equal(await sbx.pause(), true);
    // Paused: recorded, applied by the resume's change (running, it would be live).
    await Sandbox.updateNetwork(sbx.sandboxId, { denyOut: [ALL_TRAFFIC], allowOut: ['other.test'] });
    const back = await Sandbox.connect(sbx.sandboxId);
    assert.deepEqual(await fetchFrom(back, URLS), onlyOther, 'the new policy applied');
    assert.equal(exists(), false, `${left} is still there after the change came again`);
  });
});
