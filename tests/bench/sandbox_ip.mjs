// Prints the address of a sandbox's container (for wrk straight to its envd).
import { sandboxIp } from '../lib/engine.mjs';

console.log(await sandboxIp(process.argv[2]));
