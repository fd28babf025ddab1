// A SOCKS5 server (RFC 1928, username/password RFC 1929) for egress tests,
// run inside a stand-in's network namespace: it logs each request
// ({user, atyp, host, port}) to a file and connects names through its own map
// (the namespace resolves nothing).
//   node socks5_server.mjs ADDR PORT USER PASS LOG '{"name":"ip"}'
import { createServer, connect } from 'node:net';
import { appendFileSync } from 'node:fs';

const [addr, port, user, pass, log, mapText] = process.argv.slice(2);
const names = JSON.parse(mapText || '{}');
const ATYP = { 1: 'ipv4', 3: 'domain', 4: 'ipv6' };

function reader(sock) {
  let buf = Buffer.alloc(0), want = 0, resolve = null;
  const pump = () => {
    if (resolve && buf.length >= want) {
      const out = buf.subarray(0, want);
      buf = buf.subarray(want);
      const r = resolve;
      resolve = null;
      r(out);
    }
  };
  sock.on('data', (d) => { buf = Buffer.concat([buf, d]); pump(); });
  const read = (n) => new Promise((r) => { want = n; resolve = r; pump(); });
  read.rest = () => { const b = buf; buf = Buffer.alloc(0); return b; };
  return read;
}

async function serve(sock) {
  sock.on('error', () => {});
  const read = reader(sock);
  const [ver, nm] = await read(2);
  const methods = [...(await read(nm))];
  if (ver !== 5 || !methods.includes(2)) { sock.end(Buffer.from([5, 0xff])); return; }
  sock.write(Buffer.from([5, 2]));
  const [, ul] = await read(2);
  const u = (await read(ul)).toString();
  const [pl] = await read(1);
  const p = (await read(pl)).toString();
  const ok = u === user && p === pass;
  sock.write(Buffer.from([1, ok ? 0 : 1]));
  if (!ok) { appendFileSync(log, `${JSON.stringify({ user: u, auth: 'refused' })}\n`); sock.end(); return; }
  const [, cmd, , atyp] = await read(4);
  let host;
  if (atyp === 1) host = [...(await read(4))].join('.');
  else if (atyp === 3) { const [n] = await read(1); host = (await read(n)).toString(); }
  else host = (await read(16)).toString('hex');
  const dport = (await read(2)).readUInt16BE(0);
  appendFileSync(log, `${JSON.stringify({ user: u, cmd, atyp: ATYP[atyp], host, port: dport })}\n`);
  const up = connect(dport, names[host] || host, () => {
    sock.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
    const rest = read.rest();
    if (rest.length) up.write(rest);
    sock.removeAllListeners('data');
    sock.pipe(up).pipe(sock);
  });
  up.on('error', () => { sock.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])); });
}

createServer((s) => { serve(s).catch(() => s.destroy()); })
  .listen(Number(port), addr, () => process.stdout.write('listening\n'));
