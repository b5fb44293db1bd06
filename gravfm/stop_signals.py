"""The stop signals of a gravfm process: SIGINT, SIGTERM and SIGHUP as an exception, so that the
cleanup of whatever runs (a build's process group, a simulator) happens on the way out.

Used by the command line (:func:`gravfm.cli.main`) and by the child process of a reproduce point
(:mod:`gravfm.reproduce.task`); below both, so that neither reaches into the other.
"""

import signal
import threading

__all__ = ["STOP_SIGNALS", "Stopped", "install_stop_handlers"]

#: The signals that stop a command, and the line each prints.
STOP_SIGNALS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)",
                signal.SIGHUP: "hung up (SIGHUP)"}


class Stopped(KeyboardInterrupt):
    """A stop signal (:data:`STOP_SIGNALS`) turned into an exception; ``signum`` is its number."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum, frame):
    # Further stop signals are ignored while the first one's cleanup runs, so that it completes.
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    raise Stopped(signum)


def install_stop_handlers():
    """Route the stop signals to :func:`_raise_stopped`; return the previous handlers.

    A signal ignored when gravfm starts (``nohup``, a background job's SIGINT) stays ignored.
    Outside the main thread (an embedding program) nothing is changed.
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    for number, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, _raise_stopped)
    return previous
