// dockerd's Engine API over its unix socket, for tests and benchmarks that
// look at what workerd made (node:http; no docker CLI).
import http from 'node:http';

export const SOCK = process.env.DOCKER_SOCK || '/var/run/docker.sock';

// One call: {status, body (parsed JSON, or the text)}.
export function docker(method, path, body) {
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ socketPath: SOCK, method, path: `/v1.41${path}`,
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

// The address of a sandbox's own container (not its proxy) on its network.
export async function sandboxIp(sbid) {
  const f = encodeURIComponent(JSON.stringify({ label: [`corral.sandbox=${sbid}`, 'corral.role=sandbox'] }));
  const [c] = (await docker('GET', `/containers/json?filters=${f}`)).body;
  if (!c) throw new Error(`no container for sandbox ${sbid}`);
  return Object.values(c.NetworkSettings.Networks)[0].IPAddress;
}

// An egress proxy workerd keeps started ahead of need, and its internal
// network (workerd/egress_pool.h): never assigned to a sandbox, so not a
// leftover of one.
export const isReadyProxy = (c) =>
  c.Labels?.['corral.role'] === 'egress-pool' && (c.Names?.[0] || '').startsWith('/corral-p-');
export const isReadyNetwork = (n) => /^p-[0-9a-f]{16}$/.test(n.Labels?.['corral.sandbox'] || '');
