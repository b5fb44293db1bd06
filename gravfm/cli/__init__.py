"""The `gravfm` command: thin subcommands calling library functions.

Each subcommand lives in its own module with a ``register(subparsers)`` function. Errors derived
from :class:`gravfm.errors.GravfmError` are printed as one line and exit with status 2.

SIGINT, SIGTERM and SIGHUP all stop a command the same way: the signal becomes a
:class:`Stopped` exception (a ``KeyboardInterrupt``), so every ``finally`` and context manager
runs — the Verilator build's and the simulator's process groups are ended, temporary folders
removed — and the command exits with 128 + the signal's number and one line on stderr.
"""

import argparse
import importlib
import os
import signal
import sys

from ..errors import GravfmError
from ..provenance import PACKAGE_PARENT, command_line, git_state
from ..version import PACKAGE_NAME, __version__
from ..stop_signals import STOP_SIGNALS, Stopped, install_stop_handlers

# Modules under gravfm.cli that provide register(subparsers); each is imported lazily so a
# missing optional part (e.g. the hardware stack) never breaks `gravfm graph info`.
SUBCOMMAND_MODULES = ["graph_cmd", "partition_cmd", "model_cmd", "run_cmd", "synth_cmd", "demo_cmd", "reproduce_cmd",
                      "board_cmd"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other error of the command
    (the usage stays in ``--help``)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``--version``: the package version and the git revision it runs from (asked only then)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        state = git_state(PACKAGE_PARENT)
        revision = state["git_revision"]
        where = "" if revision is None else f" (git {revision[:12]}{', uncommitted changes' if state['git_dirty'] else ''})"
        print(f"gravfm {__version__}{where}")
        parser.exit(0)


def build_parser():
    parser = _Parser(
        prog="gravfm",
        description="Generate, simulate, verify and model vertex-centric graph accelerators for FPGAs.",
    )
    parser.add_argument("--version", action=_Version, help="print the version (and git revision) and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"{__name__}.{name}":
                continue  # subcommand not written yet
            raise
        module.register(subparsers)
    return parser


def _quiet_closed_pipe():
    """The reader of the standard output went away (``gravfm graph info X | head -1``): what is
    left to print goes nowhere, as with any Unix filter, and Python's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (an embedding program's stream)
        pass
    return 128 + signal.SIGPIPE


def main(argv=None):
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command_line = command_line([PACKAGE_NAME, *argv])
    previous = install_stop_handlers()
    try:
        return args.handler(args) or 0
    except GravfmError as error:
        print(f"gravfm: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _quiet_closed_pipe()
    except KeyboardInterrupt as stop:
        signum = getattr(stop, "signum", signal.SIGINT)
        try:
            print(f"gravfm: {STOP_SIGNALS[signum]}", file=sys.stderr)
        except OSError:  # a hung-up terminal
            pass
        return 128 + signum
    finally:
        for number, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be restored
                signal.signal(number, handler)


if __name__ == "__main__":
    sys.exit(main())
