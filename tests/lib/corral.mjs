// Test helpers: talk to the stack that tests/run.sh started (real nginx over
// HTTPS, real corral-api processes, real Redis). Nothing here is a mock.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { sleep, eventually } from './poll.mjs';

export const URL_BASE = process.env.CORRAL_URL;
export const RUN = process.env.CORRAL_RUN;
const ROOT = new URL('../..', import.meta.url).pathname;
const BIN = process.env.CORRAL_BUILD || `${ROOT}build/bin`;

if (!URL_BASE || !RUN || !process.env.NODE_EXTRA_CA_CERTS) {
  throw new Error('CORRAL_URL, CORRAL_RUN and NODE_EXTRA_CA_CERTS must be set: run the tests through tests/run.sh');
}

// One HTTP call; returns {status, body (parsed JSON or text), headers, raw}.
export async function api(method, path, { key, body, headers = {}, rawBody } = {}) {
  const h = { ...headers };
  if (key) h['X-API-Key'] = key;
  let payload = rawBody;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    h['Content-Type'] = 'application/json';
  }
  const res = await fetch(URL_BASE + path, { method, headers: h, body: payload });
  const raw = await res.text();
  let parsed = raw;
  try { parsed = raw ? JSON.parse(raw) : null; } catch { /* not JSON */ }
  return { status: res.status, body: parsed, headers: res.headers, raw };
}

// Asserts the E2B error shape and status; returns the message.
export function assertError(res, status, messagePart) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.raw}`);
  assert.equal(typeof res.body, 'object', `error body is not JSON: ${res.raw}`);
  assert.equal(res.body.code, status);
  assert.equal(typeof res.body.message, 'string');
  if (messagePart) assert.match(res.body.message, messagePart);
  return res.body.message;
}

export function corralctl(...args) {
  const out = execFileSync(`${BIN}/corralctl`, ['-c', `${RUN}/corral.conf`, '--json', ...args], { encoding: 'utf8' });
  return JSON.parse(out);
}

// The public part and secret of an API key in either spelling (decision 0038):
// e2b_1<LL><ws><LL><id><secret> (LL: two hex digits of length) or the older
// ck_<ws>_<id>_<secret>. Returns {ws, id, secret}.
export function keyParts(key) {
  if (key.startsWith('ck_')) {
    const [, ws, id, secret] = key.split('_');
    return { ws, id, secret };
  }
  assert.match(key, /^e2b_1[0-9a-f]+$/, `not an API key: ${key.slice(0, 8)}…`);
  let p = 5;
  const field = () => { const n = parseInt(key.slice(p, p + 2), 16); const v = key.slice(p + 2, p + 2 + n); p += 2 + n; return v; };
  const ws = field();
  const id = field();
  return { ws, id, secret: key.slice(p) };
}

// The same key spelled the older way, ck_<ws>_<id>_<secret>.
export function ckSpelling(key) {
  const { ws, id, secret } = keyParts(key);
  return `ck_${ws}_${id}_${secret}`;
}

// An API key in the e2b_ spelling from its parts.
export function e2bSpelling(ws, id, secret) {
  const len = (s) => s.length.toString(16).padStart(2, '0');
  return `e2b_1${len(ws)}${ws}${len(id)}${id}${secret}`;
}

// A fresh workspace with an owner and a member key.
export function newWorkspace(limit) {
  const ws = corralctl('workspace', 'create', `t-${Date.now()}-${Math.random().toString(16).slice(2, 6)}`);
  const member = corralctl('key', 'create', '--workspace', ws.workspace, '--role', 'member');
  const out = { id: ws.workspace, owner: ws.owner_key, member: member.key };
  return out;
}

export async function setLimit(wsp, n) {
  const r = await api('PATCH', '/v1/workspace', { key: wsp.owner, body: { max_concurrent_sandboxes: n } });
  assert.equal(r.status, 200, r.raw);
}

export function stack(...args) {
  execFileSync(`${ROOT}conf/stack.sh`, args, { stdio: 'inherit', env: process.env });
}

// redis-cli as a user of the stack's Redis (conf/redis-acl.sh): the password
// goes in the environment (REDISCLI_AUTH), never on the command line.
export function redisAs(user, passwordFile, ...args) {
  const env = { ...process.env, REDISCLI_AUTH: readFileSync(passwordFile, 'utf8').trim() };
  // On a cluster of several nodes, follow MOVED to the node of the key.
  const cluster = Number(process.env.CORRAL_REDIS_CLUSTER || 0) >= 2 ? ['-c'] : [];
  return execFileSync('redis-cli', ['--no-auth-warning', ...cluster, '--user', user, '-p', process.env.CORRAL_REDIS_PORT, ...args],
    { encoding: 'utf8', env }).trim();
}

// redis-cli as corral-admin, who may run every command.
export function redis(...args) {
  return redisAs('corral-admin', `${RUN}/redis-admin-password`, ...args);
}

// The Redis nodes' ports: the one Redis, or with CORRAL_REDIS_CLUSTER=N
// (N >= 2, conf/stack.sh) the N nodes of the cluster.
export function redisPorts() {
  const base = Number(process.env.CORRAL_REDIS_PORT);
  const n = Number(process.env.CORRAL_REDIS_CLUSTER || 0);
  return Array.from({ length: n >= 2 ? n : 1 }, (_, i) => String(base + i));
}

// Each node's data dir, in the order of redisPorts().
export const redisDirs = () => redisPorts().map((_, i) => (i ? `${RUN}/redis-${i + 1}` : `${RUN}/redis`));

// The port of the node serving key's slot (CLUSTER NODES), or the one Redis.
export function redisPortOf(key) {
  if (redisPorts().length === 1) return process.env.CORRAL_REDIS_PORT;
  const slot = Number(redis('CLUSTER', 'KEYSLOT', key));
  for (const line of redis('CLUSTER', 'NODES').split('\n')) {
    const f = line.split(' ');
    const serves = f.slice(8).some((r) => { const [a, b = a] = r.split('-').map(Number); return slot >= a && slot <= b; });
    if (serves) return f[1].split('@')[0].split(':').pop();
  }
  throw new Error(`no node serves slot ${slot}`);
}

export { sleep, eventually };
