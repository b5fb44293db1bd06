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

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
GRACE_S = 5.0


def end_group(number=signal.SIGTERM, frame=None):
    """SIGTERM to the guard's group (the command's processes); SIGKILL to what outlives the grace.
    The guard waits for all of them, not only its child: a compiler driver deletes its temporary
    files when it gets SIGTERM, and must not be killed while it does."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the guard stays to escalate
    group, me = os.getpgrp(), os.getpid()
    os.killpg(group, signal.SIGTERM)
    os.killpg(group, signal.SIGCONT)
    deadline = time.monotonic() + GRACE_S
    while group_runs(group, besides=me) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, os.WNOHANG)  # reap the child, so that it no longer counts
        time.sleep(0.02)
    if group_runs(group, besides=me):
        os.killpg(group, signal.SIGKILL)  # the guard too
    os._exit(128 + number)


def group_runs(group, *, besides=None):
    """Whether a process of the group ``group`` other than ``besides`` (a pid) is alive (zombies,
    which no-one may reap, are not)."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: ask the kernel, which counts zombies too
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] not in (b"Z", b"X") and int(entry) != besides:
            return True
    return False


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
