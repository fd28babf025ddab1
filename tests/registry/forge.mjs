// tests/registry/forge.mjs: an attacker's registry token, made apart from
// Corral's signer (node's crypto), for tests/registry/run.sh.
//
//   node forge.mjs KEY KID REPO ACTIONS [MODE]
//
// Signs {iss corral, aud corral-registry, access REPO ACTIONS (comma
// separated)} with KEY (a PEM file) under header kid KID. MODE:
//   es256 (default)  an ES256 token, as Corral's would be
//   jwk              the signing key's own public JWK in the header, no kid
//   none             alg "none", no signature
// With Corral's key and its kid the token is good (run.sh checks that, so a
// refusal of a forged one is the registry's, not a bug here).
import { createPrivateKey, createPublicKey, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [keyPath, kid, repo, actions, mode = 'es256'] = process.argv.slice(2);
if (!keyPath || !kid || !repo || !actions) {
    console.error('usage: node forge.mjs KEY KID REPO ACTIONS [es256|jwk|none]');
    process.exit(2);
}
const key = createPrivateKey(readFileSync(keyPath));
const b64url = (x) => Buffer.from(x).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const header = { typ: 'JWT', alg: mode === 'none' ? 'none' : 'ES256' };
if (mode === 'jwk') header.jwk = createPublicKey(key).export({ format: 'jwk' });
else header.kid = kid;
const claims = {
    iss: 'corral', sub: 'attacker', aud: 'corral-registry', exp: now + 300, nbf: now, iat: now,
    jti: randomBytes(16).toString('hex'),
    access: [{ type: 'repository', name: repo, actions: actions.split(',') }],
};
const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
const sig = mode === 'none' ? '' : b64url(sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }));
process.stdout.write(`${input}.${sig}\n`);
