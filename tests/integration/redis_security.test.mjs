// Redis is Corral's whole state: what a local user who is not Corral can do
// with it (issue 14, finding 2; decisions 0030 and 0031). Each test is the
// attack, run as an attacker would: redis-cli on the port, reading the files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { api, corralctl, eventually, newWorkspace, redis, redisPorts, RUN } from '../lib/corral.mjs';
import { aofText, everyValue } from '../lib/redis_dump.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const ROOT = new URL('../..', import.meta.url).pathname;
const PORT = process.env.CORRAL_REDIS_PORT;

// On a cluster of several nodes (CORRAL_REDIS_CLUSTER), redis-cli follows MOVED.
const FOLLOW = redisPorts().length > 1 ? ['-c'] : [];

// redis-cli whatever it answers (it exits 0 on some error replies, 1 on others).
function cli(args, env = {}) {
  const r = spawnSync('redis-cli', ['--no-auth-warning', ...FOLLOW, '-p', PORT, ...args],
    { encoding: 'latin1', env: { ...process.env, REDISCLI_AUTH: '', ...env } });
  return `${r.stdout}${r.stderr}`.trim();
}
const asCorral = (...args) => cli(['--user', 'corral', ...args],
  { REDISCLI_AUTH: readFileSync(`${RUN}/redis-password`, 'utf8').trim() });
const mode = (path) => (statSync(path).mode & 0o777).toString(8);

test('without a password Redis refuses everything: NOAUTH, and no user logs in with a guess', () => {
  for (const cmd of [['DBSIZE'], ['KEYS', '*'], ['HGETALL', 'corral:workspaces'], ['CONFIG', 'GET', 'dir']]) {
    assert.match(cli(cmd), /NOAUTH/, `${cmd.join(' ')} ran without logging in`);
  }
  assert.match(cli(['AUTH', 'default', '']), /WRONGPASS/);
  assert.match(cli(['AUTH', 'default', 'x'.repeat(64)]), /WRONGPASS/);
  assert.match(cli(['--user', 'corral', 'DBSIZE'], { REDISCLI_AUTH: 'x'.repeat(64) }), /WRONGPASS/);
  assert.match(cli(['--user', 'corral-admin', 'DBSIZE'], { REDISCLI_AUTH: 'x'.repeat(64) }), /WRONGPASS/);
});

test('the corral user runs only Corral\'s commands, on corral:* keys', () => {
  assert.equal(asCorral('HSET', 'corral:acltest', 'a', '1'), '1', 'a command Corral uses');
  assert.equal(asCorral('DEL', 'corral:acltest'), '1');
  for (const cmd of [['CONFIG', 'GET', 'dir'], ['CONFIG', 'SET', 'dir', '/tmp'], ['FLUSHALL'], ['KEYS', '*'],
    ['DEBUG', 'SLEEP', '0'], ['ACL', 'LIST'], ['SCAN', '0'], ['DUMP', 'corral:workspaces'], ['MONITOR'],
    ['SCRIPT', 'FLUSH'], ['SHUTDOWN', 'NOSAVE'], ['XINFO', 'STREAM', 'corral:x'], ['SUBSCRIBE', 'c']]) {
    // DEBUG may meet enable-debug-command before the ACL: refused either way.
    assert.match(asCorral(...cmd), /NOPERM|DEBUG command not allowed/, `the corral user may run ${cmd.join(' ')}`);
  }
  assert.match(asCorral('SET', 'other:key', '1'), /NOPERM/, 'a key outside corral:*');
  // A script is checked command by command too.
  assert.match(asCorral('EVAL', "return redis.call('FLUSHALL')", '0'), /can't run this command/);
  assert.equal(redis('PING'), 'PONG', 'the server is still up');
});

// Every command the code sends must be in the corral user's list, or it fails
// at run time with NOPERM (and what no test exercises would fail in production).
test('every Redis command in the code is one the corral user may run', () => {
  const line = readFileSync(`${RUN}/redis-users.acl`, 'utf8').split('\n').find((l) => l.startsWith('user corral '));
  const allowed = new Set(line.split(' ').filter((w) => w.startsWith('+')).map((w) => w.slice(1)));
  const used = new Set(['evalsha', 'eval']); // rconn_eval
  const containers = new Set(['xgroup', 'xinfo']); // ACL names their subcommands
  // store/ sends them (tests/lint/layout.sh keeps the others from it).
  for (const dir of ['store', 'common', 'scheduler', 'handlers']) {
    for (const f of readdirSync(`${ROOT}${dir}`).filter((n) => n.endsWith('.c'))) {
      const src = readFileSync(`${ROOT}${dir}/${f}`, 'utf8');
      const found = [...src.matchAll(/rconn_cmd\([^"]*"([A-Z]+)(?: ([A-Z]+))?/g)]
        .map((m) => (containers.has(m[1].toLowerCase()) ? `${m[1]}|${m[2]}` : m[1]))
        .concat([...src.matchAll(/redis\.p?call\(\s*['"]([A-Za-z]+)['"]/g)].map((m) => m[1]))
        .concat([...src.matchAll(/argv\[[^\]]*\] = \{"([A-Z]+)"/g)].map((m) => m[1]))
        // rconn's own (ROLE, WAIT: decision 0058); AUTH is every user's
        .concat([...src.matchAll(/redis(?:Append)?Command\(rc->ctx, "([A-Z]+)/g)].map((m) => m[1]).filter((c) => c !== 'AUTH'));
      for (const c of found) used.add(c.toLowerCase());
    }
  }
  assert.ok(used.size > 30, `only ${used.size} commands found: the patterns above no longer match the code`);
  const missing = [...used].filter((c) => !allowed.has(c));
  assert.deepEqual(missing, [], `commands the code sends that conf/redis-acl.sh does not allow: ${missing}`);
});

test('files: passwords and the ACL 0600, Redis dir and AOF dir 0700, AOF files 0600, FastCGI sockets 0660', () => {
  for (const f of ['redis-password', 'redis-admin-password', 'redis-users.acl', 'secret', 'gateway-secret']) {
    assert.equal(mode(`${RUN}/${f}`), '600', f);
  }
  assert.doesNotMatch(readFileSync(`${RUN}/redis-users.acl`, 'utf8'),
    new RegExp(readFileSync(`${RUN}/redis-password`, 'utf8').trim()), 'the ACL file holds only hashes');
  assert.equal(mode(`${RUN}/redis`), '700');
  const aof = `${RUN}/redis/${redis('CONFIG', 'GET', 'appenddirname').split('\n')[1]}`;
  assert.equal(mode(aof), '700');
  const files = readdirSync(aof);
  assert.ok(files.some((f) => f.endsWith('.aof')), `no AOF in ${aof}`);
  for (const f of files) assert.equal(mode(`${aof}/${f}`), '600', f);
  for (const i of [1, 2]) assert.equal(mode(`${RUN}/api-${i}.sock`), '660', `api-${i}.sock`);
  // No password on a command line: ps shows those to every user.
  const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
  for (const f of ['redis-password', 'redis-admin-password']) {
    assert.ok(!ps.includes(readFileSync(`${RUN}/${f}`, 'utf8').trim()), `${f} is in ps`);
  }
});

// A template only this file's worker has: no other worker (the unscoped fleet
// of other files) may take these creates.
const TEMPLATE = 'sealtest';
let A, w;
before(async () => {
  A = newWorkspace();
  w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { templates: [TEMPLATE] });
  await w.handshake();
  w.start();
});
after(async () => w.stop());

test('env vars: the worker gets them, but no Redis key and no AOF file holds them in clear', async () => {
  const secret = `s3cret-${Math.random().toString(16).slice(2)}-value`;
  const r = await api('POST', '/v1/sandboxes', { key: A.member, body: { template: TEMPLATE, env: { API_TOKEN: secret } } });
  assert.equal(r.status, 201, r.raw);
  const id = r.body.sandbox_id;
  assert.equal(w.running.get(id).env.API_TOKEN, secret, 'the worker receives the plain value');
  assert.equal(w.running.get(id).env_sealed, undefined);
  const e2b = await api('POST', '/v2/sandboxes', { headers: { 'X-API-KEY': A.member },
    body: { templateID: TEMPLATE, envVars: { E2B_TOKEN: `${secret}-e2b` } } });
  assert.equal(e2b.status, 201, e2b.raw);
  assert.equal(w.running.get(e2b.body.sandboxID).env.E2B_TOKEN, `${secret}-e2b`);
  const all = everyValue();
  assert.ok(all.includes(id), 'the scan saw the sandbox');
  assert.ok(!all.includes(secret), 'an env value sits in Redis in clear');
  assert.ok(!all.includes('API_TOKEN'), 'an env name sits in Redis in clear');
  // The AOF (appendfsync everysec): once it holds the sandbox, it must not hold the value.
  await eventually(() => aofText().includes(e2b.body.sandboxID), { what: 'the AOF to hold the create' });
  assert.ok(!aofText().includes(secret), 'an env value sits in the AOF in clear');
});

test('a create whose sealed env was altered in Redis is never delivered: the sandbox fails, naming why', async () => {
  await w.stop();
  const stream = `corral:{ws:${w.workspace}}:worker:${w.id}:cmds`;
  const pending = api('POST', '/v1/sandboxes', { key: A.member, body: { template: TEMPLATE, env: { K: 'v' } } });
  const entry = await eventually(() => {
    const out = redis('XRANGE', stream, '-', '+').split('\n');
    const i = out.findIndex((l) => l.startsWith('{') && l.includes('"env_sealed"'));
    const id = out.slice(0, i).reverse().find((l) => /^\d+-\d+$/.test(l));
    return i > 0 && id && { id, payload: out[i] };
  }, { what: 'the create on the stream' });
  const sb = JSON.parse(entry.payload);
  const s = sb.env_sealed;
  const at = 10;
  sb.env_sealed = s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
  assert.equal(redis('XDEL', stream, entry.id), '1');
  redis('XADD', stream, '*', 'type', 'create', 'sandbox', JSON.stringify(sb));
  w.start();
  const r = await pending;
  assert.equal(r.status, 502, r.raw);
  assert.match(r.body.message, /env vars could not be decrypted/);
  assert.ok(!w.received.some((c) => c.type === 'create' && c.sandbox.id === sb.id), 'the altered create was delivered');
});

// The same for a rule's header value (decision 0091): sealed to the
// workspace, opened only as the create goes to its worker.
test('a create whose sealed rule value was altered in Redis is never delivered: the sandbox fails, naming why', async () => {
  const R = newWorkspace();
  const template = 'sealrules';
  const rw = new TestWorker(corralctl('join-token', 'create', '--workspace', R.id).token, { templates: [template], egress: true });
  await rw.handshake(); // not polling yet: the create waits on its stream
  const stream = `corral:{ws:${rw.workspace}}:worker:${rw.id}:cmds`;
  const literal = `lit-${Math.random().toString(16).slice(2)}-value`;
  const pending = api('POST', '/v2/sandboxes', { key: R.member, body: { templateID: template,
    network: { rules: { 'api.example.com': [{ transform: { headers: { Authorization: `Bearer ${literal}` } } }] } } } });
  const entry = await eventually(() => {
    const out = redis('XRANGE', stream, '-', '+').split('\n');
    const i = out.findIndex((l) => l.startsWith('{') && l.includes('"sealed"'));
    const id = out.slice(0, i).reverse().find((l) => /^\d+-\d+$/.test(l));
    return i > 0 && id && { id, payload: out[i] };
  }, { what: 'the create on the stream' });
  assert.ok(!entry.payload.includes(literal), 'the rule value sits on the stream in clear');
  const sb = JSON.parse(entry.payload);
  const h = sb.egress.rules['api.example.com'][0].headers;
  const s = h.Authorization.sealed;
  h.Authorization.sealed = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
  assert.equal(redis('XDEL', stream, entry.id), '1');
  redis('XADD', stream, '*', 'type', 'create', 'sandbox', JSON.stringify(sb));
  rw.start();
  try {
    const r = await pending;
    assert.ok(r.status >= 500, r.raw);
    assert.match(r.body.message, /egress policy's secrets could not be decrypted/);
    assert.ok(!rw.received.some((c) => c.type === 'create' && c.sandbox.id === sb.id), 'the altered create was delivered');
  } finally {
    await rw.stop();
  }
});

