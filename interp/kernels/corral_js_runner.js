// Corral's JavaScript runner (decision 0088), driven by corral_js_kernel.py
// over its stdin and stdout, one JSON object a line: {code, ts} in; out,
// as they happen, {type: "stdout"|"stderr", text}, then {type: "result",
// text} for a cell's value (undefined gives none) or {type: "error", name,
// value, traceback}, then {type: "done"}. Every cell runs in one vm
// context, so a context keeps its variables; a promise a cell gives is
// awaited; SIGINT interrupts a cell that loops (breakOnSigint) and never
// ends the runner. TypeScript is transpiled first with Debian's
// node-typescript.
'use strict';
const vm = require('node:vm');
const util = require('node:util');
const readline = require('node:readline');

const send = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const show = (args) => args.map((a) => (typeof a === 'string' ? a : util.inspect(a))).join(' ') + '\n';
const sandbox = {
  console: {
    log: (...a) => send({ type: 'stdout', text: show(a) }),
    info: (...a) => send({ type: 'stdout', text: show(a) }),
    warn: (...a) => send({ type: 'stderr', text: show(a) }),
    error: (...a) => send({ type: 'stderr', text: show(a) }),
  },
  require, process, Buffer, setTimeout, clearTimeout, setInterval, clearInterval, URL, fetch,
};
sandbox.globalThis = sandbox;
const context = vm.createContext(sandbox);
let ts = null;

// Debian's node-typescript, where Debian's node finds it, or by its path
// (a node from elsewhere does not look in /usr/share/nodejs).
function typescript() {
  try { return require('typescript'); } catch { return require('/usr/share/nodejs/typescript'); }
}

function transpile(code) {
  if (!ts) ts = typescript();
  return ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.None } }).outputText;
}

async function run({ code, ts: isTs }) {
  try {
    const source = isTs ? transpile(code) : code;
    let value = vm.runInContext(source, context, { breakOnSigint: true, filename: 'cell' });
    if (value && typeof value.then === 'function') value = await value;
    if (value !== undefined) send({ type: 'result', text: util.inspect(value) });
  } catch (e) {
    // An error of the cell's realm is no instance of this one's Error.
    const err = e && typeof e === 'object' && 'message' in e ? e : { name: 'Error', message: String(e) };
    const name = String(err.name || 'Error');
    send({ type: 'error', name, value: String(err.message), traceback: String(err.stack || `${name}: ${err.message}`) });
  }
  send({ type: 'done' });
}

process.on('SIGINT', () => {}); // between cells: nothing to interrupt, nothing to end
let queue = Promise.resolve();
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(() => run(JSON.parse(line)));
});
