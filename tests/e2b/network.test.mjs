// The SDK's network options against Corral's egress enforcement, with the
// stand-in hosts of tests/lib/standins.mjs (the workerd of tests/e2b/run.sh
// resolves their names for its egress proxies), and a sandbox created with
// allowPublicTraffic: false probed directly from another sandbox.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_TRAFFIC } from './sdk.mjs';
import { withSandbox, Sandbox, useStandins, fetchFrom, sleep } from './lib.mjs';
import { INET, PRIV, PORT } from '../lib/standins.mjs';
import { sandboxIp } from '../lib/engine.mjs';

useStandins();
const api = `http://api.allowed.test:${PORT}/`, other = `http://other.test:${PORT}/`;
const literal = `http://${INET.addrs[0]}:${PORT}/`, priv = `http://${PRIV.addrs[0]}:${PORT}/`;

test('no network options: public destinations open, private ones closed', async () => {
  await withSandbox({}, async (sbx) => {
    const got = await fetchFrom(sbx, [literal, priv]);
    assert.equal(got[literal], 'public stand-in');
    assert.notEqual(got[priv], 'private stand-in');
  });
});

test('denyOut ALL_TRAFFIC + allowOut a name: only that name, through the proxy', async () => {
  await withSandbox({ network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }, async (sbx) => {
    const got = await fetchFrom(sbx, [api, other, literal]);
    assert.deepEqual(got, { [api]: 'public stand-in', [other]: 'HTTP 403', [literal]: 'HTTP 403' });
  });
});

// Decision 0044: a pause keeps the sandbox's network, proxy and policy.
test('a paused and resumed sandbox keeps its egress policy: the same name allowed, the rest refused', async () => {
  await withSandbox({ network: { denyOut: [ALL_TRAFFIC], allowOut: ['api.allowed.test'] } }, async (sbx) => {
    const want = { [api]: 'public stand-in', [other]: 'HTTP 403', [literal]: 'HTTP 403' };
    assert.deepEqual(await fetchFrom(sbx, [api, other, literal]), want);
    assert.equal(await sbx.pause(), true);
    const back = await Sandbox.connect(sbx.sandboxId);
    assert.deepEqual(await fetchFrom(back, [api, other, literal]), want);
  });
});

test('allowInternetAccess: false reaches nothing', async () => {
  await withSandbox({ allowInternetAccess: false }, async (sbx) => {
    const got = await fetchFrom(sbx, [api, literal]);
    assert.deepEqual(got, { [api]: 'HTTP 403', [literal]: 'HTTP 403' });
  });
});

test('denyOut a CIDR only: the rest stays open, the denied address is refused whatever its name', async () => {
  await withSandbox({ network: { denyOut: [`${INET.addrs[1]}/32`] } }, async (sbx) => {
    const got = await fetchFrom(sbx, [api, other]);
    assert.deepEqual(got, { [api]: 'public stand-in', [other]: 'HTTP 403' });
    // Its proxy takes a new policy at once (decision 0091): within a few
    // tries (its worker gets the command, the proxy reloads).
    await sbx.updateNetwork({ denyOut: [ALL_TRAFFIC] });
    let now;
    for (let i = 0; i < 20 && now !== 'HTTP 403'; i++) {
      // sleep: between tries, 20 at most.
      if (i) await sleep(100);
      now = (await fetchFrom(sbx, [api]))[api];
    }
    assert.equal(now, 'HTTP 403', 'the running sandbox follows the new policy');
  });
});

test('allowPublicTraffic: false: another sandbox cannot reach its services directly', async () => {
  await withSandbox({ network: { allowPublicTraffic: false } }, async (priv8) => {
    await priv8.commands.run('python3 -m http.server 8002', { background: true });
    await priv8.commands.run('for i in $(seq 50); do python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 8002), 1)" 2>/dev/null && break; sleep 0.1; done');
    const ip = await sandboxIp(priv8.sandboxId);
    await withSandbox({ secure: false }, async (other8) => {
      const got = await fetchFrom(other8, [`http://${ip}:8002/`, `http://${ip}:49983/health`]);
      for (const [u, r] of Object.entries(got)) assert.match(r, /Error|timeout/i, `${u}: ${r}`);
    });
  });
});

test('a bad egress entry is refused by the API with the field named', async () => {
  await assert.rejects(Sandbox.create('base', { network: { denyOut: ['not a cidr'] } }), /denyOut\[0\]/);
});
