// SOCKS5 upstream: every allowed connection (plain http://, a tunnel, an
// intercepted tunnel) goes through the configured SOCKS5 proxy, a server
// written here on loopback that wants a username and password and keeps
// every CONNECT it is asked for. Filtering comes first; a SOCKS failure is
// a 502, never a direct connection; the password never reaches the log.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { eventually } from '../lib/poll.mjs';
import { makeCA, makeLeaf, httpsHost, httpHost, socksServer, startProxy, tmpDir, TIMEOUT_MS } from './fixtures.mjs';

const PASSWORD = 'pw-SECRET-5566', WRONG = 'pw-WRONG-7788';
let dir, icptCA, api, web, socks, proxy, config;

before(async () => {
  dir = tmpDir();
  const testCA = makeCA(dir, 'corral-test-roots');
  icptCA = makeCA(dir, 'corral-interception');
  api = await httpsHost('api', '127.0.0.2', makeLeaf(dir, testCA, 'api', ['api.test']));
  web = await httpHost('web', '127.0.0.6');
  socks = await socksServer('127.0.0.7', 'corral', PASSWORD, { 'api.test': api.addr, 'http.test': web.addr });
  config = { sandbox: 'e2e-socks', ca_cert: icptCA.cert, ca_key: icptCA.key, roots: testCA.cert,
    policy: { deny: ['denied.test'], rules: { 'api.test': [{ headers: { 'X-Lit': 'via-socks' } }] },
      upstream: { address: `socks.test:${socks.port}`, username: 'corral', password: PASSWORD } } };
  proxy = await startProxy(dir, 'proxy', config,
    { 'socks.test': socks.server.address().address, 'api.test': api.addr, 'http.test': web.addr });
});

after(() => {
  proxy?.proc.kill('SIGTERM');
  for (const h of [api, web, socks]) h?.server.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const curl = async (args) => {
  try {
    const { stdout } = await promisify(execFile)('curl', ['-sS', '--max-time', '5', '--proxy',
      `http://127.0.0.1:${proxy.port}`, ...args]);
    return stdout;
  } catch (e) { return `${e.stdout || ''}${e.stderr || ''}`; }
};

function noPasswordLogged() {
  for (const s of [PASSWORD, WRONG]) assert.ok(!proxy.log().includes(s), `stderr holds a password: ${proxy.log()}`);
}

async function reload(upstream) {
  const before = proxy.log().length;
  fs.writeFileSync(proxy.configPath, JSON.stringify({ ...config, policy: { ...config.policy, upstream } }));
  proxy.proc.kill('SIGHUP');
  return eventually(() => proxy.log().slice(before).match(/reloaded|reload refused.*/)?.[0],
    { timeout: TIMEOUT_MS, every: 20, what: 'the reload line' });
}

test('plain http://, a tunnel and an intercepted tunnel all go through SOCKS5, by name (ATYP domain)', async () => {
  socks.requests = [];
  web.requests = [];
  assert.equal(await curl([`http://http.test:${web.port}/plain`]), 'web GET /plain body=');
  assert.equal(await curl(['--proxytunnel', `http://http.test:${web.port}/tunnel`]), 'web GET /tunnel body=');
  assert.equal(await curl(['--cacert', icptCA.cert, `https://api.test:${api.port}/icpt`]), 'api GET /icpt body=');
  assert.equal(api.requests.at(-1).headers['x-lit'], 'via-socks');
  assert.deepEqual(socks.requests, [{ atyp: 3, host: 'http.test', port: web.port },
    { atyp: 3, host: 'http.test', port: web.port }, { atyp: 3, host: 'api.test', port: api.port }]);
  noPasswordLogged();
});

test('a denied destination never reaches the SOCKS5 server', async () => {
  const before = socks.connections;
  const out = await curl(['-w', ' %{http_code}', 'http://denied.test/']);
  assert.match(out, /denied\.test is not allowed.* 403$/s);
  assert.equal(socks.connections, before);
});

test('a wrong password is a 502 naming the failure, and no direct connection happens', async () => {
  assert.equal(await reload({ address: `socks.test:${socks.port}`, username: 'corral', password: WRONG }), 'reloaded');
  const webConns = web.connections, bad = socks.badLogins;
  const out = await curl(['-w', ' %{http_code}', `http://http.test:${web.port}/nope`]);
  assert.match(out, /SOCKS5 upstream: authentication failed.* 502$/s, out);
  assert.equal(socks.badLogins, bad + 1);
  assert.equal(web.connections, webConns, 'no direct connection');
  const tunnel = await curl(['--cacert', icptCA.cert, '-w', ' %{http_code}', `https://api.test:${api.port}/nope`]);
  assert.match(tunnel, /502/);
  assert.match(proxy.log(), /refuse GET http\.test:\d+ \S+ upstream-socks5/);
  noPasswordLogged();
});

test('an upstream at a private address is refused like any destination', async () => {
  assert.equal(await reload({ address: '127.0.0.1:1080' }), 'reloaded');
  const out = await curl(['-w', ' %{http_code}', `http://http.test:${web.port}/x`]);
  assert.match(out, /SOCKS5 upstream does not resolve, or to a private address.* 502$/s, out);
  assert.equal(await reload(config.policy.upstream), 'reloaded');
  assert.equal(await curl([`http://http.test:${web.port}/back`]), 'web GET /back body=');
  noPasswordLogged();
});
