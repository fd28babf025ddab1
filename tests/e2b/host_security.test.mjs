// getHost, tokens, and tenancy through the SDK and the gateway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../lib/poll.mjs';
import { Sandbox, withSandbox, MODE, gatewayUrl } from './lib.mjs';


test(`[${MODE}] getHost: a server started in the sandbox is reached through the gateway`, async () => {
  await withSandbox({}, async (sbx) => {
    await sbx.files.write('/tmp/www/index.html', 'served from the sandbox');
    await sbx.commands.run('cd /tmp/www && python -m http.server 8000', { background: true }); // E2B's example: python, not python3
    const { url, headers } = gatewayUrl(sbx, 8000);
    let body;
    await until(async () => {
      const r = await fetch(`${url}/index.html`, { headers }).catch(() => null);
      if (r && r.status === 200) body = await r.text();
      return body !== undefined;
    }, { timeoutMs: 10000, everyMs: 200 });
    assert.equal(body, 'served from the sandbox');
    assert.match(sbx.getHost(8000), new RegExp(`^8000-${sbx.sandboxId}\\.`));
  });
});

// A missing or wrong token of a known sandbox gets E2B's envd answer, 401
// (decision 0069); an unknown sandbox stays 502 "not found" (decision 33).
test(`[${MODE}] secure sandbox: missing or forged X-Access-Token refused with 401`, async () => {
  await withSandbox({}, async (sbx) => {
    const { url, headers } = gatewayUrl(sbx, 49983);
    const call = (h) => fetch(`${url}/process.Process/List`, { method: 'POST', headers: { ...headers, ...h, 'Content-Type': 'application/json' }, body: '{}' });
    for (const h of [{}, { 'X-Access-Token': 'f'.repeat(64) }]) {
      const r = await call(h);
      assert.equal(r.status, 401);
      const body = await r.json();
      assert.equal(body.code, 401);
      assert.match(body.message, /access token/);
    }
    assert.equal((await sbx.commands.run('echo fine')).stdout.trim(), 'fine', 'the SDK, with the token, still works');
  });
});

test(`[${MODE}] public traffic off: requests without the traffic token get 403, as on E2B`, async () => {
  await withSandbox({ network: { allowPublicTraffic: false } }, async (sbx) => {
    await sbx.commands.run('mkdir -p /tmp/p && cd /tmp/p && echo private > i.txt && python3 -m http.server 8001', { background: true });
    const { url, headers } = gatewayUrl(sbx, 8001);
    assert.equal((await fetch(`${url}/i.txt`, { headers })).status, 403);
    const info = await Sandbox.getInfo(sbx.sandboxId);
    assert.ok(info);
    const token = sbx.trafficAccessToken;
    assert.ok(token, 'the SDK received a traffic token');
    let ok;
    await until(async () => {
      const r = await fetch(`${url}/i.txt`, { headers: { ...headers, 'e2b-traffic-access-token': token } });
      if (r.status === 200) ok = await r.text();
      return ok !== undefined;
    }, { timeoutMs: 10000, everyMs: 200 });
    assert.equal(ok?.trim(), 'private');
  });
});

test(`[${MODE}] tenancy: workspace B cannot see, connect to, reach envd of, or kill A's sandbox`, async () => {
  const keyB = process.env.CORRAL_OTHER_KEY;
  assert.ok(keyB, 'CORRAL_OTHER_KEY (a key of another workspace) must be set');
  await withSandbox({}, async (sbx) => {
    const asB = { apiKey: keyB };
    await assert.rejects(Sandbox.getInfo(sbx.sandboxId, asB));
    const listed = await Sandbox.list({ ...asB, query: { metadata: {} } }).nextItems();
    assert.ok(!listed.some((s) => s.sandboxId === sbx.sandboxId));
    await assert.rejects(Sandbox.connect(sbx.sandboxId, asB));
    assert.equal(await Sandbox.kill(sbx.sandboxId, asB), false);
    // B holds no envd token for A's sandbox; the gateway refuses B's calls.
    const { url, headers } = gatewayUrl(sbx, 49983);
    const r = await fetch(`${url}/process.Process/List`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', 'X-API-KEY': keyB }, body: '{}' });
    assert.equal(r.status, 401);
    assert.equal(await sbx.isRunning(), true, "A's sandbox is untouched");
  });
});

test(`[${MODE}] an upload with a Content-Length over nginx's default body cap passes the gateway`, async () => {
  await withSandbox({}, async (sbx) => {
    const { url, headers } = gatewayUrl(sbx, 49983);
    const body = Buffer.alloc(5 * 1024 * 1024, 7);
    const r = await fetch(`${url}/files?path=/tmp/cl.bin`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length),
        'X-Access-Token': sbx.envdAccessToken, Authorization: `Basic ${Buffer.from('user:').toString('base64')}` },
      body,
    });
    assert.equal(r.status, 200, await r.text());
    assert.equal((await sbx.files.read('/tmp/cl.bin', { format: 'bytes' })).length, body.length);
  });
});
