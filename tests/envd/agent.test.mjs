// envd -agent (decision 0054) run as an ordinary user, as on a person's
// machine: every SDK user name means that user, and commands start without
// any identity switch (setgroups/setresuid would fail for a non-root user).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { TEST_UID, authHeaders, run, startEnvd } from './lib.mjs';

let envd;
before(async () => {
  envd = await startEnvd({ token: 'agent-token-0123456789abcdef', uid: TEST_UID, extraArgs: ['-agent'] });
});
after(async () => { await envd?.stop(); });

test('agent mode as a non-root user: commands run as that user, whatever user the SDK names', async () => {
  for (const user of ['user', 'root']) {
    const r = await run(envd, 'id -u; pwd', { user, cwd: envd.home });
    assert.equal(r.end?.exitCode ?? r.end?.exit_code ?? 0, 0, `as ${user}: ${JSON.stringify(r.end)} ${r.stderr}`);
    assert.equal(r.stdout.split('\n')[0], String(TEST_UID), `as ${user}`);
    assert.equal(r.stdout.split('\n')[1], envd.home);
  }
});

test('agent mode as a non-root user: an upload is that user\'s file', async () => {
  const target = path.join(envd.home, 'up.txt');
  const res = await fetch(`${envd.base}/files?path=${encodeURIComponent(target)}`, {
    method: 'POST', headers: { ...authHeaders({ token: envd.token }), 'Content-Type': 'application/octet-stream' },
    body: 'hello',
  });
  assert.equal(res.status, 200, await res.text());
  assert.equal(fs.statSync(target).uid, TEST_UID);
  assert.equal(fs.readFileSync(target, 'utf8'), 'hello');
});
