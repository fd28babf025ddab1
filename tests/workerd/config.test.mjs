// workerd refuses to start, naming the cause: bad config, token file missing
// or readable by others, dockerd unreachable, envd missing. The URL, CA and
// join token are the real stack's (tests/workerd/run.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, rmSync, appendFileSync } from 'node:fs';
import { corralctl, newWorkspace } from '../lib/corral.mjs';
import { workerdFiles, runToExit, requireDocker } from './helpers.mjs';

let files;
const url = process.env.CORRAL_URL, ca = process.env.NODE_EXTRA_CA_CERTS;
const joinToken = () => corralctl('join-token', 'create', '--workspace', newWorkspace().id).token;

before(async () => {
  await requireDocker();
  files = workerdFiles({ url, ca, token: joinToken() });
});
after(() => rmSync(files.dir, { recursive: true, force: true }));

test('missing token file is refused', async () => {
  const r = await runToExit(['-c', files.conf, '--join-token-file', '/nonexistent/token']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /refusing to start: join_token_file \/nonexistent\/token: No such file/);
});

test('world-readable token file is refused', async () => {
  chmodSync(files.token, 0o644);
  try {
    const r = await runToExit(['-c', files.conf]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /join_token_file .*readable by group or others/);
    assert.doesNotMatch(r.stderr, /jn_/, 'the token must never be printed');
  } finally {
    chmodSync(files.token, 0o600);
  }
});

test('unreachable dockerd is refused', async () => {
  const r = await runToExit(['-c', files.conf, '--docker-socket=/tmp/corral-no-such.sock']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /refusing to start: dockerd at \/tmp\/corral-no-such.sock does not answer/);
});

test('unknown key is refused with file and line', async () => {
  const f = workerdFiles({ url, ca, token: joinToken() });
  appendFileSync(f.conf, 'slotz = 4\n');
  const r = await runToExit(['-c', f.conf]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /workerd\.conf:\d+: slotz: unknown key/);
  rmSync(f.dir, { recursive: true });
});

test('bad values are refused naming the key', async () => {
  let r = await runToExit(['-c', files.conf, '--slots', 'many']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--slots: expected an integer/);
  r = await runToExit(['-c', files.conf, '--template.base.cmd', '["sleep", "infinity"]']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /template.base.cmd: no longer supported: every sandbox runs envd as its entrypoint/);
  r = await runToExit(['-c', files.conf, '--control-url', 'http://127.0.0.1:1']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /control_url: must start with https/);
});

test('missing config file is refused', async () => {
  const r = await runToExit(['-c', '/nonexistent/workerd.conf']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /\/nonexistent\/workerd.conf: No such file/);
});

test('a token file that holds no join token is refused', async () => {
  const f = workerdFiles({ url, ca, token: 'ck_abc_def_0123456789abcdef0123456789abcdef' });
  const r = await runToExit(['-c', f.conf]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /does not hold a join token/);
  rmSync(f.dir, { recursive: true });
});

test('a missing or unusable envd binary is refused, naming envd_bin', async () => {
  let r = await runToExit(['-c', files.conf, '--envd-bin', '/nonexistent/envd']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /refusing to start: envd_bin \/nonexistent\/envd: No such file .*make build\/bin\/envd/);
  r = await runToExit(['-c', files.conf, '--envd-bin', 'envd']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /envd_bin envd: must be an absolute path/);
  r = await runToExit(['-c', files.conf, '--envd-bin', files.conf]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /envd_bin .*workerd.conf: not an executable file/);
});
