// An HTTPS server for egress tests, run inside a stand-in's network namespace
// (tests/lib/standins.mjs): answers every request with JSON of what it got
// ({method, url, headers}) and appends the same line to a log file, so a test
// can tell what arrived and that nothing did.
//   node https_echo.mjs ADDR PORT CERT KEY LOG
import { createServer } from 'node:https';
import { appendFileSync, readFileSync } from 'node:fs';

const [addr, port, cert, key, log] = process.argv.slice(2);
const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const line = JSON.stringify({ method: req.method, url: req.url, headers: req.headers,
      body: Buffer.concat(chunks).toString() });
    appendFileSync(log, `${line}\n`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(line);
  });
});
server.keepAliveTimeout = 5000;
server.listen(Number(port), addr, () => process.stdout.write('listening\n'));
