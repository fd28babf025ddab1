// 100 MB up and down through the whole chain (TLS at nginx, the module, the
// data port, envd), checked byte for byte, with throughput printed beside the
// same transfer straight to envd; and request rates with the route cache and
// with a lookup forced on every request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import { NOCACHE_PORT, GW_PORT, gw, setupWorld } from './lib.mjs';

let w;
before(async () => { w = await setupWorld(); });
after(async () => { await w?.teardown(); });

const SIZE = 100 * 1024 * 1024;
const CHUNK = 1024 * 1024;

// Deterministic pseudo-random content, produced as it is sent.
async function* content(hash) {
  const block = crypto.randomBytes(CHUNK);
  for (let i = 0; i < SIZE / CHUNK; i++) {
    block.writeUInt32BE(i, 0);
    hash.update(block);
    yield Buffer.from(block);
  }
}

const mbps = (bytes, ms) => (bytes / 1024 / 1024 / (ms / 1000)).toFixed(0);

async function roundTrip(label, upload, download) {
  const hin = crypto.createHash('sha256');
  let t0 = Date.now();
  const up = await upload(content(hin));
  const upMs = Date.now() - t0;
  assert.equal(up.status, 200, String(up.raw ?? up.status));
  const hout = crypto.createHash('sha256');
  let n = 0;
  t0 = Date.now();
  const status = await download(async (res) => {
    for await (const c of res) { hout.update(c); n += c.length; }
    return res.statusCode ?? res.status;
  });
  const downMs = Date.now() - t0;
  assert.equal(status, 200);
  assert.equal(n, SIZE);
  assert.equal(hout.digest('hex'), hin.digest('hex'));
  console.log(`${label}: upload ${mbps(SIZE, upMs)} MB/s (${upMs} ms), download ${mbps(SIZE, downMs)} MB/s (${downMs} ms)`);
  return { upMs, downMs };
}

test('100 MB upload and download through the gateway, and straight to envd', async () => {
  const file = `${w.envdB.home}/big.bin`;
  const q = `/files?path=${encodeURIComponent(file)}&username=user`;
  const gwRes = await roundTrip('through the gateway (TLS, module, data port)',
    (body) => gw('POST', q, { target: w.B, via: 'host', headers: { 'Content-Type': 'application/octet-stream' }, body }),
    (consume) => gw('GET', q, { target: w.B, onResponse: consume }));
  // the same client code, over plain HTTP to envd's own port
  const plain = (method, body, onResponse) => new Promise((resolve, reject) => {
    const req = http.request(`${w.envdB.base}${q}`, { method, headers: { 'Content-Type': 'application/octet-stream' } },
      (res) => {
        if (onResponse) return resolve(onResponse(res));
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, raw: Buffer.concat(chunks).toString() }));
      });
    req.on('error', reject);
    if (!body) return req.end();
    (async () => { for await (const c of body) if (!req.write(c)) await new Promise((r) => req.once('drain', r)); req.end(); })()
      .catch(reject);
  });
  const direct = await roundTrip('straight to envd (plain HTTP, loopback)',
    (body) => plain('POST', body), (consume) => plain('GET', null, consume));
  assert.ok(gwRes.upMs > 0 && direct.upMs > 0);
});

test('request rate: route cache vs a lookup on every request', async () => {
  const ca = fs.readFileSync(process.env.DP_GATEWAY_CA);
  const rate = async (port) => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca });
    const N = 1000;
    let next = 0;
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next++ < N) {
        const r = await gw('GET', '/health', { target: w.B, port, agent });
        assert.equal(r.status, 204);
      }
    }));
    agent.destroy();
    return Math.round(N / ((Date.now() - t0) / 1000));
  };
  const cached = await rate(GW_PORT);
  const bypass = await rate(NOCACHE_PORT);
  console.log(`GET /health through the gateway, 8 concurrent: ${cached} req/s with the route cache, ${bypass} req/s with a lookup every time`);
});
