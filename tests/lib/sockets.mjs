// What a process has been sent and has not read yet: the receive queues of
// the established TCP sockets of this network namespace, as the kernel lists
// them (/proc/net/tcp and tcp6). A test that freezes a process (SIGSTOP) waits
// on this for what must reach it while it is frozen, rather than sleeping:
// the bytes are there once the kernel has them. Linux, little-endian hosts.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const ESTABLISHED = '01', LISTEN = '0A';

// An address as /proc/net/tcp* writes it ("0100007F:1F90": the IP as 32-bit
// words in host order, the port in hex), as "127.0.0.1:8080" or, for IPv6,
// "[0000:...:0001]:8080" (eight groups, none left out).
function address(hex) {
  const [ip, port] = hex.split(':');
  const bytes = ip.match(/.{8}/g).flatMap((word) => word.match(/../g).reverse());
  if (bytes.length === 4) return `${bytes.map((b) => parseInt(b, 16)).join('.')}:${parseInt(port, 16)}`;
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(`${bytes[i]}${bytes[i + 1]}`.toLowerCase());
  return `[${groups.join(':')}]:${parseInt(port, 16)}`;
}

// The established TCP sockets: {local, remote, unread (bytes), inode}.
export function tcpSockets() {
  const out = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== ESTABLISHED) continue;
      out.push({ local: address(f[1]), remote: address(f[2]), unread: parseInt(f[4].split(':')[1], 16), inode: f[9] });
    }
  }
  return out;
}

// The bytes waiting, unread, in the sockets pick(socket) chooses.
export const unread = (pick) => tcpSockets().filter(pick).reduce((n, s) => n + s.unread, 0);

// The inodes of the sockets process pid holds: read once it is frozen, they
// stay its own (for a pick of {inode}).
export function socketsOf(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed since the listing */ }
  }
  return inodes;
}

// The TCP sockets in LISTEN state that process pid holds, in its own network
// namespace (/proc/PID/net/tcp*: a process behind NAT has its own), as
// "addr:port".
export function listeningTcp(pid) {
  const inodes = socketsOf(pid), out = [];
  for (const file of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 10 && f[3] === LISTEN && inodes.has(f[9])) out.push(address(f[1]));
    }
  }
  return out;
}
