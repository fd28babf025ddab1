// A sandbox steers nothing in the gateway (issue 14 finding 5, decision 0029).
// nginx acts on X-Accel-* headers in an upstream's answer: X-Accel-Redirect
// is an internal redirect (a sandbox sent /_corral/route/<id> and nginx ran
// the route lookup), X-Accel-Limit-Rate throttles, X-Accel-Buffering switches
// buffering, X-Accel-Expires/-Charset set caching and the charset. Here an app
// in an open sandbox answers with all of them, through the real gateway and
// data port: the client must get the app's own status and body, at full
// speed, and none of those headers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gw, setupWorld } from './lib.mjs';

const APP_PORT = 8081;
const BODY = 'x'.repeat(64 * 1024);
let w, app;

before(async () => {
  w = await setupWorld();
  // sandbox B (open, envd on 127.0.0.3): an app whose answers try to steer nginx
  app = http.createServer((req, res) => {
    // /big: only the throttle, so that its test stands on its own
    const steer = req.url === '/big' ? { 'X-Accel-Limit-Rate': '1024' } : { // 64 KB at 1 KB/s: a minute
      'X-Accel-Redirect': `/_corral/route/${w.B.id}`,
      'X-Accel-Limit-Rate': '1024',
      'X-Accel-Buffering': 'yes',
      'X-Accel-Expires': '3600',
      'X-Accel-Charset': 'koi8-r',
    };
    res.writeHead(200, { 'Content-Type': 'text/plain', 'X-App': 'sandbox', 'Set-Cookie': 's=1', ...steer });
    res.end(req.url === '/big' ? BODY : 'from the sandbox');
  });
  await new Promise((r) => app.listen(APP_PORT, '127.0.0.3', r));
});
after(async () => {
  app?.closeAllConnections();
  await new Promise((r) => (app ? app.close(r) : r()));
  await w?.teardown();
});

const target = () => ({ id: w.B.id, port: APP_PORT });

for (const via of ['headers', 'host']) {
  test(`X-Accel-Redirect from a sandbox is not followed (routed by ${via})`, async () => {
    const r = await gw('GET', '/', { target: target(), via });
    assert.equal(r.status, 200, r.raw.toString());
    assert.equal(r.raw.toString(), 'from the sandbox');
    assert.equal(r.headers['x-app'], 'sandbox');
    assert.deepEqual(r.headers['set-cookie'], ['s=1']); // ignored for caching only, still passed
    assert.equal(r.headers['content-type'], 'text/plain');
    for (const h of Object.keys(r.headers)) assert.doesNotMatch(h, /^x-accel-/, `${h} reached the client`);
  });
}

test('X-Accel-Limit-Rate from a sandbox does not throttle its answer', async () => {
  let timer;
  const throttled = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('64 KB not there in 10 s: throttled by the sandbox\'s header')), 10000);
  });
  try {
    const r = await Promise.race([gw('GET', '/big', { target: target() }), throttled]);
    assert.equal(r.status, 200);
    assert.equal(r.raw.length, BODY.length);
    assert.equal(r.headers['x-accel-limit-rate'], undefined);
  } finally { clearTimeout(timer); }
});
