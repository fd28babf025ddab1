// What a kill leaves (issue 11, decisions 0033 and 0044): the sandbox's envd
// access token and traffic token are refused by the gateway within the route
// cache's TTL (2 s, `corral_cache ttl=`; the lookup behind it answers "not
// found" at once), and nothing of the sandbox stays on its worker: no
// container (its own or its egress proxy), no network, no volume of its own,
// no image. A paused sandbox with an egress proxy is the hardest case: frozen
// container, proxy sidecar, two networks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../lib/poll.mjs';
import { docker } from '../lib/engine.mjs';
import { Sandbox, MODE, gatewayUrl } from './lib.mjs';
import { SDK } from './sdk.mjs';

const tag = `[${MODE} ${SDK}]`;
const CACHE_TTL_MS = 2000;
const filter = (f) => encodeURIComponent(JSON.stringify(f));
// Everything of a sandbox on dockerd: its containers carry its id in their
// names (a pooled egress proxy has no sandbox label, only the name); its
// networks are those they are attached to, but for the host's shared egress
// network (a pooled proxy's network is named after its pool member).
const containersOf = async (id) => (await docker('GET', `/containers/json?all=1&filters=${filter({ name: [id] })}`)).body;
const networksOf = (ctrs) => [...new Set(ctrs.flatMap((c) => Object.keys(c.NetworkSettings?.Networks ?? {})))]
  .filter((n) => n !== 'corral-egress');
const networkExists = async (name) => (await docker('GET', `/networks/${encodeURIComponent(name)}`)).status === 200;
const volumeNames = async () => new Set((await docker('GET', '/volumes')).body.Volumes?.map((v) => v.Name) ?? []);
// Images a worker made (snapshots carry its label); dockerd is shared, so only its own.
const imagesOf = async (wid) => (await docker('GET', `/images/json?all=1&filters=${filter({ label: [`corral.worker=${wid}`] })}`)).body.map((i) => i.Id);

test(`${tag} after kill: the envd and traffic tokens are refused within the route cache's TTL, then for good`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000, network: { allowPublicTraffic: false } });
  let killed = false;
  try {
    await sbx.commands.run('mkdir -p /tmp/p && cd /tmp/p && echo private > i.txt && python3 -m http.server 8001', { background: true });
    const app = gatewayUrl(sbx, 8001), envd = gatewayUrl(sbx, 49983);
    const traffic = () => fetch(`${app.url}/i.txt`, { headers: { ...app.headers, 'e2b-traffic-access-token': sbx.trafficAccessToken } });
    const envdCall = () => fetch(`${envd.url}/process.Process/List`, { method: 'POST', body: '{}',
      headers: { ...envd.headers, 'Content-Type': 'application/json', 'X-Access-Token': sbx.envdAccessToken } });
    assert.ok(sbx.trafficAccessToken && sbx.envdAccessToken, 'the SDK holds both tokens');
    assert.ok(await until(async () => (await traffic()).status === 200, { timeoutMs: 10_000, everyMs: 200 }), 'the traffic token works');
    assert.equal((await envdCall()).status, 200, 'the envd token works');
    // Both routes are now in the gateway's cache: the worst case.
    assert.equal(await sbx.kill(), true);
    killed = true;
    const t0 = Date.now();
    // The gateway's own "not found" (decision 0033): not the worker's 502 for
    // a port that no longer answers, which a cached route still reaches.
    const notFound = async (r) => r.status === 502 && (await r.json()).message === 'The sandbox was not found';
    const refused = async (call) => {
      const ok = await until(async () => notFound(await call()), { timeoutMs: CACHE_TTL_MS + 2000, everyMs: 50 });
      return ok ? Date.now() - t0 : Infinity;
    };
    const [tTraffic, tEnvd] = await Promise.all([refused(traffic), refused(envdCall)]);
    // The TTL, and the time one request through the gateway takes on a loaded machine.
    assert.ok(tTraffic <= CACHE_TTL_MS + 1000, `the traffic token still worked ${tTraffic} ms after the kill`);
    assert.ok(tEnvd <= CACHE_TTL_MS + 1000, `the envd token still worked ${tEnvd} ms after the kill`);
    for (const call of [traffic, envdCall, traffic, envdCall]) {
      const r = await call();
      assert.equal(r.status, 502);
      assert.deepEqual(await r.json(), { sandboxId: sbx.sandboxId, message: 'The sandbox was not found', code: 502 });
    }
  } finally {
    if (!killed) await sbx.kill().catch(() => {});
  }
});

test(`${tag} kill of a paused sandbox with an egress proxy leaves no container, network, volume or image`, async () => {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000, network: { denyOut: ['0.0.0.0/0'], allowOut: ['api.allowed.test'] } });
  let killed = false;
  try {
    await sbx.files.write('/tmp/kept.txt', 'kept');
    const ctrs = await containersOf(sbx.sandboxId);
    assert.equal(ctrs.length, 2, `the sandbox and its egress proxy: ${ctrs.map((c) => c.Names).join(', ')}`);
    const nets = networksOf(ctrs);
    assert.ok(nets.length >= 1, 'its networks');
    const own = ctrs.flatMap((c) => c.Mounts.filter((m) => m.Type === 'volume').map((m) => m.Name));
    const wid = ctrs[0].Labels['corral.worker'];
    assert.ok(wid, 'the containers name their worker');
    const imagesBefore = await imagesOf(wid);
    assert.equal(await sbx.pause(), true);
    assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused');
    assert.equal(await Sandbox.kill(sbx.sandboxId), true);
    killed = true;
    assert.ok(await until(async () => (await containersOf(sbx.sandboxId)).length === 0, { timeoutMs: 20_000 }),
      'no container of the sandbox (nor its proxy) is left');
    for (const n of nets) {
      assert.ok(await until(async () => !(await networkExists(n)), { timeoutMs: 10_000 }), `its network ${n} is left`);
    }
    const volumes = await volumeNames();
    for (const v of own) assert.ok(!volumes.has(v), `its volume ${v} is left`);
    for (const v of volumes) assert.ok(!v.includes(sbx.sandboxId), `a volume ${v} of the sandbox is left`);
    assert.deepEqual(await imagesOf(wid), imagesBefore, 'no image of the sandbox is left');
    await assert.rejects(Sandbox.connect(sbx.sandboxId), 'a killed sandbox cannot be resumed');
  } finally {
    if (!killed) await sbx.kill().catch(() => {});
  }
});
