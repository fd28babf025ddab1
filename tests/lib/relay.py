# tests/lib/relay.py NETNS PORT...: the platform's public ports as a
# person's machine or a worker behind NAT reaches them
# (tests/security/machine.sh, tests/tunnel/natworker.sh). Listens on
# 127.0.0.1:PORT inside the network namespace NETNS (/run/netns/NAME) and
# relays each connection, bytes as they are, to 127.0.0.1:PORT of this
# host's namespace, where nginx listens: TLS stays end to end, so the
# machine's clients check nginx's own certificate. The listening sockets are
# made inside NETNS, then the process goes back to its own namespace (a
# socket keeps the namespace it was made in), before any thread starts.
import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(client, port):
    try:
        upstream = socket.create_connection(('127.0.0.1', port))
    except OSError:
        client.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def serve(listener, port):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=relay, args=(client, port), daemon=True).start()


home = os.open('/proc/self/ns/net', os.O_RDONLY)
target = os.open(sys.argv[1], os.O_RDONLY)
ports = [int(p) for p in sys.argv[2:]]
setns(target)
listeners = [socket.create_server(('127.0.0.1', p), backlog=512) for p in ports]
setns(home)
for lst, p in zip(listeners, ports):
    threading.Thread(target=serve, args=(lst, p), daemon=True).start()
threading.Event().wait()
