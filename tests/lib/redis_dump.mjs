// What an attacker holding Redis's data sees (decisions 0031, 0067): every
// key's value on every node of the stack's Redis, and every file in the
// nodes' data dirs (AOF, RDB). Read as corral-admin, who may run anything.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { redisDirs, redisPorts, RUN } from './corral.mjs';

// Commands run as corral-admin in one redis-cli (one command a line on
// stdin) on the node at port: the answers, in order, one line each.
export function adminBatch(lines, port = process.env.CORRAL_REDIS_PORT) {
  const r = spawnSync('redis-cli', ['--no-auth-warning', '--user', 'corral-admin', '-p', port],
    { input: `${lines.join('\n')}\n`, encoding: 'latin1', maxBuffer: 1 << 28,
      env: { ...process.env, REDISCLI_AUTH: readFileSync(`${RUN}/redis-admin-password`, 'utf8').trim() } });
  return r.stdout;
}

// Every key's value as an admin reads it (GET, HGETALL, XRANGE, LRANGE,
// SMEMBERS, ZRANGE by type) and DUMP's serialized form, on every node.
export function everyValue() {
  return redisPorts().map((port) => {
    const keys = adminBatch(['SCAN 0 COUNT 1000000'], port).split('\n').slice(1).filter(Boolean);
    // A node may hold no key at all (a run of a few files on a cluster).
    const types = keys.length ? adminBatch(keys.map((k) => `TYPE ${k}`), port).trim().split('\n') : [];
    assert.equal(types.length, keys.length);
    const read = { string: 'GET %', hash: 'HGETALL %', stream: 'XRANGE % - +', list: 'LRANGE % 0 -1',
      set: 'SMEMBERS %', zset: 'ZRANGE % 0 -1 WITHSCORES' };
    return adminBatch(keys.flatMap((k, i) => [(read[types[i]] || 'TYPE %').replace('%', k), `DUMP ${k}`]), port);
  }).join('\n');
}

// Every node's AOF files (appenddirname: Redis's default, appendonlydir).
export function aofText() {
  return redisDirs().flatMap((d) => readdirSync(`${d}/appendonlydir`).map((f) => readFileSync(`${d}/appendonlydir/${f}`, 'latin1')))
    .join('\n');
}

// Every file under the nodes' data dirs (AOF, RDB, cluster config), as
// bytes read as text: what a backup of those dirs holds.
export function dataDirText() {
  const walk = (d) => readdirSync(d).flatMap((f) => {
    const p = `${d}/${f}`;
    return statSync(p).isDirectory() ? walk(p) : [readFileSync(p, 'latin1')];
  });
  return redisDirs().flatMap(walk).join('\n');
}
