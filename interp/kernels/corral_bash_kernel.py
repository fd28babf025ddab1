"""Corral's bash kernel (decision 0088): a Jupyter kernel, on ipykernel's
Kernel base class, over one persistent bash, so that a bash context keeps
its variables, functions and cwd between calls as a notebook's does.
bash is in the kernel's process group and dies with the kernel.

Each cell is written to bash's stdin, followed by a marker line on stdout
and on stderr that carries the cell's exit status; what bash writes before
the markers is streamed as it comes. An interrupt (corral-interp's SIGINT
to the group) ends the command bash is running; bash itself only runs its
trap and goes on. A cell that fails is an error named
CommandExitError with its status.
"""
import ctypes
import os
import select
import signal
import subprocess
import uuid

from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel

READ = 65536
PR_SET_PDEATHSIG = 1


def in_child():
    """bash ends with the kernel, however the kernel ends; and it starts with
    SIGINT's default, not the kernel's ignored one (a non-interactive bash
    can never trap a signal ignored when it started, nor can its commands)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class BashKernel(Kernel):
    implementation = "corral-bash"
    implementation_version = "1"
    banner = "bash, by Corral"
    language_info = {"name": "bash", "mimetype": "text/x-sh", "file_extension": ".sh"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.bash = None
        self.start_bash()

    def start_bash(self):
        # In the kernel's process group: corral-interp's SIGINT to the group
        # reaches the command bash runs, and its stop ends bash too.
        self.bash = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, preexec_fn=in_child)
        # A trap, not an ignored signal: the commands bash starts get SIGINT's default.
        self.bash.stdin.write(b"trap ':' INT\n")
        self.bash.stdin.flush()

    def stream(self, name, text, silent):
        if text and not silent:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    def read_some(self, pending, tag, silent):
        """One read of whichever stream has bytes: False once bash is gone."""
        ready, _, _ = select.select([fd for fd, p in pending.items() if p[2] is None], [], [], 1.0)
        if self.bash.poll() is not None and not ready:
            return False
        for fd in ready:
            name, buf, _ = pending[fd]
            chunk = os.read(fd, READ)
            if not chunk:
                return False
            buf += chunk
            at = buf.find(tag)
            if at >= 0:
                self.stream(name, buf[:at].decode(errors="replace"), silent)
                pending[fd][1] = b""
                pending[fd][2] = buf[at + len(tag):].split(b"\n", 1)[0].strip() or b"0"
                continue
            keep = len(tag)  # a marker cut between two reads waits for the next
            self.stream(name, buf[:-keep].decode(errors="replace") if len(buf) > keep else "", silent)
            pending[fd][1] = buf[-keep:] if len(buf) > keep else buf
        return True

    def pump(self, marker, silent):
        """Streams stdout and stderr until both markers: (exit status or
        None when bash is gone, whether an interrupt came)."""
        pending = {self.bash.stdout.fileno(): ["stdout", b"", None],
                   self.bash.stderr.fileno(): ["stderr", b"", None]}
        tag = b"\n" + marker.encode()
        interrupted = False
        while any(p[2] is None for p in pending.values()):
            try:
                if not self.read_some(pending, tag, silent):
                    return None, interrupted
            except KeyboardInterrupt:
                # corral-interp's SIGINT to the group: the command got it too
                interrupted = True
        return int(pending[self.bash.stdout.fileno()][2]), interrupted

    def do_execute(self, code, silent, store_history=True, user_expressions=None,
                   allow_stdin=False, *, cell_id=None):
        if self.bash.poll() is not None:
            self.start_bash()
        marker = uuid.uuid4().hex
        script = (code + "\n__corral_rc=$?\n"
                  f"printf '\\n{marker}%d\\n' \"$__corral_rc\"\nprintf '\\n{marker}\\n' >&2\n")
        self.bash.stdin.write(script.encode())
        self.bash.stdin.flush()
        rc, interrupted = self.pump(marker, silent)
        if rc == 0 and not interrupted:
            return {"status": "ok", "execution_count": self.execution_count, "payload": [],
                    "user_expressions": {}}
        if rc is None:
            name, value = "BashExited", "bash exited; it is started again on the next call"
        elif interrupted:
            name, value = "KeyboardInterrupt", f"interrupted (exit status {rc})"
        else:
            name, value = "CommandExitError", f"exit status {rc}"
        if not silent:
            self.send_response(self.iopub_socket, "error",
                               {"ename": name, "evalue": value, "traceback": [f"{name}: {value}"]})
        return {"status": "error", "execution_count": self.execution_count, "ename": name,
                "evalue": value, "traceback": [f"{name}: {value}"]}


if __name__ == "__main__":
    IPKernelApp.launch_instance(kernel_class=BashKernel)
