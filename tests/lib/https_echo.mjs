// An HTTPS server for egress tests, run inside a stand-in's network namespace
// (tests/lib/standins.mjs): appends what each request brought ({method, url,
// headers, body}) to a log file the test reads, so it can tell what arrived
// and that nothing did, and answers with the header names only: a value
// injected on the way must not come back into the sandbox through the test.
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
    res.end(JSON.stringify({ method: req.method, url: req.url, names: Object.keys(req.headers) }));
  });
});
server.keepAliveTimeout = 5000;
server.listen(Number(port), addr, () => process.stdout.write('listening\n'));
