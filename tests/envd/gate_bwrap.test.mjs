// -os-sandbox bwrap (decision 0053): commands run under bubblewrap, so the
// kernel enforces what the gate decides, even where the gate's look at argv
// sees nothing. The control: a shell reading the key through a variable is
// allowed by the gate (its words name no path) and, without bwrap, prints
// the key; under bwrap the same command finds nothing there. The work tree
// is writable, the rest read-only, hardlocked files inside the work tree and
// the gate's own files hidden. The fixture lives in /var/tmp: bwrap gives
// commands a private /tmp, which would hide a fixture in /tmp for the wrong
// reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ENVD_BIN } from './lib.mjs';
import { gateFixture, startCmd, startGated } from './gate_lib.mjs';

let fx;
before(() => {
  if (!fs.existsSync('/usr/bin/bwrap')) throw new Error('bwrap is not installed (tests/lib/deps.sh installs bubblewrap)');
  fx = gateFixture('/var/tmp');
});
after(() => fx?.cleanup());

const readKey = ['/bin/sh', '-c', 'cat "$K"'];

test('without bwrap, a command the gate cannot see through reads the key (the control)', async () => {
  const envd = await startGated(fx, 'strict', 'sbx-bare');
  try {
    const r = await startCmd(envd, readKey, fx.work, { K: fx.key });
    assert.equal(r.code, null, r.message);
    assert.equal(r.stdout, 'FAKE-PRIVATE-KEY\n');
  } finally {
    await envd.stop();
  }
});

test('under bwrap the kernel hides hardlocked paths and keeps all but the work tree read-only', async () => {
  const envd = await startGated(fx, 'strict', 'sbx-bwrap', ['-os-sandbox', 'bwrap']);
  try {
    let r = await startCmd(envd, readKey, fx.work, { K: fx.key });
    assert.equal(r.code, null, r.message); // the gate allowed it: the kernel said no
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /No such file or directory/);
    assert.equal(r.end.exitCode, 1);

    r = await startCmd(envd, ['/bin/sh', '-c', 'echo made > made.txt'], fx.work);
    assert.equal(r.end.exitCode, undefined, r.stderr);
    assert.equal(fs.readFileSync(path.join(fx.work, 'made.txt'), 'utf8'), 'made\n');

    const ro = path.join(fx.outside, 'ro.txt');
    fs.writeFileSync(ro, 'readable');
    r = await startCmd(envd, ['/bin/sh', '-c', 'cat "$O"; echo changed > "$O"'], fx.work, { O: ro });
    assert.equal(r.stdout, 'readable');
    assert.match(r.stderr, /Read-only file system/);
    assert.equal(fs.readFileSync(ro, 'utf8'), 'readable');

    r = await startCmd(envd, ['/bin/sh', '-c', 'cat "$S"; ls -A "$G"'], fx.work,
      { S: fx.secret, G: fx.gateDir });
    assert.equal(r.stdout, '', 'a hardlocked file in the work tree and the gate dir are empty');
    assert.ok(fs.readFileSync(fx.secret, 'utf8').includes('TOKEN'));
  } finally {
    await envd.stop();
  }
});

test('-os-sandbox without -permission-mode refuses to start', () => {
  const r = spawnSync(ENVD_BIN, ['-port', '1', '-os-sandbox', 'bwrap'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /-os-sandbox needs -permission-mode/);
});
