// tests/soak/run.sh's last resort, after the stack is down: removes the
// containers and networks still labelled with any of the worker ids given
// (a test that died before its own clean-up ran). Usage: cleanup.mjs WID...
import { docker } from '../lib/engine.mjs';

for (const wid of process.argv.slice(2)) {
  const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${wid}`] }));
  for (const c of (await docker('GET', `/containers/json?all=1&filters=${f}`)).body || []) {
    await docker('DELETE', `/containers/${c.Id}?force=1`);
    console.log(`soak cleanup: removed container ${c.Names?.[0] || c.Id}`);
  }
  for (const n of (await docker('GET', `/networks?filters=${f}`)).body || []) {
    await docker('DELETE', `/networks/${n.Id}`);
    console.log(`soak cleanup: removed network ${n.Name}`);
  }
}
