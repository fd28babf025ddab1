// Certificates for tests that need HTTPS servers a worker's egress proxy
// checks (decision 0091), made with the openssl CLI into dir (once; kept):
//   ca.pem/ca.key         "Corral test public CA": stands for the public roots
//   roots.pem             the machine's bundle plus that CA: workerd's egress_roots
//   <name>.pem/.key       a server certificate for name, signed by that CA
//   rogue-ca.pem, rogue-<name>.pem/.key  the same from a CA nobody trusts
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ssl = (...a) => execFileSync('openssl', a, { stdio: ['ignore', 'pipe', 'pipe'] });
const SYSTEM_ROOTS = '/etc/ssl/certs/ca-certificates.crt';

function ca(dir, base, cn) {
  const key = join(dir, `${base}.key`), pem = join(dir, `${base}.pem`);
  if (!existsSync(pem)) {
    ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '30',
      '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext',
      'keyUsage=critical,keyCertSign,cRLSign', '-keyout', key, '-out', pem);
  }
  return { key, pem };
}

function leaf(dir, issuer, base, names) {
  const key = join(dir, `${base}.key`), csr = join(dir, `${base}.csr`), pem = join(dir, `${base}.pem`);
  const ext = join(dir, `${base}.ext`);
  if (!existsSync(pem)) {
    writeFileSync(ext, `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n` +
      'extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
    ssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj',
      `/CN=${names[0]}`, '-keyout', key, '-out', csr);
    ssl('x509', '-req', '-in', csr, '-CA', issuer.pem, '-CAkey', issuer.key, '-CAcreateserial', '-days', '30',
      '-extfile', ext, '-out', pem);
  }
  return { key, pem };
}

// Makes what is missing in dir; returns the paths. names: the trusted
// server's names; rogueNames: the untrusted one's.
export function makeTestPki(dir, names = ['api.allowed.test', 'dl.allowed.test'], rogueNames = ['other.test']) {
  mkdirSync(dir, { recursive: true });
  const good = ca(dir, 'ca', 'Corral test public CA');
  const rogue = ca(dir, 'rogue-ca', 'Corral test rogue CA');
  const roots = join(dir, 'roots.pem');
  if (!existsSync(roots)) {
    const system = existsSync(SYSTEM_ROOTS) ? readFileSync(SYSTEM_ROOTS, 'utf8') : '';
    writeFileSync(roots, `${system}\n${readFileSync(good.pem, 'utf8')}`);
  }
  return {
    dir, ca: good.pem, roots, rogueCa: rogue.pem,
    server: leaf(dir, good, 'server', names),
    rogue: leaf(dir, rogue, 'rogue-server', rogueNames),
  };
}
