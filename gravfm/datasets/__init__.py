"""The graph datasets shipped with gravfm; README.md here gives each file's provenance and counts.

A relative graph name that is not a file in the current folder is looked up here, then in each
folder of ``$GRAVFM_DATASETS`` (an optional search path, separated by ``os.pathsep``), as ``NAME``
or ``NAME.gz``: files over ~500 KB are stored gzipped but keep being found by their names.
"""

import os
from pathlib import Path

from ..errors import GraphFormatError

__all__ = ["FOLDER", "files", "search_path", "find", "path"]

#: The folder of the packaged dataset files.
FOLDER = Path(__file__).resolve().parent


def files():
    """Names of the packaged dataset files, sorted (not README.md or Python files)."""
    return sorted(p.name for p in FOLDER.iterdir() if p.is_file() and p.suffix not in (".md", ".py"))


def search_path():
    """Folders searched for a relative graph name: :data:`FOLDER`, then ``$GRAVFM_DATASETS``'s."""
    extra = os.environ.get("GRAVFM_DATASETS", "")
    return [FOLDER, *(Path(part).expanduser() for part in extra.split(os.pathsep) if part)]


def find(name, folders=None):
    """The first ``folder/name`` or ``folder/name.gz`` that is a file, or None.

    ``folders`` defaults to :func:`search_path`.
    """
    for folder in search_path() if folders is None else folders:
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    return None


def path(name):
    """The packaged dataset file called ``name`` (or ``name.gz``)."""
    found = find(name, [FOLDER])
    if found is None:
        raise GraphFormatError(f"{name}: no such packaged dataset (known: {', '.join(files())})")
    return found
