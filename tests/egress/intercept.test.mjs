// TLS interception, header rules, placeholders and live reload: the real
// corral-egress on loopback, started on a JSON config file, in front of
// stand-in servers on 127.0.0.x (-test-host). The servers' certificates come
// from a test CA the proxy is given as `roots`; the proxy signs its leaves
// with an interception CA of its own. Every test that uses a secret checks
// the proxy's stderr for it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { promisify } from 'node:util';
import { eventually } from '../lib/poll.mjs';
import { makeCA, makeLeaf, httpsHost, httpHost, resolver, startProxy, tunnelAgent, request, tmpDir,
  TIMEOUT_MS } from './fixtures.mjs';

const SECRET1 = 'sk-first-0f9a8b7c6d5e4f3a', SECRET2 = 'sk-second-1a2b3c4d5e6f7a8b';
const TOKEN = 'eyJ-token-value-99887766';
let dir, testCA, icptCA, api, plain, rogue, wrongname, web, res, proxy, config;

function policy(lit) {
  return {
    deny: ['denied.test'],
    rules: {
      'api.test': [{ headers: { Authorization: 'Bearer ${e2b.secrets.openai}', 'X-Lit': 'first' } },
        { headers: { 'X-Lit': lit, 'X-Token': '${e2b.identity.tokens.aws}' } }],
      '*.svc.test': [{ headers: { 'X-Missing': 'k=${e2b.secrets.absent}' } }],
      'rogue.test': [{ headers: { 'X-Lit': lit } }],
      'wrongname.test': [{ headers: { 'X-Lit': lit } }],
      'http.test': [{ headers: { Authorization: 'Bearer ${e2b.secrets.openai}' } }],
      'denied.test': [{ headers: { 'X-Lit': lit } }],
    },
  };
}

before(async () => {
  dir = tmpDir();
  testCA = makeCA(dir, 'corral-test-roots');
  icptCA = makeCA(dir, 'corral-interception');
  const otherCA = makeCA(dir, 'someone-else');
  api = await httpsHost('api', '127.0.0.2', makeLeaf(dir, testCA, 'api', ['api.test', 'a.svc.test']));
  plain = await httpsHost('plain', '127.0.0.3', makeLeaf(dir, testCA, 'plain', ['plain.test']));
  rogue = await httpsHost('rogue', '127.0.0.4', makeLeaf(dir, otherCA, 'rogue', ['rogue.test']));
  wrongname = await httpsHost('wrongname', '127.0.0.5', makeLeaf(dir, testCA, 'wn', ['other.test']));
  web = await httpHost('web', '127.0.0.6');
  res = await resolver(path.join(dir, 'resolve.sock'), { secrets: { openai: SECRET1 }, tokens: { aws: TOKEN } });
  config = { sandbox: 'e2e-intercept', policy: policy('v1'), ca_cert: icptCA.cert, ca_key: icptCA.key,
    roots: testCA.cert, resolver: path.join(dir, 'resolve.sock') };
  proxy = await startProxy(dir, 'proxy', config, {
    'api.test': api.addr, 'a.svc.test': api.addr, 'plain.test': plain.addr, 'rogue.test': rogue.addr,
    'wrongname.test': wrongname.addr, 'http.test': web.addr });
});

after(() => {
  proxy?.proc.kill('SIGTERM');
  for (const h of [api, plain, rogue, wrongname, web, res]) h?.server.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function noSecretsLogged() {
  for (const s of [SECRET1, SECRET2, TOKEN]) assert.ok(!proxy.log().includes(s), `stderr holds a secret: ${proxy.log()}`);
}

const curl = async (args) => {
  try {
    const { stdout } = await promisify(execFile)('curl', ['-sS', '--max-time', '5', '--proxy',
      `http://127.0.0.1:${proxy.port}`, ...args]);
    return stdout;
  } catch (e) { return `${e.stdout || ''}${e.stderr || ''}`; }
};
const url = (h, name, p) => `https://${name}:${h.port}${p}`;

test('curl through interception: the literal header, a resolved secret and token, the client\'s header replaced', async () => {
  api.requests = [];
  const out = await curl(['--cacert', icptCA.cert, '-H', 'X-Lit: from-client', '-H', 'authorization: mine',
    url(api, 'api.test', '/one?q=1')]);
  assert.equal(out, 'api GET /one?q=1 body=');
  const [r] = api.requests;
  assert.equal(r.headers['x-lit'], 'v1'); // the later rule's header of the same name wins
  assert.equal(r.headers.authorization, `Bearer ${SECRET1}`);
  assert.equal(r.headers['x-token'], TOKEN);
  assert.deepEqual(res.questions.at(-1), { host: 'api.test', secrets: ['openai'], tokens: ['aws'] });
  assert.match(proxy.log(), new RegExp(`allow CONNECT api\\.test:${api.port} 127\\.0\\.0\\.2 intercept`));
  assert.match(proxy.log(), /egress sandbox=e2e-intercept transform api\.test GET headers=Authorization,X-Lit,X-Token\n/);
  // The resolver's value changes: the next request carries the new one.
  res.values.secrets.openai = SECRET2;
  await curl(['--cacert', icptCA.cert, url(api, 'api.test', '/two')]);
  assert.equal(api.requests[1].headers.authorization, `Bearer ${SECRET2}`);
  res.values.secrets.openai = SECRET1;
  noSecretsLogged();
});

test('every request on a kept-alive intercepted connection gets the headers, bodies included; ALPN is http/1.1', async () => {
  api.requests = [];
  const agent = tunnelAgent(proxy.port, icptCA.cert);
  const a = await request(agent, 'api.test', api.port, '/k1');
  const b = await request(agent, 'api.test', api.port, '/k2', { method: 'POST', body: 'hello body',
    headers: { 'content-length': '10' } });
  const c = await request(agent, 'api.test', api.port, '/k3', { method: 'POST', body: 'chunked!',
    headers: { 'transfer-encoding': 'chunked' } });
  const d = await request(agent, 'api.test', api.port, '/k4');
  agent.destroy();
  assert.deepEqual([a, b, c, d].map((x) => x.body), ['api GET /k1 body=', 'api POST /k2 body=hello body',
    'api POST /k3 body=chunked!', 'api GET /k4 body=']);
  assert.equal(agent.tlsSockets.length, 1, 'one connection');
  assert.equal(agent.tlsSockets[0].alpnProtocol, 'http/1.1');
  assert.equal(new Set(api.requests.map((r) => r.conn)).size, 1, 'the server saw one connection');
  for (const r of api.requests) {
    assert.equal(r.headers.authorization, `Bearer ${SECRET1}`, r.url);
    assert.equal(r.headers['x-lit'], 'v1', r.url);
  }
  // curl with several URLs reuses its tunnel too.
  api.requests = [];
  await curl(['--cacert', icptCA.cert, url(api, 'api.test', '/c1'), url(api, 'api.test', '/c2')]);
  assert.deepEqual(api.requests.map((r) => [r.url, r.headers['x-lit']]), [['/c1', 'v1'], ['/c2', 'v1']]);
  assert.equal(new Set(api.requests.map((r) => r.conn)).size, 1);
  noSecretsLogged();
});

test('a host without rules is tunnelled untouched: the client sees the server\'s own certificate', async () => {
  plain.requests = [];
  const agent = tunnelAgent(proxy.port, testCA.cert); // the interception CA would not verify
  const r = await request(agent, 'plain.test', plain.port, '/p', { headers: { 'x-lit': 'client' } });
  const issuer = agent.tlsSockets[0].getPeerCertificate().issuer.CN;
  agent.destroy();
  assert.equal(r.body, 'plain GET /p body=');
  assert.equal(issuer, 'corral-test-roots');
  assert.equal(plain.requests[0].headers['x-lit'], 'client');
  assert.equal(plain.requests[0].headers.authorization, undefined);
  assert.match(proxy.log(), new RegExp(`allow CONNECT plain\\.test:${plain.port} 127\\.0\\.0\\.3 ok`));
});

test('a server the roots do not vouch for, or with another name, is refused before any request', async () => {
  for (const [h, name, why] of [[rogue, 'rogue.test', /unable to get local issuer certificate/],
    [wrongname, 'wrongname.test', /[Hh]ostname mismatch/]]) {
    h.requests = [];
    const out = await curl(['--cacert', icptCA.cert, '-w', '%{http_code}', url(h, name, '/secret')]);
    assert.match(out, /certificate verification failed/, out);
    assert.match(out, why, out);
    assert.match(out, /502$/, out);
    assert.equal(h.requests.length, 0, `${name} got a request`);
    assert.match(proxy.log(), new RegExp(`refuse CONNECT ${name.replace('.', '\\.')}:${h.port} \\S+ upstream-tls`));
  }
});

test('an unresolvable placeholder: 502 naming it, nothing reaches the server', async () => {
  api.requests = [];
  const out = await curl(['--cacert', icptCA.cert, '-w', ' %{http_code}', url(api, 'a.svc.test', '/x')]);
  assert.match(out, /placeholder \$\{e2b\.secrets\.absent\} for a\.svc\.test could not be resolved/, out);
  assert.match(out, / 502$/);
  assert.equal(api.requests.length, 0);
  assert.match(proxy.log(), new RegExp(`refuse GET a\\.svc\\.test:${api.port} 127\\.0\\.0\\.2 placeholder`));
  noSecretsLogged();
});

test('plain http://: rule headers set (client\'s replaced), a denied host with rules still refused', async () => {
  web.requests = [];
  const out = await curl(['-H', 'Authorization: client', `http://http.test:${web.port}/plain`]);
  assert.equal(out, 'web GET /plain body=');
  assert.equal(web.requests[0].headers.authorization, `Bearer ${SECRET1}`);
  assert.match(proxy.log(), /transform http\.test GET headers=Authorization\n/);
  const denied = await curl(['-w', ' %{http_code}', 'http://denied.test/']);
  assert.match(denied, /denied\.test is not allowed.* 403$/s);
  noSecretsLogged();
});

async function reload(cfg) {
  const before = proxy.log().length;
  fs.writeFileSync(`${proxy.configPath}.tmp`, cfg);
  fs.renameSync(`${proxy.configPath}.tmp`, proxy.configPath);
  proxy.proc.kill('SIGHUP');
  return eventually(() => proxy.log().slice(before).match(/reloaded|reload refused.*/)?.[0],
    { timeout: TIMEOUT_MS, every: 20, what: 'the reload line' });
}

test('SIGHUP: new connections get the new rule, an open one keeps its own; a malformed file keeps the old', async () => {
  api.requests = [];
  const agent = tunnelAgent(proxy.port, icptCA.cert);
  await request(agent, 'api.test', api.port, '/before');
  assert.equal(await reload(JSON.stringify({ ...config, policy: policy('v2') })), 'reloaded');
  await request(agent, 'api.test', api.port, '/same-connection');
  agent.destroy();
  await curl(['--cacert', icptCA.cert, url(api, 'api.test', '/after')]);
  assert.deepEqual(api.requests.map((r) => [r.url, r.headers['x-lit']]),
    [['/before', 'v1'], ['/same-connection', 'v1'], ['/after', 'v2']]);

  const refused = await reload(`{"sandbox":"e2e-intercept","policy":{"rules":{"api.test":[{"headers":{"X":"${SECRET1}\\r\\n"}}]}}`);
  assert.match(refused, /^reload refused: /);
  assert.ok(!refused.includes(SECRET1));
  await curl(['--cacert', icptCA.cert, url(api, 'api.test', '/still')]);
  assert.equal(api.requests.at(-1).headers['x-lit'], 'v2');
  assert.match(await reload(JSON.stringify({ ...config, sandbox: 'another' })), /names another sandbox/);
  assert.equal(await reload(JSON.stringify(config)), 'reloaded');
  noSecretsLogged();
});

test('bytes sent before the tunnel is established are refused, not guessed at', async () => {
  const sock = net.connect(proxy.port, '127.0.0.1');
  let got = '';
  sock.on('data', (d) => { got += d; });
  sock.on('error', () => {});
  sock.write(`CONNECT api.test:${api.port} HTTP/1.1\r\n\r\n\x16\x03\x01early`);
  await eventually(() => got.includes('\r\n\r\n') && got, { timeout: TIMEOUT_MS, every: 20, what: 'an answer' });
  sock.destroy();
  assert.match(got, /^HTTP\/1\.1 400/);
});
