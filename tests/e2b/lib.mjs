// The real e2b SDK against Corral. tests/e2b/run.sh sets E2B_API_URL,
// E2B_API_KEY, NODE_EXTRA_CA_CERTS and, per routing mode, E2B_DOMAIN or
// E2B_SANDBOX_URL. For the domain mode, <port>-<id>.<domain> must resolve to
// this machine: there is no wildcard DNS here, so the test process resolves
// that one domain to loopback itself (everything else resolves normally).
import dns from 'node:dns';
import { before, after } from 'node:test';
import { Sandbox } from './sdk.mjs';
import { startStandins } from '../lib/standins.mjs';

export const MODE = process.env.CORRAL_ROUTING;
if (!process.env.E2B_API_URL || !process.env.E2B_API_KEY || !MODE) {
  throw new Error('run through tests/e2b/run.sh: E2B_API_URL, E2B_API_KEY and CORRAL_ROUTING must be set');
}
const domainHost = (process.env.CORRAL_SANDBOX_DOMAIN || '').toLowerCase();
if (domainHost) {
  const original = dns.lookup;
  dns.lookup = function lookup(host, options, callback) {
    if (typeof host === 'string' && host.toLowerCase().endsWith(`.${domainHost}`)) host = '127.0.0.1';
    return original.call(this, host, options, callback);
  };
}

export { Sandbox };

// Where a sandbox's port is reached through the gateway, as the SDK reaches
// it in this run's routing mode: by host, or by headers.
export const gatewayUrl = (sbx, port) => (process.env.E2B_SANDBOX_URL
  ? { url: process.env.E2B_SANDBOX_URL, headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': String(port) } }
  : { url: `https://${sbx.getHost(port)}`, headers: {} });
export { sleep } from '../lib/poll.mjs';

// Every sandbox a test makes is killed after it, pass or fail.
export async function withSandbox(opts, fn) {
  const sbx = await Sandbox.create('base', { timeoutMs: 120_000, ...opts });
  try {
    return await fn(sbx);
  } finally {
    await sbx.kill().catch(() => {});
  }
}

// The loopback stand-ins of tests/lib/standins.mjs, up for the tests of the
// file that calls this (at its top level).
export function useStandins() {
  let standins;
  before(async () => { standins = await startStandins(); });
  after(() => standins?.stop());
}

// Fetches each URL from inside the sandbox (urllib honours the proxy
// variables): {url: body, 'HTTP <status>' or the exception's name}.
export async function fetchFrom(sbx, urls) {
  const code = `
import json, urllib.request
out = {}
for url in ${JSON.stringify(urls)}:
    try: out[url] = urllib.request.urlopen(url, timeout=5).read().decode().strip()
    except urllib.error.HTTPError as e: out[url] = 'HTTP %d' % e.code
    except Exception as e: out[url] = type(e).__name__
print(json.dumps(out))`;
  const r = await sbx.commands.run(`python3 - <<'PY'\n${code}\nPY`, { timeoutMs: 60_000 });
  return JSON.parse(r.stdout);
}
