// The attacker's matrix (issue 25), over a sandbox of every kind in each of
// two workspaces. What a sandbox can reach, tried from inside as root: every other sandbox of both workspaces (envd's port and an app
// port it serves), every egress proxy, every address of the host with every
// port something listens on there (Redis, its sentinels, workerd's data ports,
// nginx, sshd, ...). Prints the whole matrix, then fails on every cell that
// was reached and should not have been. Each sandbox reaching its own app and,
// with a policy, its own proxy is the control: the probe works, the app runs.
// Then the control plane (every sandbox route with another workspace's keys,
// a join token, a worker's secret, no key, a forged key) and the data plane
// (envd and app ports without, or with another sandbox's, tokens; the
// gateway host's ports by a sandbox's host name).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { KINDS, APP_PORT, ENVD_PORT, PROXY_PORT, Sandbox, workspace, make, hostFacts, probe, serving, killAll, call,
  corralctl, viaGateway } from './lib.mjs';

let all = [], a, b;
const host = hostFacts();

before(async () => {
  a = workspace('a'); b = workspace('b');
  // Serially: a create's wait is the thing under test elsewhere, not here.
  for (const ws of [a, b]) for (const kind of Object.keys(KINDS)) all.push(await make(kind, ws));
  for (const s of all) await serving(s);
}, { timeout: 600_000 });

after(async () => { await killAll(all); });

const CROSSED = new Set(['open', 'reset']);

// Targets of one source: [host, port, label, allowed].
function targetsOf(src) {
  const t = [[src.ip, APP_PORT, 'itself', true]];
  for (const p of src.proxy) t.push([p, PROXY_PORT, 'its own proxy', true]);
  for (const o of all) {
    if (o === src) continue;
    const who = `${o.kind}/${o.ws.name}`;
    t.push([o.ip, ENVD_PORT, `sandbox ${who} envd`, false], [o.ip, APP_PORT, `sandbox ${who} app`, false]);
    for (const p of o.proxy) t.push([p, PROXY_PORT, `proxy of ${who}`, false]);
  }
  const next = all[(all.indexOf(src) + 1) % all.length];
  const hostAddrs = [...host.addrs, { addr: src.gw, dev: 'its own bridge' }, { addr: next.gw, dev: `bridge of ${next.kind}/${next.ws.name}` }];
  for (const a of hostAddrs) for (const port of host.ports) t.push([a.addr, port, `host ${a.dev}`, false]);
  return t;
}

test('from every kind of sandbox, as root: no other sandbox, no proxy but its own, no port of the host', async () => {
  const rows = [], bad = [];
  for (const src of all) {
    const targets = targetsOf(src);
    const got = await probe(src, targets.map(([h, p]) => [h, p]));
    const row = { from: `${src.kind}/${src.ws.name}`, self: '', sandboxes: '.', proxies: '.', host: '.' };
    for (const [h, p, label, allowed] of targets) {
      const r = got[`${h}:${p}`];
      const crossed = CROSSED.has(r);
      if (allowed) {
        if (r !== 'open') bad.push(`${row.from} -> ${label} ${h}:${p}: ${r} (the control: it must be reached)`);
        row.self += r === 'open' ? 'ok ' : 'FAIL ';
        continue;
      }
      const col = label.startsWith('sandbox') ? 'sandboxes' : label.startsWith('proxy') ? 'proxies' : 'host';
      if (crossed) {
        row[col] = 'REACHED';
        bad.push(`${row.from} -> ${label} ${h}:${p}: ${r}`);
      }
    }
    rows.push(row);
  }
  console.log(`\nreachability (from x to; '.' = every target walled), ${host.addrs.length} host addresses x ${host.ports.length} ports:`);
  console.table(rows);
  assert.deepEqual(bad, [], `cells reached that must not be:\n${bad.join('\n')}`);
});

// Every route that names a sandbox, with a body it would accept from its owner.
const ROUTES = [
  ['GET', '/v1/sandboxes/{id}'], ['GET', '/v1/sandboxes/{id}/metrics'],
  ['PUT', '/v1/sandboxes/{id}/network', { allowed_domains: ['evil.test'] }],
  ['POST', '/v1/sandboxes/{id}/pause'], ['POST', '/v1/sandboxes/{id}/resume'],
  ['POST', '/v1/sandboxes/{id}/snapshots', { name: 'stolen' }],
  ['GET', '/sandboxes/{id}'], ['GET', '/sandboxes/{id}/metrics'], ['GET', '/sandboxes/{id}/logs'],
  ['GET', '/v2/sandboxes/{id}/logs'], ['POST', '/sandboxes/{id}/timeout', { timeout: 1 }],
  ['PUT', '/sandboxes/{id}/network', { allowOut: ['evil.test'] }], ['POST', '/sandboxes/{id}/pause'],
  ['POST', '/sandboxes/{id}/resume', { timeout: 1 }], ['POST', '/sandboxes/{id}/refreshes', { duration: 1 }],
  ['POST', '/sandboxes/{id}/snapshots', {}], ['POST', '/sandboxes/{id}/fork', { count: 1 }],
  ['POST', '/sandboxes/{id}/connect', { timeout: 1 }], ['POST', '/v2/sandboxes/{id}/connect', { timeout: 1 }],
  ['GET', '/v1/internal/route/{id}'],
  ['DELETE', '/v1/sandboxes/{id}'], ['DELETE', '/sandboxes/{id}'],
];

// The credentials of everyone who is not workspace a's: {name: headers}.
function strangers() {
  const w = readFileSync(`${process.env.CORRAL_RUN}/workerd-state/worker`, 'utf8');
  const field = (k) => w.match(new RegExp(`^${k} = (\\S+)$`, 'm'))[1];
  const fleetToken = readFileSync(`${process.env.CORRAL_RUN}/workerd.token`, 'utf8').trim();
  const join = corralctl('join-token', 'create', '--workspace', a.id).token;
  const forged = a.member.slice(0, -8) + [...a.member.slice(-8)].map((c) => (c === '0' ? '1' : '0')).join('');
  return {
    'b member': { 'X-API-Key': b.member },
    'b owner': { 'X-API-Key': b.owner },
    "a's join token": { Authorization: `Bearer ${join}` },
    'a worker': { Authorization: `Bearer ${fleetToken}`, 'X-Worker-Id': field('worker_id'), 'X-Worker-Secret': field('worker_secret') },
    'forged a key': { 'X-API-Key': forged },
    'no key': {},
  };
}

test('the control plane: no route answers a stranger about, or changes, a sandbox of another workspace', async () => {
  const mine = all.filter((s) => s.ws === a);
  const before = new Map();
  for (const s of mine) before.set(s.id, (await call('GET', `/v1/sandboxes/${s.id}`, { key: a.member })).body);
  const bad = [], table = {};
  for (const [who, headers] of Object.entries(strangers())) {
    table[who] = {};
    for (const [method, route, body] of ROUTES) {
      const codes = new Set();
      for (const s of mine) {
        const r = await call(method, route.replace('{id}', s.id), { headers, body });
        codes.add(r.status);
        if (![401, 403, 404].includes(r.status)) bad.push(`${who}: ${method} ${route} on ${s.kind}: ${r.status} ${r.raw.slice(0, 120)}`);
        else if (typeof r.body !== 'object' || r.body?.code !== r.status) bad.push(`${who}: ${method} ${route}: not the error shape: ${r.raw.slice(0, 120)}`);
        if (s.sbx.envdAccessToken && r.raw.includes(s.sbx.envdAccessToken)) bad.push(`${who}: ${method} ${route} answered with ${s.kind}'s envd token`);
      }
      table[who][`${method} ${route}`] = [...codes].join(',');
    }
    // Lists and the batch metrics route: a's sandboxes never show.
    for (const path of ['/v1/sandboxes', '/v2/sandboxes', '/sandboxes', `/sandboxes/metrics?sandbox_ids=${mine.map((s) => s.id).slice(0, 100).join(',')}`]) {
      const r = await call('GET', path, { headers });
      if (mine.some((s) => r.raw.includes(s.id))) bad.push(`${who}: GET ${path} lists a sandbox of a`);
    }
  }
  console.log('\ncontrol plane: every stranger x route over the', mine.length, "kinds of a's sandboxes (statuses seen):");
  console.table(Object.fromEntries(ROUTES.map(([m, r]) => [`${m} ${r}`, Object.fromEntries(Object.keys(table).map((w) => [w, table[w][`${m} ${r}`]]))])));
  // Nothing changed: every sandbox runs, with the same deadline and policy, and answers.
  for (const s of mine) {
    const now = (await call('GET', `/v1/sandboxes/${s.id}`, { key: a.member })).body;
    const was = before.get(s.id);
    for (const k of ['state', 'expires_at', 'allowed_domains', 'egress_next']) {
      if (JSON.stringify(now[k]) !== JSON.stringify(was[k])) bad.push(`${s.kind}: ${k} changed from ${JSON.stringify(was[k])} to ${JSON.stringify(now[k])}`);
    }
    assert.equal(await s.sbx.files.read('/srv/app/index.html', { user: 'root' }), s.marker);
  }
  // b's own snapshot kind made one of its own sandboxes; none of a's.
  const ids = new Set(mine.map((s) => s.id));
  for (const key of [a.member, b.member]) {
    const snaps = (await call('GET', '/v1/snapshots', { key })).body.snapshots;
    const stolen = snaps.filter((x) => x.name === 'stolen' || (key === b.member && ids.has(x.sandbox_id)));
    if (stolen.length) bad.push(`snapshots a stranger made: ${JSON.stringify(stolen)}`);
  }
  assert.deepEqual(bad, [], bad.join('\n'));
});

test("a member key: none of the owner's routes", async () => {
  const routes = [['PATCH', '/v1/workspace', { max_concurrent_sandboxes: 1000 }], ['POST', '/v1/keys', { role: 'owner' }],
    ['POST', '/v1/join-tokens', { ttl_seconds: 3600 }], ['GET', '/v1/audit'], ['DELETE', '/v1/workers/0000000000000000']];
  for (const [method, path, body] of routes) {
    const r = await call(method, path, { key: a.member, body });
    assert.equal(r.status, 403, `${method} ${path}: ${r.raw}`);
  }
});

// What the gateway answers with a sandbox's id and no token, or the token of
// another sandbox; the marker must never come back but where it should.
test('the data plane: envd and app ports need their own sandbox\'s tokens; the host\'s ports are never behind a sandbox name', async () => {
  const bad = [], rows = [];
  const redisPort = Number(process.env.CORRAL_REDIS_PORT);
  const other = (s) => all.find((o) => o.ws !== s.ws && o.kind === s.kind);
  for (const s of all.filter((x) => x.ws === a)) {
    const o = other(s);
    const row = { kind: s.kind };
    const envd = async (h) => (await viaGateway(s.id, ENVD_PORT, { 'Content-Type': 'application/json', ...h }, '/process.Process/List')).status;
    row['envd, no token'] = await envd({});
    row["envd, b's token"] = await envd({ 'X-Access-Token': o.sbx.envdAccessToken || 'f'.repeat(64) });
    // A known sandbox, no or a foreign token: E2B's 401 (decision 0069).
    const secure = s.kind !== 'insecure';
    if (secure && row['envd, no token'] !== 401) bad.push(`${s.kind}: envd without a token: ${row['envd, no token']}, not 401`);
    if (secure && row["envd, b's token"] !== 401) bad.push(`${s.kind}: envd with b's token: ${row["envd, b's token"]}, not 401`);
    const app = await viaGateway(s.id, APP_PORT);
    row['app, no traffic token'] = app.status;
    if (s.kind === 'private' && app.status !== 403) bad.push(`private: app without the traffic token: ${app.status}, not 403`);
    if (s.kind !== 'private' && !app.text.includes(s.marker)) bad.push(`${s.kind}: its public app not served (${app.status} ${app.text.slice(0, 100)})`);
    if (s.kind === 'private') {
      const theirs = await viaGateway(s.id, APP_PORT, { 'e2b-traffic-access-token': o.sbx.trafficAccessToken });
      row["app, b's traffic token"] = theirs.status;
      if (theirs.status !== 403) bad.push(`private: app with b's traffic token: ${theirs.status}, not 403`);
    }
    // A host port by a sandbox's name reaches that sandbox's port, where
    // nothing listens (502), or, for a private one, the traffic token is
    // asked for before anything is connected (403): never the host's service.
    const refusal = s.kind === 'private' ? 403 : 502;
    for (const port of [redisPort, Number(process.env.CORRAL_WORKERD_DATA_PORT), Number(process.env.CORRAL_PORT)]) {
      const r = await viaGateway(s.id, port, {}, '/');
      row[`host port ${port}`] = r.status;
      if (r.status !== refusal || !r.text.includes(`"code":${refusal}`)) bad.push(`${s.kind}: port ${port} by its name answered ${r.status} ${r.text.slice(0, 80)}`);
    }
    rows.push(row);
  }
  console.log('\ndata plane: statuses through the gateway, by header routing:');
  console.table(rows);
  assert.deepEqual(bad, [], bad.join('\n'));
});
