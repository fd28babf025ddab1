// Stand-ins for hosts outside a worker, for tests and benchmarks: network
// namespaces this machine makes itself (never an outside address).
//   "internet": 198.51.100.10 and .11 (a documentation range, so not private),
//               routed through 203.0.113.2 (the namespace's side of a /30
//               link whose host side is 203.0.113.1): behind a router, as the
//               internet is, not on a network of the host's own interfaces,
//               which netguard blocks like a private range (issue 25);
//   "private":  10.213.0.10, a host in a private range.
// Each runs python3's http.server on port 8080 over a directory holding
// index.html ("<name> stand-in") and, on request, a file of a given size.
// Why namespaces rather than containers on a Docker network: Docker drops
// traffic between its bridges, so a sandbox could never reach a stand-in
// container, for reasons that have nothing to do with Corral.
import { execFileSync, spawn } from 'node:child_process';
import { sleep } from './poll.mjs';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ip = (...a) => execFileSync('ip', a, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const quiet = (...a) => { try { ip(...a); } catch { /* already gone */ } };

export const INET = { ns: 'crltest-inet', host: '203.0.113.1', addrs: ['198.51.100.10', '198.51.100.11'], prefix: 30,
  router: '203.0.113.2', routed: '198.51.100.0/24' };
export const PRIV = { ns: 'crltest-priv', host: '10.213.0.1', addrs: ['10.213.0.10'], prefix: 24 };
export const PORT = 8080;
// What a worker's egress proxies resolve these names to (workerd's egress_hosts).
export const HOSTS = {
  'api.allowed.test': INET.addrs[0],
  'dl.allowed.test': INET.addrs[0],
  'other.test': INET.addrs[1],
  'private.allowed.test': PRIV.addrs[0],
};
export const egressHostsConf = () => `egress_hosts = ${Object.entries(HOSTS).map(([n, a]) => `${n}:${a}`).join(',')}`;

function up(net, dir) {
  const veth = `crt-${net.ns.slice(8, 12)}`;
  quiet('netns', 'del', net.ns);
  quiet('link', 'del', veth);
  ip('netns', 'add', net.ns);
  ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', net.ns);
  ip('addr', 'add', `${net.host}/${net.prefix}`, 'dev', veth);
  ip('link', 'set', veth, 'up');
  if (net.router) ip('-n', net.ns, 'addr', 'add', `${net.router}/${net.prefix}`, 'dev', 'eth0');
  for (const a of net.addrs) ip('-n', net.ns, 'addr', 'add', `${a}/${net.router ? 32 : net.prefix}`, 'dev', 'eth0');
  ip('-n', net.ns, 'link', 'set', 'eth0', 'up');
  if (net.router) { quiet('route', 'del', net.routed); ip('route', 'add', net.routed, 'via', net.router); }
  ip('-n', net.ns, 'link', 'set', 'lo', 'up');
  ip('-n', net.ns, 'route', 'add', 'default', 'via', net.host);
  const proc = spawn('ip', ['netns', 'exec', net.ns, 'python3', '-m', 'http.server', String(PORT), '--directory', dir],
    { stdio: 'ignore' });
  return { veth, proc };
}

async function answers(net) {
  for (let i = 0; i < 50; i++) {
    try {
      execFileSync('ip', ['netns', 'exec', net.ns, 'python3', '-c',
        `import urllib.request;urllib.request.urlopen('http://${net.addrs[0]}:${PORT}/',timeout=1)`], { stdio: 'ignore' });
      return;
    } catch {
      // sleep: between tries of this loop (50 of them).
      await sleep(100);
    }
  }
  throw new Error(`stand-in ${net.ns} did not answer on port ${PORT}`);
}

// Starts both stand-ins; bigMb > 0 also serves /big.bin of that many MB.
export async function startStandins({ bigMb = 0 } = {}) {
  const dirs = [INET, PRIV].map((n) => {
    const d = mkdtempSync(join(tmpdir(), 'corral-standin-'));
    writeFileSync(join(d, 'index.html'), `${n === INET ? 'public' : 'private'} stand-in\n`);
    if (bigMb > 0 && n === INET) execFileSync('sh', ['-c', `head -c ${bigMb * 1048576} /dev/urandom > "$1"`, 'sh', join(d, 'big.bin')]);
    return d;
  });
  const nets = [up(INET, dirs[0]), up(PRIV, dirs[1])];
  await answers(INET);
  await answers(PRIV);
  return {
    stop() {
      for (const n of nets) { n.proc.kill('SIGKILL'); quiet('link', 'del', n.veth); }
      quiet('route', 'del', INET.routed);
      quiet('netns', 'del', INET.ns);
      quiet('netns', 'del', PRIV.ns);
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}
