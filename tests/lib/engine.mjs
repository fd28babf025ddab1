// dockerd's Engine API over its unix socket, for tests and benchmarks that
// look at what workerd made (node:http; no docker CLI).
import http from 'node:http';
import { sleep } from './poll.mjs';

export const SOCK = process.env.DOCKER_SOCK || '/var/run/docker.sock';

// One call: {status, body (parsed JSON, or the text)}; sock: another
// dockerd's (a worker host of a test's own).
export function docker(method, path, body, sock = SOCK) {
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: sock, method, path: `/v1.41${path}`,
      headers: data ? { 'Content-Type': 'application/json' } : {} }, (res) => {
      let raw = '';
      res.on('data', (c) => { raw += c; });
      res.on('end', () => {
        let json = null;
        try { json = raw ? JSON.parse(raw) : null; } catch { json = raw; }
        ok({ status: res.statusCode, body: json });
      });
    });
    req.setTimeout(60000, () => req.destroy(new Error(`dockerd ${method} ${path}: timeout`)));
    req.on('error', fail);
    req.end(data);
  });
}

// A sandbox's own containers (and its egress proxy with withProxy), in any
// state: by the label a cold create gives, or by the name a claimed warm
// sandbox gets just after its create is answered (its labels stay its warm
// id's: 0082); a proxy from the pool is known by its name only.
export async function sandboxContainers(sbid, { withProxy = false, sock = SOCK } = {}) {
  const list = async (filters) => (await docker('GET',
    `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify(filters))}`, undefined, sock)).body || [];
  const byId = new Map();
  for (const c of [...await list({ label: [`corral.sandbox=${sbid}`] }),
    ...await list({ name: [`^/corral-${sbid}-[0-9a-f]+(-egress)?$`] })]) {
    const proxy = String(c.Labels?.['corral.role']).startsWith('egress') || c.Names?.[0]?.endsWith('-egress');
    if (withProxy || !proxy) byId.set(c.Id, c);
  }
  return [...byId.values()];
}

// The sandbox a listed container is: its label, or for a claimed warm one
// the id in its name (null for one still nobody's, or not yet renamed).
export function sandboxOf(c) {
  const role = c.Labels?.['corral.role'];
  if (role === 'sandbox') return c.Labels['corral.sandbox'];
  const m = role === 'warm' && /^\/corral-([A-Za-z0-9_]+)-[0-9a-f]+$/.exec(c.Names?.[0] ?? '');
  return m && !m[1].startsWith('warm_') ? m[1] : null;
}

// A sandbox's own running container, waited for (a claimed one is renamed a
// moment after its create is answered).
export async function sandboxContainer(sbid, timeoutMs = 10_000, sock = SOCK) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const c = (await sandboxContainers(sbid, { sock })).find((x) => x.State === 'running');
    if (c) return c;
    if (Date.now() > end) throw new Error(`no container for sandbox ${sbid}`);
    // sleep: a rename is a dockerd call away
    await sleep(50);
  }
}

// The address of a sandbox's own container (not its proxy) on its network.
export async function sandboxIp(sbid) {
  const c = await sandboxContainer(sbid);
  return Object.values(c.NetworkSettings.Networks)[0].IPAddress;
}

// An egress proxy workerd keeps started ahead of need, and its internal
// network (workerd/egress_pool.h): never assigned to a sandbox, so not a
// leftover of one.
export const isReadyProxy = (c) =>
  c.Labels?.['corral.role'] === 'egress-pool' && (c.Names?.[0] || '').startsWith('/corral-p-');
// A warm sandbox of a pool, not claimed (workerd/warm_pool.h): nobody's.
export const isReadyWarm = (c) => c.Labels?.['corral.role'] === 'warm' && (c.Names?.[0] || '').startsWith('/corral-warm_');
export const isReadyNetwork = (n) => /^p-[0-9a-f]{16}$/.test(n.Labels?.['corral.sandbox'] || '');
