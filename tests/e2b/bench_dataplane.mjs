// Data-plane benchmarks with the real e2b SDK: the same calls through the
// gateway (nginx + ngx_http_corral_module + workerd's data port) and straight
// to envd at the container's address, in the same run.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { Sandbox } from './sdk.mjs';

const N = Number(process.env.BENCH_RUNS || 200);
const TRANSFERS = Number(process.env.BENCH_TRANSFERS || 3);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function timeRuns(sbx) {
  const t = [];
  for (let i = 0; i < 10; i++) await sbx.commands.run('true');
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    await sbx.commands.run('true');
    t.push(performance.now() - s);
  }
  return t;
}

async function transfer(sbx, data) {
  let s = performance.now();
  await sbx.files.write('/tmp/bench.bin', data);
  const up = data.length / 1e6 / ((performance.now() - s) / 1000);
  s = performance.now();
  const back = await sbx.files.read('/tmp/bench.bin', { format: 'bytes' });
  const down = back.length / 1e6 / ((performance.now() - s) / 1000);
  return { up, down };
}

const sbx = await Sandbox.create('base', { timeoutMs: 600_000 });
try {
  const name = `corral-${sbx.sandboxId}-`;
  const ip = execFileSync('sh', ['-c', `curl -s --unix-socket /var/run/docker.sock "http://d/containers/json" | node -e '
    const cs = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const c = cs.find((c) => c.Names.some((n) => n.startsWith("/${name}")));
    console.log(Object.values(c.NetworkSettings.Networks)[0].IPAddress)'`], { encoding: 'utf8' }).trim();
  const direct = await Sandbox.connect(sbx.sandboxId, { sandboxUrl: `http://${ip}:49983` });

  const gw = await timeRuns(sbx);
  const dr = await timeRuns(direct);
  console.log(`commands.run("true"), ${N} runs (ms):`);
  console.log(`  gateway  p50 ${pct(gw, 0.5).toFixed(2)}  p99 ${pct(gw, 0.99).toFixed(2)}`);
  console.log(`  direct   p50 ${pct(dr, 0.5).toFixed(2)}  p99 ${pct(dr, 0.99).toFixed(2)}`);
  console.log(`  ratio p50 ${(pct(gw, 0.5) / pct(dr, 0.5)).toFixed(2)}  p99 ${(pct(gw, 0.99) / pct(dr, 0.99)).toFixed(2)}  (goal < 1.15)`);

  // Medians of TRANSFERS runs, gateway and direct taken in turns: on a shared
  // 2-core machine one 100 MB transfer swings by half from run to run.
  const data = randomBytes(100 * 1024 * 1024);
  const runs = { g: [], d: [] };
  for (let i = 0; i < TRANSFERS; i++) {
    runs.g.push(await transfer(sbx, data));
    runs.d.push(await transfer(direct, data));
  }
  const median = (rs) => ({ up: pct(rs.map((r) => r.up), 0.5), down: pct(rs.map((r) => r.down), 0.5) });
  const g = median(runs.g);
  const d = median(runs.d);
  console.log(`100 MB file with the SDK (MB/s, median of ${TRANSFERS}):`);
  console.log(`  gateway  write ${g.up.toFixed(0)}  read ${g.down.toFixed(0)}`);
  console.log(`  direct   write ${d.up.toFixed(0)}  read ${d.down.toFixed(0)}`);
  console.log(`  ratio write ${(g.up / d.up).toFixed(2)}  read ${(g.down / d.down).toFixed(2)}  (goal > 0.8 both ways)`);

  // The same 100 MB with curl (HTTP/1.1, one stream), to separate the
  // gateway's cost from the Node client's.
  const file = '/tmp/corral-bench-100m.bin';
  execFileSync('sh', ['-c', `head -c 104857600 /dev/urandom > ${file}`]);
  const auth = ['-H', `Authorization: Basic ${Buffer.from('user:').toString('base64')}`,
    '-H', `X-Access-Token: ${sbx.envdAccessToken}`];
  const gwArgs = ['--cacert', process.env.NODE_EXTRA_CA_CERTS, '-H', `E2b-Sandbox-Id: ${sbx.sandboxId}`,
    '-H', 'E2b-Sandbox-Port: 49983', ...auth];
  const curl = (base, extra, method) => Number(execFileSync('curl', ['-s', '--http1.1', '-o', '/dev/null',
    '-w', method === 'POST' ? '%{speed_upload}' : '%{speed_download}', ...extra,
    ...(method === 'POST' ? ['-X', 'POST', '-H', 'Content-Type: application/octet-stream', '--data-binary', `@${file}`] : []),
    `${base}/files?path=/tmp/curl.bin`], { encoding: 'utf8' })) / 1e6;
  const gwBase = process.env.E2B_SANDBOX_URL;
  const curls = { g: [], d: [] };
  for (let i = 0; i < TRANSFERS; i++) {
    curls.g.push({ up: curl(gwBase, gwArgs, 'POST'), down: curl(gwBase, gwArgs, 'GET') });
    curls.d.push({ up: curl(`http://${ip}:49983`, auth, 'POST'), down: curl(`http://${ip}:49983`, auth, 'GET') });
  }
  const cg = median(curls.g);
  const cd = median(curls.d);
  console.log(`100 MB file with curl over HTTP/1.1 (MB/s, median of ${TRANSFERS}):`);
  console.log(`  gateway  write ${cg.up.toFixed(0)}  read ${cg.down.toFixed(0)}`);
  console.log(`  direct   write ${cd.up.toFixed(0)}  read ${cd.down.toFixed(0)}`);
  console.log(`  ratio write ${(cg.up / cd.up).toFixed(2)}  read ${(cg.down / cd.down).toFixed(2)}  (goal >= 500 MB/s through the gateway)`);
} finally {
  await sbx.kill();
}
