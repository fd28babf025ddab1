// E2B compatibility, round two (issue 9): the spec's connect path SDK 2.45
// calls, the filters and order of GET /v2/sandboxes with a cursor that holds
// under them, the template alias route, and a 501 naming every route of E2B's
// spec/openapi.yml that Corral does not serve (driven from handlers/e2b_routes.c,
// the table the router answers from).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, assertError, corralctl, newWorkspace, sleep } from '../lib/corral.mjs';
import { TestWorker } from '../lib/test_worker.mjs';

const A = newWorkspace();
const B = newWorkspace();
let w;
before(async () => {
  w = new TestWorker(corralctl('join-token', 'create', '--workspace', A.id).token, { slots: 60, templates: ['base', 'py'] });
  await w.handshake();
  w.start();
});
after(async () => w.stop());

const e2b = (m, p, body, key = A.member) => api(m, p, { body, headers: { 'X-API-KEY': key } });
async function create(body) {
  const r = await e2b('POST', '/v2/sandboxes', { templateID: 'base', ...body });
  assert.equal(r.status, 201, r.raw);
  return r.body.sandboxID;
}
const ids = (r) => r.body.map((s) => s.sandboxID);

test('POST /sandboxes/{id}/connect (SDK 2.45) answers as the /v2 route does', async () => {
  const id = await create({ timeout: 30 });
  for (const path of [`/sandboxes/${id}/connect`, `/v2/sandboxes/${id}/connect`]) {
    const r = await e2b('POST', path, { timeout: 600 });
    assert.equal(r.status, 200, r.raw);
    assert.equal(r.body.sandboxID, id);
    assert.equal(r.body.envdVersion, '0.6.4');
    assert.equal(typeof r.body.envdAccessToken, 'string', 'a secure sandbox gets its envd token back');
  }
  const endAt = Date.parse((await e2b('GET', `/sandboxes/${id}`)).body.endAt);
  assert.ok(endAt > Date.now() + 500e3, 'connect extended the life to about 600 s');
  assert.equal((await e2b('POST', `/sandboxes/${id}/connect`, { timeout: 5 })).status, 200);
  assert.equal(Date.parse((await e2b('GET', `/sandboxes/${id}`)).body.endAt), endAt, 'connect never shortens');
  assertError(await e2b('POST', `/sandboxes/${id}/connect`, { timeout: -1 }), 400, /^timeout/);
  assertError(await e2b('POST', `/sandboxes/${id}/connect`, { timeout: 5 }, B.member), 404, /sandbox not found/);
  assert.equal((await e2b('DELETE', `/sandboxes/${id}`)).status, 204);
  assertError(await e2b('POST', `/sandboxes/${id}/connect`, { timeout: 5 }), 404, /sandbox not found/);
  assertError(await e2b('POST', '/sandboxes/00000000000000000000/connect', { timeout: 5 }), 404, /sandbox not found/);
});

test('GET /templates/aliases/{alias}: a template a worker offers is 200 in the spec\'s shape; unknown is 404', async () => {
  const r = await e2b('GET', '/templates/aliases/base');
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(r.body, { templateID: 'base', public: true });
  assert.equal((await e2b('GET', '/templates/aliases/py')).body.templateID, 'py');
  assertError(await e2b('GET', '/templates/aliases/no-such-template'), 404, /template alias not found/);
  assertError(await api('GET', '/templates/aliases/base'), 401);
});

// Four sandboxes under one tag, a few ms apart; base, py, base, py.
let tag, made;
async function tagged() {
  if (made) return made;
  tag = `r2${Date.now()}`;
  made = [];
  for (let i = 0; i < 4; i++) {
    made.push(await create({ templateID: i % 2 ? 'py' : 'base', metadata: { tag } }));
    // sleep: the clock moves on: each sandbox starts at an instant of its own (ms).
    await sleep(5);
  }
  return made;
}
const q = () => `metadata=${encodeURIComponent(`tag=${tag}`)}`;
const startedAt = (r) => r.body.map((s) => Date.parse(s.startedAt));

test('GET /v2/sandboxes: order desc by default (newest first), asc reverses it exactly', async () => {
  const all = await tagged();
  const desc = await e2b('GET', `/v2/sandboxes?${q()}`);
  const asc = await e2b('GET', `/v2/sandboxes?${q()}&order=asc`);
  assert.equal(desc.status, 200, desc.raw);
  assert.deepEqual(new Set(ids(desc)), new Set(all));
  assert.deepEqual(ids(asc), [...ids(desc)].reverse());
  const t = startedAt(asc);
  for (let i = 1; i < t.length; i++) assert.ok(t[i] >= t[i - 1], 'asc is oldest first');
  assert.deepEqual(ids(await e2b('GET', `/v2/sandboxes?${q()}&order=desc`)), ids(desc));
  assertError(await e2b('GET', `/v2/sandboxes?${q()}&order=sideways`), 400, /^order: must be asc or desc/);
});

test('GET /v2/sandboxes: startedAfter is inclusive, takes any RFC 3339 offset, and refuses what is not a date-time', async () => {
  await tagged();
  const asc = await e2b('GET', `/v2/sandboxes?${q()}&order=asc`);
  const third = asc.body[2].startedAt;
  const after = await e2b('GET', `/v2/sandboxes?${q()}&order=asc&startedAfter=${encodeURIComponent(third)}`);
  assert.deepEqual(ids(after), ids(asc).slice(ids(asc).findIndex((_, i) => asc.body[i].startedAt === third)));
  assert.ok(after.body.length >= 1 && after.body.length <= 2);
  // The same instant written two hours east of UTC.
  const d = new Date(Date.parse(third) + 2 * 3600e3).toISOString().replace('Z', '+02:00');
  assert.deepEqual(ids(await e2b('GET', `/v2/sandboxes?${q()}&order=asc&startedAfter=${encodeURIComponent(d)}`)), ids(after));
  const future = new Date(Date.now() + 3600e3).toISOString();
  assert.deepEqual((await e2b('GET', `/v2/sandboxes?${q()}&startedAfter=${future}`)).body, []);
  for (const bad of ['yesterday', '2024-13-01T00:00:00Z', '2024-05-01T10:00:00', '2024-05-01T10:00:00+2', '1714557600']) {
    assertError(await e2b('GET', `/v2/sandboxes?startedAfter=${encodeURIComponent(bad)}`), 400, /^startedAfter/);
  }
});

test('GET /v2/sandboxes: template filters by template ID or alias', async () => {
  const all = await tagged();
  const py = await e2b('GET', `/v2/sandboxes?${q()}&template=py`);
  assert.deepEqual(new Set(ids(py)), new Set([all[1], all[3]]));
  assert.ok(py.body.every((s) => s.templateID === 'py' && s.alias === 'py'));
  assert.deepEqual(new Set(ids(await e2b('GET', `/v2/sandboxes?${q()}&template=base`))), new Set([all[0], all[2]]));
  assert.deepEqual((await e2b('GET', `/v2/sandboxes?${q()}&template=none`)).body, []);
  assertError(await e2b('GET', `/v2/sandboxes?template=${'x'.repeat(200)}`), 400, /^template/);
});

test('GET /v2/sandboxes: state, limit and nextToken are validated by name', async () => {
  await tagged();
  assert.deepEqual((await e2b('GET', `/v2/sandboxes?${q()}&state=paused`)).body, []);
  assert.equal((await e2b('GET', `/v2/sandboxes?${q()}&state=running,paused`)).body.length, 4);
  assertError(await e2b('GET', '/v2/sandboxes?state=sleeping'), 400, /^state/);
  for (const bad of ['0', '101', 'ten', '5x']) assertError(await e2b('GET', `/v2/sandboxes?limit=${bad}`), 400, /^limit/);
  for (const bad of ['2', 'abc', '123-nothex', '123-00000000000000000000x']) {
    assertError(await e2b('GET', `/v2/sandboxes?nextToken=${bad}`), 400, /^nextToken/);
  }
});

test('GET /v2/sandboxes: pages under a filter and an order hold together, even as sandboxes start between pages', async () => {
  const all = await tagged();
  for (const order of ['asc', 'desc']) {
    const seen = [];
    let next = '';
    for (let page = 0; page < 10; page++) {
      const r = await e2b('GET', `/v2/sandboxes?${q()}&template=base&order=${order}&limit=1${next && `&nextToken=${encodeURIComponent(next)}`}`);
      assert.equal(r.status, 200, r.raw);
      seen.push(...ids(r));
      next = r.headers.get('x-next-token');
      if (!next) break;
    }
    assert.deepEqual(seen, order === 'asc' ? [all[0], all[2]] : [all[2], all[0]]);
  }
  // Newest first, two per page; a sandbox that starts between the pages must
  // not push an item of page one onto page two (as an offset would).
  const p1 = await e2b('GET', `/v2/sandboxes?${q()}&limit=2`);
  const extra = await create({ metadata: { tag } });
  const p2 = await e2b('GET', `/v2/sandboxes?${q()}&limit=2&nextToken=${encodeURIComponent(p1.headers.get('x-next-token'))}`);
  const both = [...ids(p1), ...ids(p2)];
  assert.equal(new Set(both).size, both.length, 'no sandbox twice');
  assert.deepEqual(new Set(both), new Set(all));
  assert.ok(!both.includes(extra));
  assert.equal(p2.headers.get('x-next-token'), null, 'the last page has no next token');
  assert.equal(p2.headers.get('x-total-running'), '5');
  made = null;
});

test('deprecated GET /sandboxes still filters by metadata only', async () => {
  const all = await tagged();
  const r = await e2b('GET', `/sandboxes?${q()}&order=bogus&limit=1`);
  assert.equal(r.status, 200, r.raw);
  assert.deepEqual(new Set(ids(r)), new Set(all));
});

// Every row of the router's table of unserved spec routes.
const table = [...readFileSync(new URL('../../handlers/e2b_routes.c', import.meta.url), 'utf8')
  .split('unserved[] = {')[1].split('};')[0]
  .matchAll(/\{"(GET|POST|PUT|PATCH|DELETE)", "(\/[^"]*)"\}/g)].map(([, m, p]) => [m, p]);

test('every unserved route of E2B\'s spec answers 501 naming it, through nginx', async () => {
  assert.ok(table.length >= 20, `the table has ${table.length} rows`);
  for (const prefix of ['/v2/templates', '/teams', '/api-keys', '/access-tokens', '/nodes', '/admin/']) {
    assert.ok(table.some(([, p]) => p.startsWith(prefix)), `${prefix} is in the table`);
  }
  for (const [method, route] of table) {
    const path = route.replace(/\{[^}]+\}/g, 'x1');
    const r = await e2b(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
    assertError(r, 501, new RegExp(`^${method} ${route.replace(/[{}]/g, '\\$&')} is not served by Corral$`));
  }
});

test('unserved routes authenticate first; literal spec routes win over an id; other paths stay 404/405', async () => {
  assertError(await api('GET', '/volumes'), 401);
  // Served now (decision 0047), and still never taken for a sandbox id.
  assertError(await e2b('GET', '/sandboxes/metrics'), 400, /^sandbox_ids: required/);
  // Served now (issue 28), and never taken for POST /templates/{templateID}.
  assertError(await e2b('POST', '/templates/tags', {}), 400, /^target: /);
  assertError(await e2b('POST', '/templates/t1', {}), 501, /^POST \/templates\/\{templateID\} is not served/);
  assertError(await e2b('PUT', '/volumes'), 405, /method PUT not allowed/);
  assertError(await e2b('GET', '/sandboxes/x1/nothing'), 404, /no route/);
  assertError(await e2b('GET', '/volumesx'), 404, /no route/);
});
