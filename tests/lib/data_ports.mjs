// Test workers' data ports: those the suite's stack lists exactly for the
// gateway (tests/lib/ports.sh listed_data_ports, conf/stack.sh
// CORRAL_WORKER_ADDRS_EXTRA; decision 0061). Any other port is refused at the
// handshake, as a real worker's would be. Handed out in turn: a suite holds
// fewer workers at once than it has ports. Each test file (a process) starts
// at its own place, so that a worker of the file before, still exiting, does
// not hold the first port the next one wants.
const ports = (process.env.CORRAL_TEST_DATA_PORTS || '').split(/\s+/).filter(Boolean).map(Number);
let next = process.pid;

export function listedDataPort() {
  if (!ports.length) throw new Error('CORRAL_TEST_DATA_PORTS is not set: run through the suite\'s run.sh');
  return ports[next++ % ports.length];
}
