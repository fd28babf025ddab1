// Open file descriptors and resident memory of the stack's daemons, read from
// /proc (the same figures as `ls /proc/PID/fd | wc -l` and VmRSS in
// /proc/PID/status): workerd, each corral-api, nginx's master and workers (from
// the pid files conf/stack.sh writes under CORRAL_RUN), dockerd, and envd of
// one sandbox (PID 1 of its container, as `docker inspect -f {{.State.Pid}}`
// gives it). Used by tests/soak (fails on growth) and tests/bench
// (bench_sustained.mjs prints it).
import { readdirSync, readFileSync } from 'node:fs';
import { docker, sandboxContainer } from './engine.mjs';
import { sleep } from './poll.mjs';

export function fdCount(pid) {
  return readdirSync(`/proc/${pid}/fd`).length;
}

export function rssKb(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const pidIn = (file) => {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return n > 0 ? n : null;
  } catch { return null; }
};

// The parent pid of pid (field 4 of /proc/PID/stat; the name in field 2 may hold spaces).
function ppidOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
  } catch { return null; }
}

const allPids = () => readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
const childrenOf = (ppid) => allPids().filter((p) => ppidOf(p) === ppid).sort((a, b) => a - b);

function dockerdPid() {
  const p = pidIn('/var/run/docker.pid');
  if (p) return p;
  return allPids().find((q) => {
    try { return readFileSync(`/proc/${q}/comm`, 'utf8').trim() === 'dockerd'; } catch { return false; }
  }) ?? null;
}

// envd of a sandbox: PID 1 of its container, seen from the host.
export async function envdPidOf(sandboxId) {
  const c = await sandboxContainer(sandboxId);
  const pid = (await docker('GET', `/containers/${c.Id}/json`)).body?.State?.Pid;
  if (!pid) throw new Error(`container of sandbox ${sandboxId} has no pid`);
  return pid;
}

// [{name, pid}] of the daemons of the stack in `run` (conf/stack.sh's state dir).
// Names are stable across samples so that start and end can be paired.
export function stackDaemons(run, { envdPid } = {}) {
  const out = [];
  const add = (name, pid) => { if (pid) out.push({ name, pid }); };
  add('workerd', pidIn(`${run}/pids/workerd.pid`));
  for (let i = 1; pidIn(`${run}/pids/api-${i}.pid`); i++) add(`corral-api ${i}`, pidIn(`${run}/pids/api-${i}.pid`));
  const master = pidIn(`${run}/nginx.pid`);
  add('nginx master', master);
  if (master) childrenOf(master).forEach((p, i) => add(`nginx worker ${i + 1}`, p));
  add('dockerd', dockerdPid());
  add('envd', envdPid);
  return out;
}

// One reading of each: {name, pid, fds, rssKb}; fds and rssKb are null for a process that is gone.
export function sample(daemons) {
  return daemons.map(({ name, pid }) => {
    try { return { name, pid, fds: fdCount(pid), rssKb: rssKb(pid) }; } catch { return { name, pid, fds: null, rssKb: null }; }
  });
}

// Samples every `everyMs` until two readings in a row show the same fd counts
// (connections that were closing have closed), for at most maxMs; the last reading.
export async function settledSample(daemons, { maxMs = 15000, everyMs = 1000 } = {}) {
  let prev = sample(daemons);
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    // sleep: two readings everyMs apart are what "settled" compares (bounded by maxMs).
    await sleep(everyMs);
    const cur = sample(daemons);
    if (cur.every((c, i) => c.fds === prev[i]?.fds)) return cur;
    prev = cur;
  }
  return prev;
}

// What grew past the allowance between two readings, as sentences. allow:
// {fds, rssKb} for every process, or per name: allow.byName[name] = {fds, rssKb}.
// A process that is gone or has a new pid (it crashed and was restarted) counts too.
export function growth(start, end, allow) {
  const bad = [];
  for (const s of start) {
    const e = end.find((x) => x.name === s.name);
    const a = { fds: allow.fds, rssKb: allow.rssKb, ...(allow.byName?.[s.name] || {}) };
    if (!e || e.fds === null) { bad.push(`${s.name} (pid ${s.pid}) is gone`); continue; }
    if (e.pid !== s.pid) { bad.push(`${s.name} has a new pid (${s.pid} -> ${e.pid}): it exited and was restarted`); continue; }
    if (e.fds - s.fds > a.fds) bad.push(`${s.name}: fds ${s.fds} -> ${e.fds} (+${e.fds - s.fds}, allowed +${a.fds})`);
    if (e.rssKb - s.rssKb > a.rssKb) {
      bad.push(`${s.name}: RSS ${mb(s.rssKb)} -> ${mb(e.rssKb)} MB (+${mb(e.rssKb - s.rssKb)}, allowed +${mb(a.rssKb)})`);
    }
  }
  return bad;
}

const mb = (kb) => (kb === null || Number.isNaN(kb) ? '-' : (kb / 1024).toFixed(1));

// A side-by-side table of two readings (start and end), one row per process.
export function table(start, end, { startLabel = 'start', endLabel = 'end' } = {}) {
  const rows = [['process', 'pid', `fds ${startLabel}`, `fds ${endLabel}`, 'Δ fds', `RSS ${startLabel} MB`, `RSS ${endLabel} MB`, 'Δ RSS MB']];
  for (const s of start) {
    const e = end.find((x) => x.name === s.name) || { pid: '-', fds: null, rssKb: null };
    const dF = s.fds === null || e.fds === null ? '-' : `${e.fds - s.fds >= 0 ? '+' : ''}${e.fds - s.fds}`;
    const dR = s.rssKb === null || e.rssKb === null ? '-' : `${e.rssKb - s.rssKb >= 0 ? '+' : ''}${mb(e.rssKb - s.rssKb)}`;
    rows.push([s.name, e.pid === s.pid ? String(s.pid) : `${s.pid}->${e.pid}`, String(s.fds ?? '-'), String(e.fds ?? '-'), dF,
      mb(s.rssKb), mb(e.rssKb), dR]);
  }
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ')).join('\n');
}
