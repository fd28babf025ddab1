// A kill empties its container's btrfs subvolumes ahead of dockerd's removal,
// which otherwise walks every file of the image twice (decision 0086), and
// leaves nothing behind: not the container, not a subvolume. A sandbox that
// nests a subvolume of its own (root inside may) is left to dockerd's own
// way, which removes it whole.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { newWorkspace, eventually } from '../lib/corral.mjs';
import { stackWorker, cleanupWorkers, createSb, deleteSb, ctrsOf, envdOf, envdRun, docker, logOf, sandboxLog }
  from './helpers.mjs';

let A, s, root;

before(async () => {
  const info = (await docker('GET', '/info')).body;
  assert.equal(info.Driver, 'btrfs', `dockerd's storage driver is ${info.Driver}: tests/lib/docker.sh starts it on btrfs`);
  root = info.DockerRootDir;
  A = newWorkspace();
  s = await stackWorker(A, { extra: 'cpu_cores = 64\nmemory_mb = 65536\nfast_remove = 1' }); // opt-in (0086)
});
after(cleanupWorkers);

// The two subvolumes dockerd made for container id: its layer and its init layer.
function subvolumesOf(id) {
  const ids = `${root}/image/btrfs/layerdb/mounts/${id}`;
  return ['mount-id', 'init-id'].map((f) => `${root}/btrfs/subvolumes/${readFileSync(`${ids}/${f}`, 'utf8')}`);
}
const subvolumeList = () => execFileSync('btrfs', ['subvolume', 'list', root], { encoding: 'utf8' });

async function sandbox() {
  const r = await createSb(A);
  assert.equal(r.status, 201, r.raw);
  const sbid = r.body.sandbox_id;
  const [ctr] = await ctrsOf(s.id, sbid);
  const paths = subvolumesOf(ctr.Id);
  assert.ok(paths.every((p) => existsSync(p)), `${paths} exist while it runs`);
  return { sbid, paths, envd: await envdOf(s.id, sbid) };
}

async function killed(sbid) {
  const d = await deleteSb(A, sbid);
  assert.equal(d.status, 204, d.raw);
  return eventually(() => /kill: stopped and told .*\(subvolumes of (\d+) container\(s\) dropped first\)/
    .exec(sandboxLog(s, sbid))?.[1], { what: `the kill of ${sbid} logged` });
}

test('workerd says it drops subvolumes ahead of dockerd on this btrfs data root', () => {
  assert.match(logOf(s), /container removal: btrfs subvolumes dropped ahead of dockerd's walk/);
});

test('a killed sandbox\'s subvolumes are dropped ahead of dockerd; nothing of it is left', async () => {
  const { sbid, paths, envd } = await sandbox();
  const w = await envdRun(envd, 'head -c 1048576 /dev/urandom > /home/user/data && echo ok');
  assert.equal(w.stdout.trim(), 'ok');
  assert.equal(await killed(sbid), '1', 'its container was emptied first');
  assert.deepEqual(await ctrsOf(s.id, sbid), [], 'the container is gone');
  assert.ok(paths.every((p) => !existsSync(p)), `${paths} are gone`);
  const list = subvolumeList();
  for (const p of paths) assert.ok(!list.includes(p.split('/').at(-1)), `${p} is still a subvolume`);
});

test('a sandbox that nests a subvolume of its own is removed whole, dockerd\'s way', async () => {
  const { sbid, paths, envd } = await sandbox();
  // BTRFS_IOC_SUBVOL_CREATE needs no privilege on a directory one may write.
  const nest = `python3 -c "import fcntl, os, struct
fd = os.open('/tmp', os.O_RDONLY)
fcntl.ioctl(fd, 0x5000940E, bytearray(struct.pack('q4088s', 0, b'nested')))
print(os.stat('/tmp/nested').st_ino)" && echo kept > /tmp/nested/file`;
  const r = await envdRun(envd, nest, { user: 'root' });
  assert.equal(r.stdout.trim(), '256', `a subvolume root: ${r.stdout} ${r.stderr}`);
  assert.equal(await killed(sbid), '0', 'a destroy refused (not empty): left to dockerd');
  assert.deepEqual(await ctrsOf(s.id, sbid), [], 'the container is gone');
  assert.ok(paths.every((p) => !existsSync(p)), `${paths} are gone`);
  const list = subvolumeList();
  for (const p of paths) assert.ok(!list.includes(p.split('/').at(-1)), `${p} or what it nested is still a subvolume`);
});
