# tests/security/probe.py: runs inside a sandbox, as root, and tries to reach
# every target it is given at once: python3 probe.py TARGETS.json.
# TARGETS.json: [[host, port], ...]. Prints {"host:port": result} where result
# is "open" (a connection was made: the wall let it through), "reset" (the
# target's kernel answered: a packet crossed the wall), or the error that
# ended the attempt ("timeout", "unreachable", ...: walled).
import errno
import json
import socket
import sys
import threading

TIMEOUT = 1.5
results = {}


def attempt(host, port):
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    try:
        s.connect((host, port))
        out = 'open'
    except socket.timeout:
        out = 'timeout'
    except ConnectionRefusedError:
        out = 'reset'
    except OSError as e:
        out = errno.errorcode.get(e.errno, 'error').lower()
    finally:
        s.close()
    results['%s:%d' % (host, port)] = out


with open(sys.argv[1]) as f:
    targets = json.load(f)
threads = [threading.Thread(target=attempt, args=(h, p)) for h, p in targets]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(results))
