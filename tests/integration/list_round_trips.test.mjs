// Listing a workspace's sandboxes costs a constant number of Redis commands,
// not one per sandbox: both lists (native GET /v1/sandboxes and E2B's GET
// /v2/sandboxes) read the set and every record in one script
// (store/sandbox_record.c). Watched with MONITOR over 1,000 records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { api, newWorkspace, redis, redisPortOf, RUN, eventually } from '../lib/corral.mjs';

const COUNT = 1000;

// Writes n running records (and the set of their ids) straight into Redis, in
// the layout of store/keys.h, as scheduler_create would: one EVAL, so the
// seeding itself is quick and not what is measured.
function seed(ws, n) {
  const script = `
    local now = tonumber(ARGV[3])
    for i = 1, tonumber(ARGV[2]) do
      local id = string.format('%020x', i)
      redis.call('HSET', 'corral:{ws:' .. ARGV[1] .. '}:sb:' .. id, 'id', id, 'ws', ARGV[1],
        'template', 'base', 'state', 'running', 'pool', '', 'worker', 'w0', 'runtime', 'runc',
        'tier', 'CONTAINER', 'timeout', '300', 'cpu_cores', '1.000', 'memory_mb', '512',
        'metadata', '{"n":"' .. i .. '"}', 'allowed_domains', '[]', 'secure', '1', 'public', '1',
        'created_at', now, 'started_at', now + i, 'expires_at', now + 300000)
      redis.call('SADD', 'corral:{ws:' .. ARGV[1] .. '}:sbs', id)
    end
    return 1`;
  // The set as KEYS[1]: on a cluster, the script runs on the node of the workspace's slot.
  redis('EVAL', script, '1', `corral:{ws:${ws}}:sbs`, ws, String(n), String(Date.now()));
}

// MONITOR as corral-admin (the corral user may not run it) on the node of
// ws's keys; resolves once Redis confirmed, with the lines it printed so far
// and a stop(), which returns once MONITOR has printed every command the node
// ran before it (a marker sent then comes after them).
async function monitor(ws) {
  const env = { ...process.env, REDISCLI_AUTH: readFileSync(`${RUN}/redis-admin-password`, 'utf8').trim() };
  const cli = ['--no-auth-warning', '--user', 'corral-admin', '-p', redisPortOf(`corral:{ws:${ws}}:sbs`)];
  const child = spawn('redis-cli', [...cli, 'monitor'], { env });
  const lines = [];
  let partial = '';
  child.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    lines.push(...parts);
  });
  await eventually(() => lines.includes('OK'), { what: 'MONITOR to start' });
  return {
    lines,
    async stop() {
      const marker = `monitor-end-${ws}`;
      execFileSync('redis-cli', [...cli, 'ECHO', marker], { env });
      await eventually(() => lines.some((l) => l.includes(marker)), { what: 'MONITOR to print the commands before its stop' });
      child.kill();
    },
  };
}

// The commands clients sent (not those a script ran) that name ws's keys.
function clientCommands(lines, ws) {
  return lines.filter((l) => !/\[\d+ lua\]/.test(l) && l.includes(`{ws:${ws}}`));
}

// The client (address:port) of a MONITOR line.
const clientOf = (line) => (line.match(/\[\d+ ([^\]]+)\]/) || [])[1];

for (const [name, path, check] of [
  ['native GET /v1/sandboxes', '/v1/sandboxes', (r) => assert.equal(r.body.sandboxes.length, COUNT)],
  ['E2B GET /v2/sandboxes', '/v2/sandboxes', (r) => assert.equal(r.headers.get('x-total-running'), String(COUNT))],
]) {
  test(`${name} over ${COUNT} sandboxes: one script, a constant number of commands`, async () => {
    const A = newWorkspace();
    seed(A.id, COUNT);
    // Once unwatched: the first use of a script on a server loads it
    // (EVALSHA, NOSCRIPT, EVAL); from then on it is one EVALSHA.
    assert.equal((await api('GET', path, { key: A.member })).status, 200);
    const m = await monitor(A.id);
    const r = await api('GET', path, { key: A.member });
    await m.stop();
    assert.equal(r.status, 200, r.raw);
    check(r);
    const sent = clientCommands(m.lines, A.id);
    const reads = sent.filter((l) => /"HGETALL" "[^"]*:sb:|"SMEMBERS" "[^"]*:sbs"/i.test(l));
    assert.equal(reads.length, 0, `per-sandbox reads outside a script:\n${reads.slice(0, 5).join('\n')}`);
    const scripts = sent.filter((l) => /"EVAL(SHA)?"/i.test(l) && l.includes(`corral:{ws:${A.id}}:sbs`));
    assert.equal(scripts.length, 1, `the list script ran ${scripts.length} times:\n${sent.join('\n')}`);
    // Everything the serving handler's connection sent (corral-sched's sweeps
    // come from other connections): the API key, its rate bucket, the list;
    // and AUTH if that thread's connection was new.
    const handler = m.lines.filter((l) => clientOf(l) === clientOf(scripts[0]) && !/"AUTH"/.test(l));
    assert.ok(handler.length <= 3, `${handler.length} commands for one list:\n${handler.join('\n')}`);
    // Inside the script: the set and one HGETALL per record, as before, but in Redis.
    const inside = m.lines.filter((l) => /\[\d+ lua\]/.test(l) && l.includes(`{ws:${A.id}}:sb:`));
    assert.equal(inside.length, COUNT);
  });
}
