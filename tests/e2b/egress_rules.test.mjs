// Secrets that never enter the sandbox (issue 31, decision 0091), with the
// real SDK, real proxies, and HTTPS servers of this test in the "internet"
// stand-in's network namespace (tests/lib/standins.mjs):
//   198.51.100.10:8443  api.allowed.test and dl.allowed.test, a certificate
//                       from the test's public CA (workerd's egress_roots
//                       trusts it, as a real worker trusts the public roots);
//   198.51.100.11:8443  other.test, a certificate from a CA nobody trusts;
//   198.51.100.11:1080  a SOCKS5 proxy of the customer's.
// Each server logs what reaches it, so a test can tell that nothing did.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret } from 'e2b';
import { ALL_TRAFFIC } from './sdk.mjs';
import { withSandbox, Sandbox, useStandins, fetchFrom, gatewayUrl } from './lib.mjs';
import { INET, PORT, HOSTS } from '../lib/standins.mjs';
import { makeTestPki } from '../lib/test_pki.mjs';
import { sleep } from '../lib/poll.mjs';

useStandins();
const HTTPS = 8443, SOCKS = 1080;
const SOCKS_USER = 'socks-user', SOCKS_PASS = `socks-pass-${process.pid}`;
const API = process.env.E2B_API_URL;
const pki = makeTestPki(join(process.env.CORRAL_RUN, 'pki'));
const logs = mkdtempSync(join(tmpdir(), 'corral-egress-rules-'));
const goodLog = join(logs, 'good.jsonl'), rogueLog = join(logs, 'rogue.jsonl'), socksLog = join(logs, 'socks.jsonl');
const servers = [];
const lines = (f) => (existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map(JSON.parse) : []);
// The headers the trusted server got for the request to path (the last one).
const arrived = (path) => {
  const hit = lines(goodLog).filter((l) => l.url === path).pop();
  assert.ok(hit, `no request for ${path} reached the server`);
  return hit.headers;
};

function inNs(script, args) {
  const p = spawn('ip', ['netns', 'exec', INET.ns, process.execPath, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(p);
  return new Promise((resolve, reject) => {
    p.stdout.once('data', () => resolve());
    p.once('exit', (c) => reject(new Error(`${script} exited ${c}`)));
  });
}

before(async () => {
  await inNs('tests/lib/https_echo.mjs', [INET.addrs[0], String(HTTPS), pki.server.pem, pki.server.key, goodLog]);
  await inNs('tests/lib/https_echo.mjs', [INET.addrs[1], String(HTTPS), pki.rogue.pem, pki.rogue.key, rogueLog]);
  await inNs('tests/lib/socks5_server.mjs', [INET.addrs[1], String(SOCKS), SOCKS_USER, SOCKS_PASS, socksLog,
    JSON.stringify(HOSTS)]);
});
after(() => { for (const p of servers) p.kill(); });

// curl in the sandbox; its answer's JSON (the echo server's) or the status.
async function curl(sbx, url, { headers = {}, cacert = null } = {}) {
  const h = Object.entries(headers).map(([k, v]) => `-H '${k}: ${v}'`).join(' ');
  const ca = cacert ? `--cacert ${cacert}` : '';
  const r = await sbx.commands.run(`curl -sS -o /tmp/out -w '%{http_code}' ${ca} ${h} ${url} 2>/tmp/err; echo " $?"; cat /tmp/out`,
    { timeoutMs: 30_000 });
  const [first, ...rest] = r.stdout.split('\n');
  const [code, exit] = first.trim().split(' ');
  const body = rest.join('\n');
  let json = null;
  try { json = JSON.parse(body); } catch { /* not the echo server's */ }
  return { code: Number(code), exit: Number(exit), body, json };
}

// Every value in the stack's Redis, as text: what a thief of its data gets.
// As corral-admin (conf/redis-acl.sh), its password in the environment.
function redisDump() {
  const env = { ...process.env, REDISCLI_AUTH: readFileSync(`${process.env.CORRAL_RUN}/redis-admin-password`, 'utf8').trim() };
  const cli = (input, args = []) => spawnSync('redis-cli', ['--no-auth-warning', '--user', 'corral-admin', '-p',
    process.env.CORRAL_REDIS_PORT, ...args], { input, env, encoding: 'latin1', maxBuffer: 1 << 28 }).stdout;
  const keys = cli('', ['--scan', '--count', '1000']).split('\n').filter(Boolean).slice(0, 20000);
  const types = cli(keys.map((k) => `TYPE "${k}"`).join('\n')).split('\n');
  const read = { string: 'GET', hash: 'HGETALL', list: 'LRANGE', set: 'SMEMBERS', zset: 'ZRANGE', stream: 'XRANGE' };
  const tail = { list: ' 0 -1', zset: ' 0 -1', stream: ' - +' };
  return cli(keys.map((k, i) => (read[types[i]] ? `${read[types[i]]} "${k}"${tail[types[i]] || ''}` : 'PING')).join('\n'));
}

// The workspace's audit of one sandbox, once done(events) holds (bounded).
async function auditOf(sbid, done) {
  let events = [];
  for (let i = 0; i < 50; i++) {
    const r = await fetch(`${API}/v1/audit?sandbox=${sbid}&limit=1000`, { headers: { 'X-API-Key': process.env.CORRAL_OWNER_KEY } });
    events = (await r.json()).events;
    if (done(events)) break;
    // sleep: between looks at the audit, 50 at most (its proxy sends once a second).
    await sleep(100);
  }
  return events;
}

const b64json = (s) => JSON.parse(Buffer.from(s, 'base64url').toString());

test('a literal header and a secret are injected over HTTPS; a rotated secret applies at once; nothing of either is in the sandbox, its GET or Redis', async () => {
  const literal = `lit-${process.pid}-${Date.now()}`, first = `first-SECRET-${Date.now()}`, second = `second-SECRET-${Date.now()}`;
  const name = `svc-key-${Date.now()}`;
  await Secret.create(name, first);
  try {
    const rules = { 'api.allowed.test': [{ transform: { headers: { Authorization: `Bearer ${literal}`, 'X-Svc-Key': Secret.fill(name) } } }] };
    await withSandbox({ network: { allowOut: ['api.allowed.test', 'dl.allowed.test'], denyOut: [ALL_TRAFFIC], rules } }, async (sbx) => {
      await sbx.files.write('/tmp/test-ca.pem', readFileSync(pki.ca, 'utf8'));
      const got = await curl(sbx, `https://api.allowed.test:${HTTPS}/one`, { headers: { Authorization: 'Bearer the-sandbox-own' } });
      assert.equal(got.code, 200, got.body);
      assert.equal(arrived('/one').authorization, `Bearer ${literal}`, 'the rule replaces the header the sandbox sent');
      assert.equal(arrived('/one')['x-svc-key'], first);
      // Python's urllib through the same proxy (SSL_CERT_FILE, https_proxy).
      const py = await fetchFrom(sbx, [`https://api.allowed.test:${HTTPS}/py`]);
      assert.deepEqual(JSON.parse(py[`https://api.allowed.test:${HTTPS}/py`]).url, '/py');
      assert.equal(arrived('/py')['x-svc-key'], first);
      await Secret.update(name, second);
      const again = await curl(sbx, `https://api.allowed.test:${HTTPS}/two`);
      assert.equal(again.code, 200, again.body);
      assert.equal(arrived('/two')['x-svc-key'], second, 'the rotated value, with no new sandbox');
      // The sandbox holds no trace: environment, processes, files. The
      // values to look for travel encoded and sit in /dev/shm, outside the
      // search, so neither a command line nor a searched file holds them.
      const pat = Buffer.from(`${literal}\n${first}\n${second}\n`).toString('base64');
      const trace = await sbx.commands.run(
        `echo ${pat} | base64 -d > /dev/shm/p; { env; ps auxww; } > /dev/shm/s; ` +
        'grep -rsaFl -f /dev/shm/p /dev/shm/s /etc /root /home /tmp /.corral /run /var /opt /usr/local || true',
        { user: 'root', timeoutMs: 120_000 });
      assert.equal(trace.stdout.trim(), '', 'no value anywhere in the sandbox');
      // The proxy's certificate, not the server's: interception is the
      // proxy's CA, which the test's public CA alone does not verify.
      const own = await curl(sbx, `https://api.allowed.test:${HTTPS}/x`, { cacert: '/tmp/test-ca.pem' });
      assert.notEqual(own.exit, 0, 'a host with rules is answered with the proxy\'s certificate');
      const view = await (await fetch(`${API}/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-Key': process.env.E2B_API_KEY } })).text();
      assert.ok(!view.includes(literal) && !view.includes('SECRET-'), 'GET shows no value');
      assert.match(view, /"Authorization":"\*\*\*"/, 'GET names the header');
      const dump = redisDump();
      assert.ok(!dump.includes(literal) && !dump.includes(first) && !dump.includes(second), 'sealed at rest');
      // The workspace's audit: each transformed request (counted, within its
      // proxy's next second or two) and each resolve, names only.
      const events = await auditOf(sbx.sandboxId, (evs) =>
        evs.filter((e) => e.event === 'egress_transform').reduce((n, e) => n + Number(/count=(\d+)/.exec(e.reason)[1]), 0) >= 3);
      const transforms = events.filter((e) => e.event === 'egress_transform');
      assert.ok(transforms.every((e) => /^host=api\.allowed\.test headers=Authorization,X-Svc-Key count=\d+$/.test(e.reason)),
        JSON.stringify(transforms));
      assert.ok(events.some((e) => e.event === 'egress_resolve' && e.reason.includes(name)), 'the secret\'s resolves are there');
      const text = JSON.stringify(events);
      assert.ok(!text.includes(literal) && !text.includes('SECRET-'), 'no value in the audit');
    });
  } finally {
    await Secret.destroy(name).catch(() => {});
  }
});

test('a host without rules is tunnelled untouched, with the server\'s own certificate', async () => {
  const rules = { 'api.allowed.test': [{ transform: { headers: { 'X-Only-Api': 'yes' } } }] };
  await withSandbox({ network: { allowOut: ['api.allowed.test', 'dl.allowed.test'], denyOut: [ALL_TRAFFIC], rules } }, async (sbx) => {
    await sbx.files.write('/tmp/test-ca.pem', readFileSync(pki.ca, 'utf8'));
    const got = await curl(sbx, `https://dl.allowed.test:${HTTPS}/plain`, { cacert: '/tmp/test-ca.pem', headers: { 'X-Mine': '1' } });
    assert.equal(got.code, 200, got.body);
    assert.equal(arrived('/plain')['x-mine'], '1');
    assert.equal(arrived('/plain')['x-only-api'], undefined);
  });
});

test('a server whose certificate the roots do not vouch for: refused, nothing sent', async () => {
  const before = lines(rogueLog).length;
  const rules = { 'other.test': [{ transform: { headers: { Authorization: 'Bearer never-sent' } } }] };
  await withSandbox({ network: { allowOut: ['other.test'], denyOut: [ALL_TRAFFIC], rules } }, async (sbx) => {
    const got = await curl(sbx, `https://other.test:${HTTPS}/`);
    assert.equal(got.code, 502, got.body);
    assert.match(got.body, /certificate/i);
  });
  assert.equal(lines(rogueLog).length, before, 'no request reached the untrusted server');
});

test('a placeholder of another workspace\'s secret, or of none: the request is refused, nothing sent', async () => {
  const name = `only-b-${Date.now()}`;
  await Secret.create(name, 'b-value', { apiKey: process.env.CORRAL_OTHER_KEY });
  try {
    const before = lines(goodLog).length;
    const rules = { 'api.allowed.test': [{ transform: { headers: { 'X-K': Secret.fill(name) } } }] };
    await withSandbox({ network: { allowOut: ['api.allowed.test'], denyOut: [ALL_TRAFFIC], rules } }, async (sbx) => {
      const got = await curl(sbx, `https://api.allowed.test:${HTTPS}/`);
      assert.equal(got.code, 502, got.body);
      assert.match(got.body, new RegExp(name));
      assert.ok(!got.body.includes('b-value'));
    });
    assert.equal(lines(goodLog).length, before, 'nothing reached the server');
  } finally {
    await Secret.destroy(name, { apiKey: process.env.CORRAL_OTHER_KEY }).catch(() => {});
  }
});

async function jwks(iss) {
  const conf = await (await fetch(`${iss}/.well-known/openid-configuration`)).json();
  assert.equal(conf.issuer, iss);
  return (await fetch(conf.jwks_uri)).json();
}

function verifies(jwt, keys) {
  const [h, p, s] = jwt.split('.');
  const jwk = keys.keys.find((k) => k.kid === b64json(h).kid);
  if (!jwk) return false;
  return verify('sha256', Buffer.from(`${h}.${p}`), { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'));
}

test('workload identity: a JWT-SVID minted per request, verified against the workspace\'s published JWKS, not another\'s', async () => {
  const iam = { tokens: { aws: Secret.iamToken({ audience: 'sts.test.example', tokenType: 'JWT-SVID' }) } };
  const rules = { 'api.allowed.test': [{ transform: ({ iam: ctx }) => ({ headers: { Authorization: `Bearer ${ctx.tokens.aws}` } }) }] };
  await withSandbox({ iam, network: { allowOut: ['api.allowed.test'], denyOut: [ALL_TRAFFIC], rules } }, async (sbx) => {
    const one = await curl(sbx, `https://api.allowed.test:${HTTPS}/id1`);
    const two = await curl(sbx, `https://api.allowed.test:${HTTPS}/id2`);
    assert.equal(one.code, 200, one.body);
    const jwt = arrived('/id1').authorization.replace(/^Bearer /, '');
    const claims = b64json(jwt.split('.')[1]);
    const now = Math.floor(Date.now() / 1000);
    assert.equal(b64json(jwt.split('.')[0]).alg, 'ES256');
    assert.ok([claims.aud].flat().includes('sts.test.example'));
    assert.ok(claims.sub.startsWith('spiffe://') && claims.sub.includes(sbx.sandboxId), claims.sub);
    assert.ok(claims.exp > now && claims.exp <= now + 3600 && claims.iat <= now + 5);
    assert.ok(verifies(jwt, await jwks(claims.iss)), 'verifies against its workspace\'s JWKS');
    assert.equal(two.code, 200, two.body);
    const jwt2 = arrived('/id2').authorization.replace(/^Bearer /, '');
    assert.notEqual(b64json(jwt2.split('.')[1]).jti, claims.jti, 'one token per request');
    const env = await sbx.commands.run('env; ps auxww', { user: 'root' });
    assert.ok(!env.stdout.includes(jwt.split('.')[2]), 'the token is only on the wire');
    // B's workspace: its own issuer, whose keys do not verify A's token.
    const other = await (await fetch(`${API}/v1/workspace`, { headers: { 'X-API-Key': process.env.CORRAL_OTHER_KEY } })).json();
    const bIss = claims.iss.replace(/[^/]+$/, other.id ?? other.workspace_id);
    assert.notEqual(bIss, claims.iss);
    assert.ok(!verifies(jwt, await jwks(bIss)), 'A\'s token never verifies as B');
  });
});

test('updateNetwork on a running sandbox with a proxy: the new allow-list and rules apply within a second', async () => {
  await withSandbox({ network: { allowOut: ['api.allowed.test'], denyOut: [ALL_TRAFFIC] } }, async (sbx) => {
    const other = `http://other.test:${PORT}/`;
    assert.equal((await fetchFrom(sbx, [other]))[other], 'HTTP 403');
    // The kills of the tests before may still be under way on its worker:
    // an update is applied beside such a batch, not after it (apply_batch.c).
    await sbx.updateNetwork({ allowOut: ['api.allowed.test', 'other.test'], denyOut: [ALL_TRAFFIC],
      rules: { 'api.allowed.test': [{ transform: { headers: { 'X-Live': 'new' } } }] } });
    const deadline = Date.now() + 1000;
    let got;
    do {
      got = (await fetchFrom(sbx, [other]))[other];
      if (got === 'public stand-in') break;
      // sleep: between tries until the second after the update is over.
      await sleep(50);
    } while (Date.now() < deadline);
    assert.equal(got, 'public stand-in', 'the new allow-list within a second');
    const h = await curl(sbx, `https://api.allowed.test:${HTTPS}/live`);
    assert.equal(h.code, 200, h.body);
    assert.equal(arrived('/live')['x-live'], 'new');
  });
});

test('updateNetwork on a sandbox without a proxy: reported pending, applied by a resume', async () => {
  await withSandbox({}, async (sbx) => {
    const literal = `http://${INET.addrs[1]}:${PORT}/`;
    await sbx.updateNetwork({ allowOut: ['api.allowed.test'], denyOut: [ALL_TRAFFIC] });
    const view = await (await fetch(`${API}/v1/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-Key': process.env.E2B_API_KEY } })).json();
    assert.equal(view.egress, null, 'none in force');
    assert.deepEqual(view.egress_next.egress.allow, ['api.allowed.test'], 'pending');
    assert.equal((await fetchFrom(sbx, [literal]))[literal], 'public stand-in', 'still open until it starts again');
    // A fork is a new start: it gets the pending policy.
    const [f] = await Sandbox.fork(sbx.sandboxId, { count: 1 });
    if (f instanceof Error) throw f;
    try {
      const fork = await Sandbox.connect(f.sandboxId);
      assert.equal((await fetchFrom(fork, [literal]))[literal], 'HTTP 403', 'the fork starts with the pending policy');
    } finally {
      await Sandbox.kill(f.sandboxId).catch(() => {});
    }
    assert.equal(await sbx.pause({ keepMemory: false }), true);
    const back = await Sandbox.connect(sbx.sandboxId);
    assert.equal((await fetchFrom(back, [literal]))[literal], 'HTTP 403', 'applied at the resume');
  });
});

test('egressProxy: allowed traffic goes through the customer\'s SOCKS5 proxy by name; a refused upstream is a clear error, never a direct connection', async () => {
  const before = lines(socksLog).length;
  const proxy = { address: `${INET.addrs[1]}:${SOCKS}`, username: SOCKS_USER, password: SOCKS_PASS };
  await withSandbox({ network: { allowOut: ['api.allowed.test'], denyOut: [ALL_TRAFFIC], egressProxy: proxy } }, async (sbx) => {
    const api = `http://api.allowed.test:${PORT}/`;
    assert.equal((await fetchFrom(sbx, [api]))[api], 'public stand-in');
    const seen = lines(socksLog).slice(before);
    assert.ok(seen.some((l) => l.atyp === 'domain' && l.host === 'api.allowed.test' && l.port === PORT), JSON.stringify(seen));
    const view = await (await fetch(`${API}/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-Key': process.env.E2B_API_KEY } })).text();
    assert.ok(!view.includes(SOCKS_PASS), 'the password is never shown');
  });
  const n = lines(socksLog).length;
  await withSandbox({ network: { allowOut: ['api.allowed.test'], denyOut: [ALL_TRAFFIC], egressProxy: { ...proxy, password: 'wrong' } } }, async (sbx) => {
    const got = await curl(sbx, `http://api.allowed.test:${PORT}/`);
    assert.equal(got.code, 502, got.body);
    assert.match(got.body, /SOCKS/i);
    assert.ok(!got.body.includes('wrong'));
  });
  assert.ok(lines(socksLog).slice(n).every((l) => l.auth === 'refused'), 'refused at the proxy, no connection made');
});

test('maskRequestHost: the sandbox\'s services are sent the masked Host, ${PORT} its port; without it, the request\'s own', async () => {
  const serve = (sbx) => sbx.commands.run(`python3 -c '
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = (self.headers.get("Host") or "-").encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("0.0.0.0", 8000), H).serve_forever()'`, { background: true });
  const hostSeen = async (sbx) => {
    const g = gatewayUrl(sbx, 8000);
    for (let i = 0; i < 50; i++) {
      const r = await fetch(`${g.url}/`, { headers: g.headers }).catch(() => null);
      if (r?.status === 200) return r.text();
      // sleep: until the server in the sandbox listens, 50 tries at most.
      await sleep(100);
    }
    throw new Error('the sandbox\'s server never answered through the gateway');
  };
  await withSandbox({ network: { maskRequestHost: 'masked-${PORT}.corral.test:${PORT}' } }, async (sbx) => {
    await serve(sbx);
    assert.equal(await hostSeen(sbx), 'masked-8000.corral.test:8000');
  });
  await withSandbox({}, async (sbx) => {
    await serve(sbx);
    assert.match(await hostSeen(sbx), new RegExp(`^8000-${sbx.sandboxId}\\.`), 'no mask: the request\'s own host');
  });
});
