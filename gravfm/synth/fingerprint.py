"""The RTL fingerprint: which sources a synthesis figure describes, so that a figure measured on
older RTL can say so.

A place-and-route result depends on the gateware, the algorithms' kernels, the system parameters
the planner chooses and the synthesis flow (Yosys script, pin wrapper, block-RAM output-register
pass), not on the rest of gravfm. :data:`RTL_SOURCES` lists those paths and :data:`NOT_RTL` the
files among them that only read or print results. The fingerprint is the first 12 hex digits of
the SHA-1 of the sorted lines ``path blob`` over those files, ``blob`` being git's hash of the
file's bytes: the same value for a commit (from ``git ls-tree``) and for a working tree holding
that commit's files (hashed here, uncommitted edits included), and a new value whenever one of
them changes. It over-approximates (a change to PageRank's reference makes a WCC row stale too):
a stale label too many is cheap, a current label on changed RTL is the mistake this prevents.

Nothing here imports Amaranth.
"""

import hashlib
from pathlib import Path

from ..errors import ConfigError
from ..provenance import PACKAGE_PARENT, git_output

__all__ = ["RTL_SOURCES", "NOT_RTL", "rtl_fingerprint", "commit_facts"]

#: Paths (from the checkout's top) whose files feed the elaboration and synthesis of an FPGA top.
RTL_SOURCES = ("gravfm/hw", "gravfm/algorithms", "gravfm/synth", "gravfm/flow/planning.py",
               "gravfm/architectures.py", "gravfm/widths.py")

#: Files under :data:`RTL_SOURCES` that no synthesised netlist depends on: the logic-depth check,
#: this module and the readers and printers of synthesis results.
NOT_RTL = frozenset({"gravfm/synth/depth.py", "gravfm/synth/fingerprint.py", "gravfm/synth/results.py",
                     "gravfm/synth/netlists.py",
                     "gravfm/synth/fmax_table.py", "gravfm/synth/clocks.py"})


def _git(folder, *arguments):
    """``git arguments``' output in ``folder``, or ConfigError with git's reason."""
    output, reason = git_output(folder, *arguments)
    if reason is not None:
        raise ConfigError(f"cannot fingerprint the RTL in {folder}: {reason}")
    return output


def _blob_hash(data):
    """Git's object hash of a file's bytes (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _digest(blobs):
    """The fingerprint of ``{path: blob hash}``."""
    lines = "".join(f"{path} {blob}\n" for path, blob in sorted(blobs.items()))
    return hashlib.sha1(lines.encode()).hexdigest()[:12]


def rtl_fingerprint(revision=None, *, folder=PACKAGE_PARENT):
    """The RTL fingerprint of ``revision`` (a commit), or of the working tree when None.

    The working tree counts every file git would commit there: tracked files as they are on disk
    (a deleted one left out) and untracked files that ``.gitignore`` does not exclude.

    Without git (a copy of the tracked files, as CI tests), the working tree's files are found on disk.

    Raises
    ------
    ConfigError
        ``revision`` is given and ``folder`` is not a git checkout, or it is not a commit of it.
    """
    folder = Path(folder)
    if revision is not None:
        listing = _git(folder, "ls-tree", "-r", "-z", f"{revision}^{{commit}}", "--", *RTL_SOURCES)
        blobs = {}
        for entry in filter(None, listing.split("\0")):
            meta, path = entry.split("\t", 1)
            kind, blob = meta.split()[1:]
            if kind == "blob" and path not in NOT_RTL:
                blobs[path] = blob
        return _digest(blobs)
    listing, reason = git_output(folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                                 *RTL_SOURCES)
    paths = _source_files(folder) if reason is not None else set(filter(None, listing.split("\0")))
    return _digest({path: _blob_hash((folder / path).read_bytes()) for path in paths - NOT_RTL
                    if (folder / path).is_file()})


def _source_files(folder):
    """The files under :data:`RTL_SOURCES` of a copy without git (CI tests a copy of the tracked
    files): every file but Python's caches, which are all git would list there."""
    paths = set()
    for source in RTL_SOURCES:
        top = folder / source
        found = [top] if top.is_file() else [path for path in top.rglob("*") if path.is_file()]
        paths |= {path.relative_to(folder).as_posix() for path in found
                  if "__pycache__" not in path.parts and path.suffix != ".pyc"}
    return paths


def commit_facts(revision, *, folder=PACKAGE_PARENT):
    """``{"commit": full hash, "commit_date": ISO 8601 committer date}`` of ``revision``.

    Raises
    ------
    ConfigError
        ``revision`` is not a commit of the checkout at ``folder``.
    """
    full, date = _git(Path(folder), "show", "-s", "--format=%H %cI", f"{revision}^{{commit}}", "--").split()
    return {"commit": full, "commit_date": date}
