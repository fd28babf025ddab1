// Runs before failover.test.mjs (file order): the primary and replica as started.
// Never a write to a replica, and never a secret guessed (decision 0058): a
// sentinel that names a replica as the primary (as one may for a moment
// during a failover) gets no write through, because every connection checks
// ROLE first; and sentinels that refuse Corral's password name nothing.
// corralctl uses the same rconn as corral-api and corral-sched.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { RUN, redisAs } from '../lib/corral.mjs';

const BIN = process.env.CORRAL_BUILD;
const REDIS_PORT = Number(process.env.CORRAL_REDIS_PORT);
const servers = [];
after(() => servers.forEach((s) => s.close()));

// A sentinel that answers every get-master-addr-by-name with `port` on
// loopback (and any AUTH with OK), counting what it was asked.
async function lyingSentinel(port) {
  const asked = { master: 0 };
  const srv = createServer((sock) => {
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      if (/AUTH/i.test(buf)) { sock.write('+OK\r\n'); buf = ''; }
      if (/get-master-addr-by-name/i.test(buf)) {
        asked.master++;
        const p = String(port);
        sock.write(`*2\r\n$9\r\n127.0.0.1\r\n$${p.length}\r\n${p}\r\n`);
        buf = '';
      }
    });
    sock.on('error', () => {});
  });
  await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
  servers.push(srv);
  return { port: srv.address().port, asked };
}

// corral.conf with some lines replaced.
function confWith(name, lines) {
  const keys = Object.keys(lines);
  const base = readFileSync(`${RUN}/corral.conf`, 'utf8').split('\n')
    .filter((l) => !keys.includes(l.split('=')[0].trim()));
  const file = `${RUN}/${name}.conf`;
  writeFileSync(file, [...base, ...keys.map((k) => `${k} = ${lines[k]}`)].join('\n'), { mode: 0o600 });
  return file;
}

// Asynchronous: the lying sentinel answers from this process's event loop.
const ctl = (conf, ...args) => new Promise((ok) => execFile(`${BIN}/corralctl`, ['-c', conf, '--json', ...args],
  (err, stdout, stderr) => ok({ status: err ? err.code : 0, stdout, stderr })));
const dbsize = (port) => Number(redisAs('corral-admin', `${RUN}/redis-admin-password`, '-p', String(port), 'DBSIZE'));
const primaryPort = () => (redisAs('corral-admin', `${RUN}/redis-admin-password`, '-p', String(REDIS_PORT), 'ROLE')
  .startsWith('master') ? REDIS_PORT : REDIS_PORT + 1);

test('a sentinel naming the replica gets no command through: ROLE is checked first', async () => {
  const replica = primaryPort() === REDIS_PORT ? REDIS_PORT + 1 : REDIS_PORT;
  const liar = await lyingSentinel(replica);
  const conf = confWith('liar', { redis_sentinels: `127.0.0.1:${liar.port}` });
  const before = dbsize(primaryPort());
  const r = await ctl(conf, 'workspace', 'create', 'never-made');
  assert.notEqual(r.status, 0, `corralctl succeeded against a replica: ${r.stdout}`);
  assert.match(r.stderr, /not a primary/, r.stderr);
  assert.ok(liar.asked.master >= 1, 'the lying sentinel was asked');
  assert.equal(dbsize(primaryPort()), before, 'nothing was written');
  // The same conf with the true sentinels works: it is the liar that failed it.
  const ok = await ctl(confWith('honest', { redis_sentinels: `127.0.0.1:${REDIS_PORT + 2}` }), 'workspace', 'create', 'made');
  assert.equal(ok.status, 0, ok.stderr);
});

test('sentinels that refuse the password name no primary: a clear error, nothing written', async () => {
  const wrong = 'f'.repeat(64);
  writeFileSync(`${RUN}/wrong-sentinel-password`, `${wrong}\n`, { mode: 0o600 });
  const conf = confWith('wrongpw', { redis_sentinel_password_file: `${RUN}/wrong-sentinel-password` });
  const before = dbsize(primaryPort());
  const r = await ctl(conf, 'workspace', 'create', 'never-made');
  assert.notEqual(r.status, 0, r.stdout);
  assert.match(r.stderr, /no sentinel named the primary/, r.stderr);
  assert.ok(!r.stderr.includes(wrong), 'the password is not in the error');
  assert.equal(dbsize(primaryPort()), before, 'nothing was written');
});
