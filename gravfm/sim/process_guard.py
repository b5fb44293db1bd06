"""Run a command whose processes all end when the caller dies, even by SIGKILL.

Usage (by :func:`gravfm.sim.verilator_build.start_guarded`, in a session of its own)::

    python process_guard.py PARENT_PID COMMAND [ARGUMENT ...]

A Verilator build is perl, verilator_bin, make and the compilers. The CLI ends their process group
when it is stopped, but a library caller (a benchmark, a dask worker) killed by a signal runs no
clean-up, and the build would go on alone. Here the kernel tells this guard of its parent's death
(Linux: ``PR_SET_PDEATHSIG``), and the guard ends its group, the command's processes with it.
Elsewhere the guard only runs the command. Standard library only: it starts before anything of
gravfm is imported.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
GRACE_S = 5.0


def end_group(number=signal.SIGTERM, frame=None):
    """SIGTERM to the guard's group (the command's processes), SIGKILL to what outlives the grace."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the guard stays to escalate
    os.killpg(0, signal.SIGTERM)
    os.killpg(0, signal.SIGCONT)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.05)
        except ChildProcessError:  # no child left (grandchildren may still run: SIGKILL them)
            break
    os.killpg(0, signal.SIGKILL)  # the guard too


def watch_parent(parent):
    """Have the kernel send SIGTERM when ``parent`` dies (Linux); False if it already has."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    return os.getppid() == parent


def main(argv):
    parent, command = int(argv[1]), argv[2:]
    signal.signal(signal.SIGTERM, end_group)
    if not watch_parent(parent):  # it died before the guard could watch it
        return 128 + signal.SIGTERM
    returncode = subprocess.call(command)
    return 128 - returncode if returncode < 0 else returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
