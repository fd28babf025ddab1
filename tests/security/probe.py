# tests/security/probe.py: runs inside a sandbox, as root where it can be,
# and tries to reach every target it is given at once: python3 probe.py
# TARGETS.json.
#
# TARGETS.json: [[host, port], ...]. Prints {"host:port": result} where result
# is "open" (a connection was made: the wall let it through), "reset" (the
# target's kernel answered: a packet crossed the wall), or the error that
# ended the attempt ("timeout", "unreachable", ...: walled).
#
# Or {"tcp": [[host, port], ...], "http": [[key, url, method, {headers}, body,
# cafile], ...], "files": [path, ...], "unix": [path, ...]} (an agent-mode
# session, where what is on its machine is reached by design and the wall is
# what each service asks: decision 0062). Prints {"tcp": {"host:port": ...},
# "http": {key: status, or the error}, "files": {path: "read" or the error},
# "unix": {path: "open" or the error}}.
import errno
import http.client
import json
import socket
import ssl
import sys
import threading
from urllib.parse import urlsplit

TIMEOUT = 1.5
results = {'tcp': {}, 'http': {}, 'files': {}, 'unix': {}}


def error_name(e):
    if isinstance(e, socket.timeout):
        return 'timeout'
    if isinstance(e, ConnectionRefusedError):
        return 'reset'
    return errno.errorcode.get(getattr(e, 'errno', None) or 0, type(e).__name__).lower()


def attempt(host, port):
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    try:
        s.connect((host, port))
        out = 'open'
    except OSError as e:
        out = error_name(e)
    finally:
        s.close()
    results['tcp']['%s:%d' % (host, port)] = out


def request(key, url, method, headers, body, cafile):
    u = urlsplit(url)
    try:
        if u.scheme == 'https':
            ctx = ssl.create_default_context(cafile=cafile)
            c = http.client.HTTPSConnection(u.hostname, u.port, timeout=5, context=ctx)
        else:
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
        c.request(method, u.path or '/', body=body, headers=headers)
        r = c.getresponse()
        results['http'][key] = {'status': r.status, 'body': r.read(300).decode('utf-8', 'replace')}
        c.close()
    except (OSError, http.client.HTTPException) as e:
        results['http'][key] = {'status': error_name(e), 'body': ''}


def read(path):
    try:
        with open(path, 'rb') as f:
            f.read(1)
        results['files'][path] = 'read'
    except OSError as e:
        results['files'][path] = error_name(e)


def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    try:
        s.connect(path)
        results['unix'][path] = 'open'
    except OSError as e:
        results['unix'][path] = error_name(e)
    finally:
        s.close()


with open(sys.argv[1]) as f:
    targets = json.load(f)
plain = isinstance(targets, list)
if plain:
    targets = {'tcp': targets}
jobs = [(attempt, tuple(t)) for t in targets.get('tcp', [])]
jobs += [(request, tuple(t)) for t in targets.get('http', [])]
jobs += [(read, (p,)) for p in targets.get('files', [])]
jobs += [(unix, (p,)) for p in targets.get('unix', [])]
threads = [threading.Thread(target=fn, args=args) for fn, args in jobs]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(results['tcp'] if plain else results))
