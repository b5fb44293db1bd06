"""Where a benchmark's figures come from: the code's git revision, the machine and the date.

A results file must say which commit's RTL it describes. :func:`provenance` gathers that (the git
revision of the checkout the imported ``gravfm`` package lives in, whether it had uncommitted
changes, the package version, the time, the command line, the hash of a user's algorithm file and
the machine); :func:`stamped` puts it and :data:`SCHEMA_VERSION` on a JSON document, and
:func:`write_results` stamps a benchmark's document as it writes and prints it. Every JSON
document gravfm writes goes through :func:`stamped`. Nothing here imports Amaranth, and nothing
raises when git or the repository is missing (a package installed from an sdist has neither): the
unknown figures are ``None`` and ``git_note`` says why.

Typical use at the end of a benchmark::

    document = {"benchmark": "cpe_one_pe", "arguments": arguments(args), "results": results}
    write_results(document, args.out)   # writes args.out and prints the same JSON
"""

import datetime
import shlex
import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from .version import PACKAGE_NAME, __version__

__all__ = ["provenance", "stamped", "command_line", "SCHEMA_VERSION", "file_sha256", "git_output", "git_state",
           "machine", "arguments", "json_safe", "write_results"]

#: Version of the layout of gravfm's JSON documents: raised when a key is renamed or removed
#: (added keys keep it).
SCHEMA_VERSION = 1

#: The folder holding the ``gravfm`` package (a checkout's top folder, or site-packages).
PACKAGE_PARENT = Path(__file__).resolve().parent.parent

#: Seconds any one git command may take.
GIT_TIMEOUT_S = 10

#: Paths (relative to the checkout) whose uncommitted changes make a measurement "dirty": the
#: generator and the benchmarks, but not the results the benchmarks write.
DIRTY_PATHSPECS = ("gravfm", "benchmarks", "pyproject.toml", ":(exclude)benchmarks/results")

_STDOUT = object()  # write_results' default stream: sys.stdout as it is at the call


def git_output(folder, *arguments):
    """Run ``git arguments`` in ``folder``.

    Returns
    -------
    tuple
        ``(stdout, None)`` on success, ``(None, reason)`` if git is missing, times out or fails.
    """
    command = ["git", "--no-optional-locks", *arguments]
    try:
        completed = subprocess.run(command, cwd=folder, stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, timeout=GIT_TIMEOUT_S)
    except FileNotFoundError:
        return None, "git is not installed (not on PATH)"
    except subprocess.TimeoutExpired:
        return None, f"`git {' '.join(arguments)}` took more than {GIT_TIMEOUT_S} s"
    except OSError as error:
        return None, f"git could not be run: {error}"
    if completed.returncode != 0:
        message = completed.stderr.strip().splitlines()
        return None, f"`git {' '.join(arguments)}` failed: {message[0] if message else completed.returncode}"
    return completed.stdout, None


def git_state(folder):
    """Git revision of the checkout whose top folder is ``folder``, and whether it is dirty.

    ``folder`` must hold a ``gravfm`` package tracked by the repository: a copy installed in a
    folder that happens to lie inside some repository (a virtualenv's site-packages) has no
    revision of its own.

    Parameters
    ----------
    folder : str or pathlib.Path
        The folder holding the ``gravfm`` package.

    Returns
    -------
    dict
        ``git_revision``: the full hash of ``HEAD``, or ``None``; ``git_dirty``: ``True`` if
        ``git status`` shows changed tracked files under ``gravfm/``, ``benchmarks/`` (results
        excluded) or ``pyproject.toml``, ``False`` if none, ``None`` if unknown; and ``git_note``,
        why a figure is ``None`` (only then).
    """
    folder = Path(folder)
    if not folder.is_dir():
        return {"git_revision": None, "git_dirty": None, "git_note": f"{folder} is not a folder"}
    tracked, reason = git_output(folder, "ls-files", "--error-unmatch", "--", "gravfm/__init__.py")
    if reason is not None:
        return {"git_revision": None, "git_dirty": None,
                "git_note": f"no git checkout of gravfm at {folder} ({reason})"}
    head, reason = git_output(folder, "rev-parse", "--verify", "HEAD")
    if reason is not None:
        return {"git_revision": None, "git_dirty": None, "git_note": f"no HEAD commit at {folder} ({reason})"}
    state = {"git_revision": head.strip(), "git_dirty": None}
    status, reason = git_output(folder, "status", "--porcelain", "--untracked-files=no", "--", *DIRTY_PATHSPECS)
    if reason is not None:
        state["git_note"] = f"uncommitted changes unknown ({reason})"
    else:
        state["git_dirty"] = bool(status.strip())
    return state


def machine():
    """The machine a benchmark runs on.

    Returns
    -------
    dict
        ``cpus`` (logical CPUs), ``python`` (version), ``platform`` (OS and architecture) and
        ``load_average`` (1, 5 and 15 minutes; ``None`` where the OS has none): the machine may
        be shared, so the load is recorded beside the figures.
    """
    try:
        load = list(os.getloadavg())
    except (AttributeError, OSError):
        load = None
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "load_average": load}


def file_sha256(path):
    """SHA-256 (hex) of a file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def provenance(*, command=None, algorithm_file=None):
    """Where figures measured now come from.

    Parameters
    ----------
    command : str, optional
        The command line that made the figures (``gravfm run ...``).
    algorithm_file : str or pathlib.Path, optional
        A user's algorithm file (``FILE.py`` of ``FILE.py:NAME``): its hash is recorded, since
        the figures describe that file's kernels.

    Returns
    -------
    dict
        ``version`` (of gravfm), ``git_revision``, ``git_dirty`` (and ``git_note`` when either is
        unknown; see :func:`git_state`) of the checkout the imported ``gravfm`` package lives in,
        ``time_utc`` (ISO 8601), ``command``, ``algorithm_sha256`` (only with ``algorithm_file``)
        and ``machine`` (:func:`machine`).
    """
    record = {"version": __version__, **git_state(PACKAGE_PARENT),
              "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "command": command}
    if algorithm_file is not None:
        record["algorithm_sha256"] = file_sha256(algorithm_file)
    record["machine"] = machine()
    return record


def stamped(document, **where):
    """``document`` with ``schema_version`` first and ``provenance`` (:func:`provenance` of
    ``where``) last; a ``provenance`` the document already has is kept."""
    final = {"schema_version": SCHEMA_VERSION, **document}
    if "provenance" not in final:
        final["provenance"] = provenance(**where)
    return final


def command_line(argv=None):
    """The command line as a shell would take it again: ``argv`` (default ``sys.argv``)."""
    argv = sys.argv if argv is None else argv
    name = Path(argv[0]).name if argv else "python"
    program = PACKAGE_NAME if name in (PACKAGE_NAME, "__main__.py") else argv[0]
    return " ".join(shlex.quote(part) for part in [program, *argv[1:]])


def json_safe(value):
    """``value`` with tuples as lists, mapping keys as strings and any other non-JSON object
    (a path, a set) as its ``str``.

    Parameters
    ----------
    value : object

    Returns
    -------
    object
        Something :func:`json.dumps` accepts.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return str(value)


def arguments(namespace):
    """A benchmark's parsed command-line arguments, JSON-ready (its configuration).

    Parameters
    ----------
    namespace : argparse.Namespace

    Returns
    -------
    dict
        ``vars(namespace)`` through :func:`json_safe`.
    """
    return json_safe(vars(namespace))


def write_results(document, path=None, *, stream=_STDOUT, command=None):
    """Stamp ``document`` with its provenance, then write and print it as JSON.

    Parameters
    ----------
    document : dict
        The benchmark's results; not modified.
    path : str or pathlib.Path, optional
        File to write (its folder is created); replaced whole, so a reader never sees half a file.
    stream : file-like or None, optional
        Where to print the JSON too; ``sys.stdout`` (as it is at the call) by default, nowhere
        if ``None``.
    command : str, optional
        The command line recorded (default: this process's, :func:`command_line`).

    Returns
    -------
    dict
        ``document`` through :func:`stamped` (``schema_version`` and ``provenance`` added; a
        caller's ``provenance`` is never replaced).
    """
    final = stamped(document, command=command_line() if command is None else command)
    text = json.dumps(final, indent=2) + "\n"
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text)
        os.replace(partial, path)
    if stream is _STDOUT:
        stream = sys.stdout
    if stream is not None:
        stream.write(text)
        stream.flush()
    return final
