// Network isolation, tried as an attacker would, on real dockerd and the real
// stack: sandboxes of two workspaces (and two of one, and one under gVisor)
// probe each other, private stand-ins and the host; a sandbox with an egress
// policy goes out only through its proxy, and only where the policy allows.
// Every target is a container of this test, a stand-in namespace it made
// (tests/lib/standins.mjs) or a listener on this host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { api, newWorkspace, eventually } from '../lib/corral.mjs';
import { startStandins, egressHostsConf, INET, PRIV, PORT } from '../lib/standins.mjs';
import { stackWorker, cleanupWorkers, createSb, deleteSb, ctrsOf, envdOf, envdRun, inspect,
  docker, containersLabelled } from './helpers.mjs';
import { isReadyProxy, isReadyNetwork } from '../lib/engine.mjs';

let A, B, wA, wB, standins, hostListener, hostPort;
const sbs = {};

// Runs python3 -c code in a sandbox as user; returns parsed JSON stdout.
async function py(sb, code, user = 'user') {
  const out = await envdRun(sb.envd, `python3 - <<'PY'\n${code}\nPY`, { user });
  try { return JSON.parse(out.stdout); } catch { throw new Error(`probe output: ${out.stdout} ${out.stderr}`); }
}

// TCP connect, UDP round trip and ICMP echo towards each target, all at once
// (threads: a closed target costs its timeout): what answered.
const PROBE = (targets) => `
import json, socket, threading
out = {}
def tcp(host, port, r):
    s = socket.socket(); s.settimeout(1.5)
    try: s.connect((host, port)); r['tcp'] = 'open'
    except Exception as e: r['tcp'] = type(e).__name__
    s.close()
def udp(host, port, r):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(1.5)
    try: u.sendto(b'ping', (host, 9999)); u.recvfrom(64); r['udp'] = 'answered'
    except Exception as e: r['udp'] = type(e).__name__
    u.close()
def icmp(host, port, r):
    try:
        i = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP); i.settimeout(1.5)
        i.sendto(b'\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00', (host, 0)); i.recvfrom(64); r['icmp'] = 'answered'
    except Exception as e: r['icmp'] = type(e).__name__
threads = []
for host, port in ${JSON.stringify(targets)}:
    r = out.setdefault(host + ':' + str(port), {})
    for f in (tcp, udp, icmp):
        t = threading.Thread(target=f, args=(host, port, r)); t.start(); threads.append(t)
for t in threads: t.join()
print(json.dumps(out))`;

// A TCP server on 8000 and a UDP echo on 9999 inside a sandbox, in the background.
const SERVE = `nohup python3 -m http.server 8000 >/dev/null 2>&1 &
nohup python3 -c "
import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('0.0.0.0', 9999))
while True:
    d, a = u.recvfrom(64); u.sendto(d, a)
" >/dev/null 2>&1 &
sleep 0.5; echo started`;

async function sandbox(name, ws, worker, body = {}) {
  const r = await createSb(ws, body);
  assert.equal(r.status, 201, `${name}: ${r.raw}`);
  const sbid = r.body.sandbox_id;
  const envd = await envdOf(worker.id, sbid);
  const ip = Object.values(envd.info.NetworkSettings.Networks)[0].IPAddress;
  const gw = Object.values(envd.info.NetworkSettings.Networks)[0].Gateway;
  sbs[name] = { sbid, envd, ip, gw, ws, worker };
  return sbs[name];
}

before(async () => {
  standins = await startStandins();
  // Speaks HTTP, so that a fetch that reached it would say so unmistakably.
  hostListener = net.createServer((c) => c.end('HTTP/1.0 200 OK\r\n\r\nhost service\n'));
  await new Promise((ok) => hostListener.listen(0, '0.0.0.0', ok));
  hostPort = hostListener.address().port;
  A = newWorkspace();
  B = newWorkspace();
  const extra = `${egressHostsConf()}\ncpu_cores = 64\nmemory_mb = 65536\nslots = 16`;
  wA = await stackWorker(A, { extra });
  wB = await stackWorker(B, { extra });
  await sandbox('a1', A, wA);
  await sandbox('a2', A, wA);
  await sandbox('b1', B, wB);
  await sandbox('g1', B, wB, { require_isolation: 'GVISOR' });
  await sandbox('p1', A, wA, { allowed_domains: ['api.allowed.test', 'private.allowed.test'] });
  for (const s of Object.values(sbs)) assert.match((await envdRun(s.envd, SERVE)).stdout, /started/);
});

after(async () => {
  await cleanupWorkers();
  hostListener?.close();
  standins?.stop();
});

test('no sandbox reaches another: envd, a served port, UDP, ICMP; across workspaces, within one, under gVisor, with a policy', async () => {
  const names = Object.keys(sbs);
  for (const from of names) {
    const targets = names.filter((n) => n !== from).flatMap((n) => [[sbs[n].ip, 49983], [sbs[n].ip, 8000]]);
    const got = await py(sbs[from], PROBE(targets));
    for (const [target, r] of Object.entries(got)) {
      assert.notEqual(r.tcp, 'open', `${from} -> ${target}: TCP connected`);
      assert.notEqual(r.udp, 'answered', `${from} -> ${target}: UDP answered`);
      assert.notEqual(r.icmp, 'answered', `${from} -> ${target}: ICMP answered`);
    }
  }
  // The probe itself works: a sandbox reaches its own served port.
  const self = await py(sbs.a1, PROBE([['127.0.0.1', 8000]]));
  assert.equal(self['127.0.0.1:8000'].tcp, 'open');
  assert.equal(self['127.0.0.1:8000'].udp, 'answered');
});

test("a native sandbox's envd refuses calls without its token: through the gateway, and straight to it", async () => {
  const gw = `https://localhost:${Number(new URL(process.env.CORRAL_URL).port) + 1}`;
  const h = { 'E2b-Sandbox-Id': sbs.a1.sbid, 'E2b-Sandbox-Port': '49983' };
  const path = '/files?path=/etc/hostname';
  // The gateway checks the token itself (401, as E2B's envd: decision 0069); envd checks it again (401).
  assert.equal((await fetch(`${gw}${path}`, { headers: h })).status, 401);
  assert.equal((await fetch(`${gw}${path}`, { headers: { ...h, 'X-Access-Token': 'f'.repeat(64) } })).status, 401);
  assert.equal((await fetch(`${gw}${path}`, { headers: { ...h, 'X-Access-Token': sbs.a1.envd.token } })).status, 200);
  assert.equal((await fetch(`http://${sbs.a1.ip}:49983${path}`)).status, 401, 'from the host, without the token');
});

test('raw and packet sockets (ARP or IP spoofing) are refused, to the user and to root', async () => {
  const code = `
import json, socket
r = {}
for name, args in [('packet', (socket.AF_PACKET, socket.SOCK_RAW, 0x0806)), ('raw', (socket.AF_INET, socket.SOCK_RAW, 1))]:
    try: socket.socket(*args); r[name] = 'opened'
    except OSError as e: r[name] = e.errno
print(json.dumps(r))`;
  for (const name of ['a1', 'g1']) {
    for (const user of ['user', 'root']) {
      const r = await py(sbs[name], code, user);
      // EPERM under runc; gVisor answers its own errno, but never a socket.
      for (const k of ['packet', 'raw']) assert.ok(Number.isInteger(r[k]), `${name} as ${user}: ${k} socket ${r[k]}`);
      if (name === 'a1') assert.deepEqual(r, { packet: 1, raw: 1 }, `${name} as ${user}: EPERM`);
    }
  }
  const sudo = await envdRun(sbs.a1.envd, 'sudo python3 -c "import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)" 2>&1 | tail -1');
  assert.match(sudo.stdout, /PermissionError|Operation not permitted/);
});

test('without a policy: the public stand-in answers; private hosts and every port of the host do not', async () => {
  const targets = [[INET.addrs[0], PORT], [PRIV.addrs[0], PORT], [INET.host, hostPort],
    [sbs.a1.gw, hostPort], [PRIV.host, hostPort], ['169.254.169.254', 80]];
  for (const name of ['a1', 'g1']) {
    const got = await py(sbs[name], PROBE(targets));
    assert.equal(got[`${INET.addrs[0]}:${PORT}`].tcp, 'open', `${name}: the public stand-in answers`);
    for (const [h, p] of targets.slice(1)) assert.notEqual(got[`${h}:${p}`].tcp, 'open', `${name} -> ${h}:${p}`);
  }
  const body = await envdRun(sbs.a1.envd, `python3 -c "import urllib.request as u; print(u.urlopen('http://${INET.addrs[0]}:${PORT}/', timeout=3).read().decode())"`);
  assert.match(body.stdout, /public stand-in/);
});

// An HTTP GET through the environment's proxy (urllib reads HTTP_PROXY), and a
// CONNECT tunnel (http.client), from inside the policy sandbox.
const FETCH = (urls) => `
import json, urllib.request, http.client, os
out = {}
for url in ${JSON.stringify(urls)}:
    try: out[url] = urllib.request.urlopen(url, timeout=5).read().decode().strip()
    except urllib.error.HTTPError as e: out[url] = 'HTTP %d %s' % (e.code, e.read().decode().strip())
    except Exception as e: out[url] = type(e).__name__
for host in ['api.allowed.test', 'other.test']:
    c = http.client.HTTPConnection('${'corral-egress'}', 3128, timeout=5)
    try:
        c.set_tunnel(host, ${PORT}); c.request('GET', '/'); out['CONNECT ' + host] = c.getresponse().read().decode().strip()
    except Exception as e: out['CONNECT ' + host] = type(e).__name__ + ' ' + str(e)[:80]
print(json.dumps(out))`;

test('with a policy: the allowed name answers through the proxy; other names, private resolutions and IP literals are refused', async () => {
  const got = await py(sbs.p1, FETCH([`http://api.allowed.test:${PORT}/`, `http://other.test:${PORT}/`,
    `http://private.allowed.test:${PORT}/`, `http://${INET.addrs[0]}:${PORT}/`]));
  assert.equal(got[`http://api.allowed.test:${PORT}/`], 'public stand-in');
  assert.match(got[`http://other.test:${PORT}/`], /^HTTP 403 .*not allowed/);
  assert.match(got[`http://private.allowed.test:${PORT}/`], /^HTTP 403 .*private/);
  assert.match(got[`http://${INET.addrs[0]}:${PORT}/`], /^HTTP 403 /);
  assert.equal(got['CONNECT api.allowed.test'], 'public stand-in');
  assert.match(got['CONNECT other.test'], /403/);
  const log = (await docker('GET', `/containers/corral-${sbs.p1.sbid}-${wA.id}-egress/logs?stderr=1&stdout=1`)).body;
  assert.match(String(log), new RegExp(`sandbox=${sbs.p1.sbid} allow .*api\\.allowed\\.test`));
  assert.match(String(log), new RegExp(`sandbox=${sbs.p1.sbid} refuse .*other\\.test`));
});

test('with a policy: connections that ignore the proxy fail, and DNS gives nothing usable', async () => {
  const got = await py(sbs.p1, `
import json, socket, threading
r = {}
def tcp(host, port):
    s = socket.socket(); s.settimeout(1.5)
    try: s.connect((host, port)); r[host] = 'open'
    except Exception as e: r[host] = type(e).__name__
def name(n):
    try: r[n] = socket.getaddrinfo(n, 80)[0][4][0]
    except Exception as e: r[n] = type(e).__name__
ts = [threading.Thread(target=tcp, args=a) for a in [('${INET.addrs[0]}', ${PORT}), ('${INET.host}', ${hostPort}), ('${sbs.p1.gw}', ${hostPort})]]
ts += [threading.Thread(target=name, args=(n,)) for n in ['api.allowed.test', 'other.test', 'example.com']]
for t in ts: t.start()
for t in ts: t.join()
print(json.dumps(r))`);
  for (const h of [INET.addrs[0], INET.host, sbs.p1.gw]) assert.notEqual(got[h], 'open', `direct to ${h}`);
  for (const n of ['api.allowed.test', 'other.test', 'example.com']) assert.equal(got[n], 'gaierror', `${n} resolved to ${got[n]}`);
});

test('a default-allow policy (E2B denyOut of one range): the proxy reaches the public stand-in, never the host or another proxy', async () => {
  const r = await api('POST', '/sandboxes', { key: A.member,
    body: { templateID: 'base', timeout: 300, network: { denyOut: ['203.0.113.0/24'] } } });
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandboxID;
  const envd = await envdOf(wA.id, sbid, r.body.envdAccessToken);
  const proxyIps = async (id) => Object.values((await inspect(`corral-${id}-${wA.id}-egress`))
    .NetworkSettings.Networks).map((n) => n.IPAddress);
  const egressGw = (await proxyIps(sbid)).find((ip) => ip.startsWith('10.199.')).replace(/\.\d+$/, '.1');
  const pub = `http://${INET.addrs[0]}:${PORT}/`, host = `http://${INET.host}:${hostPort}/`;
  const privates = [`http://${egressGw}:${hostPort}/`, ...(await proxyIps(sbs.p1.sbid)).map((ip) => `http://${ip}:3128/`)];
  const got = await py({ envd }, FETCH([pub, host, ...privates]));
  assert.equal(got[pub], 'public stand-in', 'default allow: a public IP literal goes through the proxy');
  // The host's public-range address: the proxy may try, the host's rules drop it.
  assert.notEqual(got[host], 'host service', `${host} reached through the proxy`);
  for (const u of privates) assert.match(got[u], /^HTTP 403/, `${u}: ${got[u]}`);
  await api('DELETE', `/sandboxes/${sbid}`, { key: A.member });
});

test('an empty allow-list (no egress at all) reaches nothing, not even allowed-looking names', async () => {
  const s = await sandbox('none', A, wA, { allowed_domains: [] });
  const got = await py(s, FETCH([`http://api.allowed.test:${PORT}/`, `http://${INET.addrs[0]}:${PORT}/`]));
  assert.match(got[`http://api.allowed.test:${PORT}/`], /^HTTP 403 /);
  assert.match(got[`http://${INET.addrs[0]}:${PORT}/`], /^HTTP 403 /);
});

test('a sandbox with a policy is wired by structure: internal network shared only with its proxy', async () => {
  const c = await inspect(`corral-${sbs.p1.sbid}-${wA.id}`);
  const nets = Object.keys(c.NetworkSettings.Networks);
  // Its own, made with it, or one the egress pool made ahead (corral-p-<hex>-<worker>-int).
  assert.equal(nets.length, 1);
  assert.match(nets[0], new RegExp(`^corral-(${sbs.p1.sbid}|p-[0-9a-f]{16})-${wA.id}-int$`));
  const n = (await docker('GET', `/networks/${nets[0]}`)).body;
  assert.equal(n.Internal, true);
  assert.match(n.Options['com.docker.network.bridge.name'], /^cri[0-9a-f]{12}$/);
  const members = Object.values(n.Containers).map((m) => m.Name).sort();
  assert.deepEqual(members, [`corral-${sbs.p1.sbid}-${wA.id}`, `corral-${sbs.p1.sbid}-${wA.id}-egress`].sort());
  const p = await inspect(`corral-${sbs.p1.sbid}-${wA.id}-egress`);
  assert.deepEqual(p.HostConfig.CapDrop, ['ALL']);
  assert.equal(p.Config.User, '65534:65534');
  assert.equal(p.HostConfig.ReadonlyRootfs, true);
  assert.ok(c.Config.Env.includes('HTTPS_PROXY=http://corral-egress:3128'));
});

test('the rules: workerd put back a flushed table before the next create', async () => {
  const { execFileSync } = await import('node:child_process');
  execFileSync('nft', ['delete', 'table', 'inet', 'corral']);
  const s = await sandbox('after-flush', A, wA);
  assert.match(execFileSync('nft', ['list', 'table', 'inet', 'corral']).toString(), /hook forward/);
  const got = await py(s, PROBE([[PRIV.addrs[0], PORT], [INET.host, hostPort]]));
  for (const r of Object.values(got)) assert.notEqual(r.tcp, 'open');
});

test('kill removes the sandbox, its proxy and its networks', async () => {
  for (const name of ['p1', 'a2']) {
    const { sbid, worker, ws } = sbs[name];
    const nets = Object.keys((await inspect(`corral-${sbid}-${worker.id}`)).NetworkSettings.Networks);
    assert.equal((await deleteSb(ws, sbid)).status, 204);
    await eventually(async () => {
      for (const n of nets) if ((await docker('GET', `/networks/${n}`)).status !== 404) return false;
      return true;
    }, { timeout: 20000, what: `${name}'s network ${nets} gone` });
    const f = encodeURIComponent(JSON.stringify({ label: [`corral.sandbox=${sbid}`] }));
    // A proxy from the pool carries no sandbox label: it is found by its name.
    await eventually(async () => (await ctrsOf(worker.id, sbid)).length === 0 &&
      !(await inspect(`corral-${sbid}-${worker.id}-egress`)) &&
      (await docker('GET', `/networks?filters=${f}`)).body.length === 0 &&
      !existsSync(`${worker.files.dir}/state/egress/${sbid}`), { timeout: 20000, what: `${name} gone, its proxy's config directory too` });
  }
});

test('20 create/kill cycles (half with a policy) leave no container and no network behind', async () => {
  const C = newWorkspace(20);
  const w = await stackWorker(C, { extra: `${egressHostsConf()}\ncpu_cores = 64\nmemory_mb = 65536\nslots = 16` });
  const cycle = async (i) => {
    const t = Date.now();
    const r = await createSb(C, i % 2 ? { allowed_domains: ['api.allowed.test'] } : {});
    assert.equal(r.status, 201, `cycle ${i} after ${Date.now() - t} ms: ${r.raw}`);
    assert.equal((await deleteSb(C, r.body.sandbox_id)).status, 204);
  };
  const t0 = Date.now();
  for (let i = 0; i < 20; i += 5) await Promise.all([0, 1, 2, 3, 4].map((k) => cycle(i + k)));
  console.log(`20 cycles in ${Date.now() - t0} ms; workerd log ${w.files.log}`);
  const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${w.id}`] }));
  // What may stay: the proxies the pool keeps ready (never assigned, at most egress_pool = 4).
  const ready = isReadyProxy;
  let left;
  await eventually(async () => {
    const all = await containersLabelled(`corral.worker=${w.id}`);
    left = { others: all.filter((c) => !ready(c)).map((c) => c.Names[0]), ready: all.filter(ready).length,
      dirs: readdirSync(`${w.files.dir}/state/egress`).filter((n) => !n.startsWith('p-')),
      nets: (await docker('GET', `/networks?filters=${f}`)).body.filter((n) => !isReadyNetwork(n)).length };
    return left.others.length === 0 && left.ready <= 4 && left.dirs.length === 0 && left.nets === 0;
  }, { timeout: 60000, what: 'every kill applied' }).catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(left)}`); });
  const ws = await api('GET', '/v1/workspace', { key: C.owner });
  assert.equal(ws.body.active_sandboxes, 0);
});
