// A sandbox's metrics and logs through the real SDK and API (decision 0047):
// workerd samples the container's Engine API stats and reads envd's lines
// from its log, and pushes both to the control plane; Sandbox.getMetrics()
// and GET /v2/sandboxes/{id}/logs read them back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../lib/poll.mjs';
import { Sandbox, MODE } from './lib.mjs';

const MB = 2 ** 20;
let sbx;
before(async () => { sbx = await Sandbox.create('base', { timeoutMs: 300_000 }); });
after(async () => { await sbx?.kill(); });

async function api(path) {
  const r = await fetch(process.env.E2B_API_URL + path, { headers: { 'X-API-Key': process.env.E2B_API_KEY } });
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body;
}

test(`[${MODE}] getMetrics(): a busy sandbox shows its CPU, and plausible memory and disk`, async () => {
  const started = Date.now();
  const busy = await sbx.commands.run('timeout 40 sh -c "while :; do :; done"', { background: true });
  // Samples come every metrics_interval_ms (5 s by default), a percentage from
  // two readings: the first busy one within a few intervals.
  const metrics = await until(async () => {
    const m = await sbx.getMetrics();
    return m.some((s) => s.cpuUsedPct > 30 && s.timestamp.getTime() > started + 1000) ? m : null;
  }, { timeoutMs: 35000, everyMs: 1000 });
  await busy.kill().catch(() => {});
  assert.ok(metrics, 'a sample with the busy loop\'s CPU arrived');
  const last = metrics[metrics.length - 1];
  assert.ok(metrics.every((s) => s.cpuUsedPct >= 0 && s.cpuUsedPct <= 100));
  assert.equal(last.cpuCount, 1, 'the sandbox\'s one cpu');
  assert.equal(last.memTotal, 512 * MB, 'its memory limit');
  assert.ok(last.memUsed > 0 && last.memUsed < last.memTotal, `memUsed ${last.memUsed}`);
  assert.ok(last.diskTotal >= 1024 * MB, `its disk limit: ${last.diskTotal}`);
  assert.ok(last.diskUsed >= 0 && last.diskUsed < last.diskTotal, `diskUsed ${last.diskUsed}`);
  assert.ok(Math.abs(last.timestamp.getTime() - Date.now()) < 60000, `a recent sample: ${last.timestamp}`);
  // start and end filter by unix seconds.
  const none = await sbx.getMetrics({ start: new Date(Date.now() + 3600e3), end: new Date(Date.now() + 7200e3) });
  assert.deepEqual(none, []);
});

test(`[${MODE}] logs: envd's start, and each process's start and end, without its arguments`, async () => {
  await sbx.commands.run('echo not-for-the-logs-9f3a');
  await sbx.commands.run('sh -c "exit 3"').catch(() => {});
  const entries = await until(async () => {
    const { logs } = await api(`/v2/sandboxes/${sbx.sandboxId}/logs`);
    return logs.filter((e) => e.message === 'process ended').length >= 2 ? logs : null;
  }, { timeoutMs: 30000, everyMs: 1000 });
  assert.ok(entries, 'the process lines arrived');
  assert.ok(entries.some((e) => e.message === 'envd started' && e.fields.version), 'envd\'s start');
  const startedLines = entries.filter((e) => e.message === 'process started');
  assert.ok(startedLines.length >= 2);
  assert.ok(startedLines.every((e) => e.fields.pid && e.fields.cmd && !e.fields.cmd.includes('/')), JSON.stringify(startedLines));
  assert.ok(entries.some((e) => e.message === 'process ended' && e.level === 'warn' && e.fields.status === 'exit status 3'));
  assert.ok(!JSON.stringify(entries).includes('not-for-the-logs-9f3a'), 'arguments never reach the logs');
  const v1 = await api(`/sandboxes/${sbx.sandboxId}/logs`);
  assert.equal(v1.logs.length, v1.logEntries.length);
  assert.ok(v1.logs.some((l) => l.line.includes('"process started"')));
});
