"""Corral's JavaScript and TypeScript kernel (decision 0088): a Jupyter
kernel on ipykernel's Kernel base class over one persistent node process
(corral_js_runner.js beside this file), so that a js or ts context keeps
its variables between calls. "--ts" makes it TypeScript. node is in the
kernel's process group, with SIGINT's default (its runner interrupts a
looping cell on it), and dies with the kernel.
"""
import ctypes
import json
import os
import select
import signal
import subprocess
import sys

from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel

PR_SET_PDEATHSIG = 1
RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corral_js_runner.js")
TS = "--ts" in sys.argv
if TS:
    sys.argv.remove("--ts")


def in_child():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class JsKernel(Kernel):
    implementation = "corral-ts" if TS else "corral-js"
    implementation_version = "1"
    banner = ("TypeScript" if TS else "JavaScript") + ", by Corral"
    language_info = {"name": "typescript" if TS else "javascript",
                     "mimetype": "text/typescript" if TS else "text/javascript",
                     "file_extension": ".ts" if TS else ".js"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.node = None
        self.start_node()

    def start_node(self):
        self.node = subprocess.Popen(["node", RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     preexec_fn=in_child)
        self.buf = b""

    def next_line(self):
        """The runner's next message, or None once it is gone."""
        while b"\n" not in self.buf:
            try:
                ready, _, _ = select.select([self.node.stdout], [], [], 1.0)
            except KeyboardInterrupt:
                continue  # the group's SIGINT reached the runner too
            if not ready:
                if self.node.poll() is not None:
                    return None
                continue
            chunk = os.read(self.node.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def do_execute(self, code, silent, store_history=True, user_expressions=None,
                   allow_stdin=False, *, cell_id=None):
        if self.node.poll() is not None:
            self.start_node()
        self.node.stdin.write((json.dumps({"code": code, "ts": TS}) + "\n").encode())
        self.node.stdin.flush()
        error = None
        while True:
            msg = self.next_line()
            if msg is None:
                error = {"ename": "NodeExited", "evalue": "node exited; it is started again on the next call",
                         "traceback": ["NodeExited"]}
                break
            kind = msg.get("type")
            if kind == "done":
                break
            if kind in ("stdout", "stderr") and not silent:
                self.send_response(self.iopub_socket, "stream", {"name": kind, "text": msg["text"]})
            elif kind == "result" and not silent:
                self.send_response(self.iopub_socket, "execute_result", {
                    "execution_count": self.execution_count, "data": {"text/plain": msg["text"]}, "metadata": {}})
            elif kind == "error":
                error = {"ename": msg["name"], "evalue": msg["value"], "traceback": msg["traceback"].split("\n")}
        if error is None:
            return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}
        if not silent:
            self.send_response(self.iopub_socket, "error", error)
        return {"status": "error", "execution_count": self.execution_count, **error}


if __name__ == "__main__":
    IPKernelApp.launch_instance(kernel_class=JsKernel)
