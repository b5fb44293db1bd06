"""A point run in a child process of the Dask worker, so that stopping the sweep stops its builds.

A Dask worker runs tasks in threads, which cannot be interrupted, and is ended by a signal when
its cluster closes; the Verilator build or simulator a task started (in process groups of their
own) would go on running. :func:`run_point_isolated` instead runs the point in a child Python
process (``python -m gravfm.reproduce.task``) that asks the kernel for SIGTERM when the worker
thread that started it dies (``PR_SET_PDEATHSIG``), and whose stop signals become
``KeyboardInterrupt`` as in the ``gravfm`` command, so the pipeline's cleanup ends those process
groups. The result comes back on the child's standard output, which nothing else writes to.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys

from ..stop_signals import install_stop_handlers
from .points import Point, run_point

__all__ = ["run_point_isolated"]

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the worker's own shutdown has to do
        pass


def run_point_isolated(point, *, cache_dir=None):
    """:func:`~gravfm.reproduce.points.run_point` in a child process; the same result (never raises)."""
    request = json.dumps({"point": point.to_dict(), "cache_dir": cache_dir})
    child = subprocess.run([sys.executable, "-m", "gravfm.reproduce.task"], input=request, capture_output=True,
                           text=True)
    if child.returncode == 0:
        return json.loads(child.stdout)
    tail = (child.stderr.strip().splitlines() or [f"exit status {child.returncode}"])[-1]
    return {"key": point.key(), "point": point.to_dict(), "status": "failed", "wall_s": 0.0,
            "error": f"the point's process ended: {tail}"}


def main():
    _die_with_parent()
    install_stop_handlers()  # SIGTERM from the dying worker -> KeyboardInterrupt -> cleanup
    request = json.loads(sys.stdin.read())
    result_fd = os.dup(1)
    os.dup2(2, 1)  # anything the run (or a tool it starts) prints goes to stderr, not into the result
    result = run_point(Point.from_dict(request["point"]), cache_dir=request["cache_dir"])
    with os.fdopen(result_fd, "w") as out:
        out.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
