// The @e2b/code-interpreter packages of this folder's lock file, for the
// files outside it (tests/bench/bench_interp.mjs) that cannot resolve them.
export { Sandbox as CodeInterpreter } from '@e2b/code-interpreter';
