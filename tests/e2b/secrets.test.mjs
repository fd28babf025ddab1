// The e2b SDK's Secret class against Corral's /secrets (decision 0090):
// create, update, getInfo, list, exists and destroy through E2B_API_URL with
// E2B_API_KEY (workspace e2b-a's member key), as a user of the SDK calls them.
// A value never comes back, nor through the audit (CORRAL_OWNER_KEY, e2b-a's
// owner); the other workspace's key (CORRAL_OTHER_KEY) sees none of them. The
// worker's resolve route and the workload identity are
// tests/integration/secrets.test.mjs's (they need a test worker).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, SecretNotFoundError } from 'e2b';

if (!process.env.E2B_API_URL || !process.env.E2B_API_KEY || !process.env.CORRAL_OTHER_KEY) {
  throw new Error('run through tests/e2b/run.sh: E2B_API_URL, E2B_API_KEY and CORRAL_OTHER_KEY must be set');
}
const other = { apiKey: process.env.CORRAL_OTHER_KEY };
const tag = Math.random().toString(16).slice(2, 8);
const VALUE = `sdk-value-${tag}-${Date.now()}`;
const made = [];
after(async () => { for (const n of made) await Secret.destroy(n).catch(() => {}); });

async function drain(opts) {
  const out = [];
  const pages = Secret.list(opts);
  while (pages.hasNext) out.push(...await pages.nextItems());
  return out;
}

test('create, getInfo by id and by name, update, exists, destroy', async () => {
  const name = `SDK-Key-${tag}`;
  const s = await Secret.create(name, VALUE, { metadata: { owner: 'tests' } });
  made.push(s.secretId);
  assert.match(s.secretId, /^sec_[0-9a-f]{20}$/);
  assert.equal(s.name, name.toLowerCase());
  assert.equal(s.version, 1);
  assert.deepEqual(s.metadata, { owner: 'tests' });
  assert.ok(s.createdAt instanceof Date && !Number.isNaN(s.createdAt.getTime()));
  assert.equal(JSON.stringify(s).includes(VALUE), false);
  for (const ref of [s.secretId, name.toLowerCase(), name]) {
    const g = await Secret.getInfo(ref);
    assert.equal(g.secretId, s.secretId);
    assert.equal(JSON.stringify(g).includes(VALUE), false);
  }
  const u = await Secret.update(name, `${VALUE}-2`, { metadata: { owner: 'tests', v: '2' } });
  assert.equal(u.version, 2);
  assert.deepEqual(u.metadata, { owner: 'tests', v: '2' });
  assert.ok(u.updatedAt >= u.createdAt);
  assert.equal(await Secret.exists(s.secretId), true);
  await assert.rejects(Secret.create(name.toUpperCase(), 'again'), (e) => !(e instanceof SecretNotFoundError) && /already exists/.test(e.message));
  assert.equal(await Secret.destroy(name), true);
  assert.equal(await Secret.exists(s.secretId), false);
  assert.equal(await Secret.destroy(name), false, 'a second destroy finds nothing');
  await assert.rejects(Secret.getInfo(s.secretId), SecretNotFoundError);
  await assert.rejects(Secret.update(s.secretId, 'x'), SecretNotFoundError);
});

test('list pages through every secret with nextToken', async () => {
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await Secret.create(`page-${tag}-${i}`, `${VALUE}-p${i}`)).secretId);
  made.push(...ids);
  const all = await drain({ limit: 2 });
  assert.deepEqual(all.map((s) => s.secretId).filter((id) => ids.includes(id)), ids);
  assert.equal(JSON.stringify(all).includes(VALUE), false);
});

test("another workspace's key sees none of them, and cannot change them", async () => {
  const s = await Secret.create(`mine-${tag}`, `${VALUE}-mine`);
  made.push(s.secretId);
  assert.equal(await Secret.exists(s.secretId, other), false);
  assert.equal(await Secret.exists(`mine-${tag}`, other), false);
  await assert.rejects(Secret.getInfo(s.secretId, other), SecretNotFoundError);
  await assert.rejects(Secret.update(s.secretId, 'hijack', other), SecretNotFoundError);
  assert.equal(await Secret.destroy(s.secretId, other), false);
  assert.ok(!(await drain(other)).some((x) => x.secretId === s.secretId));
  assert.equal((await Secret.getInfo(s.secretId)).version, 1, 'untouched');
});

test('refused input is an error naming the field, never the value', async () => {
  await assert.rejects(Secret.create(`sec_${tag}`, 'x'), /name: the prefix "sec_" is reserved/);
  await assert.rejects(Secret.create(`empty-${tag}`, ''), /value: /);
  await assert.rejects(Secret.create(`meta-${tag}`, VALUE, { metadata: { k: 'v'.repeat(1025) } }),
    (e) => /metadata: /.test(e.message) && !e.message.includes(VALUE));
});

test('the audit names the secrets and versions, never a value', { skip: !process.env.CORRAL_OWNER_KEY }, async () => {
  const r = await fetch(`${process.env.E2B_API_URL}/v1/audit?limit=1000`, { headers: { 'X-API-Key': process.env.CORRAL_OWNER_KEY } });
  const raw = await r.text();
  assert.equal(r.status, 200, raw);
  assert.equal(raw.includes(VALUE), false);
  const events = JSON.parse(raw).events.filter((e) => e.event.startsWith('secret_'));
  assert.ok(events.some((e) => e.event === 'secret_update' && JSON.parse(e.reason).version === 2));
  assert.ok(events.some((e) => e.event === 'secret_delete' && JSON.parse(e.reason).secret === `sdk-key-${tag}`));
});
