// What a sandbox can reach, tried from inside every kind of sandbox as root
// (issue 25): every other sandbox of both workspaces (envd's port and an app
// port it serves), every egress proxy, every address of the host with every
// port something listens on there (Redis, its sentinels, workerd's data ports,
// nginx, sshd, ...). Prints the whole matrix, then fails on every cell that
// was reached and should not have been. Each sandbox reaching its own app and,
// with a policy, its own proxy is the control: the probe works, the app runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KINDS, APP_PORT, ENVD_PORT, PROXY_PORT, workspace, make, hostFacts, probe, serving, killAll } from './lib.mjs';

let all = [];
const host = hostFacts();

before(async () => {
  const a = workspace('a'), b = workspace('b');
  // Serially: a create's wait is the thing under test elsewhere, not here.
  for (const ws of [a, b]) for (const kind of Object.keys(KINDS)) all.push(await make(kind, ws));
  for (const s of all) await serving(s);
}, { timeout: 600_000 });

after(async () => { await killAll(all); });

const CROSSED = new Set(['open', 'reset']);

// Targets of one source: [host, port, label, allowed].
function targetsOf(src) {
  const t = [[src.ip, APP_PORT, 'itself', true]];
  for (const p of src.proxy) t.push([p, PROXY_PORT, 'its own proxy', true]);
  for (const o of all) {
    if (o === src) continue;
    const who = `${o.kind}/${o.ws.name}`;
    t.push([o.ip, ENVD_PORT, `sandbox ${who} envd`, false], [o.ip, APP_PORT, `sandbox ${who} app`, false]);
    for (const p of o.proxy) t.push([p, PROXY_PORT, `proxy of ${who}`, false]);
  }
  const next = all[(all.indexOf(src) + 1) % all.length];
  const hostAddrs = [...host.addrs, { addr: src.gw, dev: 'its own bridge' }, { addr: next.gw, dev: `bridge of ${next.kind}/${next.ws.name}` }];
  for (const a of hostAddrs) for (const port of host.ports) t.push([a.addr, port, `host ${a.dev}`, false]);
  return t;
}

test('from every kind of sandbox, as root: no other sandbox, no proxy but its own, no port of the host', async () => {
  const rows = [], bad = [];
  for (const src of all) {
    const targets = targetsOf(src);
    const got = await probe(src, targets.map(([h, p]) => [h, p]));
    const row = { from: `${src.kind}/${src.ws.name}`, self: '', sandboxes: '.', proxies: '.', host: '.' };
    for (const [h, p, label, allowed] of targets) {
      const r = got[`${h}:${p}`];
      const crossed = CROSSED.has(r);
      if (allowed) {
        if (r !== 'open') bad.push(`${row.from} -> ${label} ${h}:${p}: ${r} (the control: it must be reached)`);
        row.self += r === 'open' ? 'ok ' : 'FAIL ';
        continue;
      }
      const col = label.startsWith('sandbox') ? 'sandboxes' : label.startsWith('proxy') ? 'proxies' : 'host';
      if (crossed) {
        row[col] = 'REACHED';
        bad.push(`${row.from} -> ${label} ${h}:${p}: ${r}`);
      }
    }
    rows.push(row);
  }
  console.log(`\nreachability (from x to; '.' = every target walled), ${host.addrs.length} host addresses x ${host.ports.length} ports:`);
  console.table(rows);
  assert.deepEqual(bad, [], `cells reached that must not be:\n${bad.join('\n')}`);
});
