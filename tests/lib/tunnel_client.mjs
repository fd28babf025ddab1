// A worker's end of a tunnel (decision 0087), played by a test: the upgrade
// by hand over TLS, as workerd sends it, and an echo server for the streams
// the gateway's end opens (node:http2 on the upgraded socket). The tunnel
// tests send hostile frames on the raw socket; the benchmark holds a hundred
// of these at once.
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';

const PORT = () => Number(process.env.CORRAL_PORT);

// GET /v1/worker/tunnel through nginx with headers: {status, head, socket};
// socket.rest holds what came after the head, the socket is paused.
export function upgrade(headers, { port = PORT() } = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: 'localhost', port, ALPNProtocols: ['http/1.1'],
      ca: readFileSync(process.env.NODE_EXTRA_CA_CERTS) }, () => {
      const lines = Object.entries({ Host: `localhost:${port}`, Upgrade: 'corral-tunnel/1', Connection: 'Upgrade', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`GET /v1/worker/tunnel HTTP/1.1\r\n${lines}\r\n`);
    });
    let buf = Buffer.alloc(0);
    const onData = (d) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      socket.setTimeout(0);
      const head = buf.subarray(0, end).toString();
      socket.rest = buf.subarray(end + 4);
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), head, socket });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error('no answer to the upgrade')));
  });
}

// Serves the streams of an upgraded tunnel as workerd would, but each one
// echoes what it is sent. Returns {streams (opened so far), close()}.
export function echoTunnel(socket) {
  const server = http2.createServer();
  const state = { streams: 0 };
  server.on('stream', (stream, headers) => {
    if (headers[':method'] !== 'CONNECT') { stream.close(http2.constants.NGHTTP2_REFUSED_STREAM); return; }
    state.streams++;
    stream.respond({ ':status': 200 });
    stream.pipe(stream);
  });
  server.on('sessionError', () => {});
  if (socket.rest?.length) socket.unshift(socket.rest);
  // HTTP/2 after an upgrade, not by ALPN: node's server would take the TLS
  // socket's "http/1.1" for a client that speaks no HTTP/2 and drop it.
  socket.alpnProtocol = 'h2';
  server.emit('connection', socket);
  socket.resume();
  return { state, close: () => socket.destroy() };
}
