# tests/security/machine_service.py PORT MARKER LOG: a service of the
# person's machine, as a dev server is: HTTP on 0.0.0.0:PORT, answering every
# GET with {"marker": MARKER, "peer": the address it sees the caller at}, and
# appending a line to LOG for every connection it accepts and every request
# it answers ("connection ADDRESS", "request ADDRESS": a kept connection
# carries requests without a new connection). An agent
# sandbox's app (started through envd on an exposed port) and a service the
# person runs that is not exposed are both this.
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, MARKER, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def note(what, peer):
    with open(LOG, 'a') as f:
        f.write('%s %s\n' % (what, peer))


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def do_GET(self):
        note('request', self.client_address[0])
        body = json.dumps({'marker': MARKER, 'peer': self.client_address[0]}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def verify_request(self, request, client_address):
        note('connection', client_address[0])
        return True


Server(('0.0.0.0', PORT), Handler).serve_forever()
