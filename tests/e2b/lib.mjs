// The real e2b SDK against Corral. tests/e2b/run.sh sets E2B_API_URL,
// E2B_API_KEY, NODE_EXTRA_CA_CERTS and, per routing mode, E2B_DOMAIN or
// E2B_SANDBOX_URL. For the domain mode, <port>-<id>.<domain> must resolve to
// this machine: there is no wildcard DNS here, so the test process resolves
// that one domain to loopback itself (everything else resolves normally).
import dns from 'node:dns';
import { Sandbox } from './sdk.mjs';

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
