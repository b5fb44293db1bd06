"""A content-addressed cache of compiled simulators.

A build is keyed by a hash of everything that goes into it (generated Verilog, harness sources,
tool version and flags), so a second run on another graph that fits the same capacities reuses the
executable. The cache lives in ``$GRAVFM_CACHE`` or else ``.gravfm-cache/`` in the current
directory. Builds are made in a private temporary folder and renamed into place, so concurrent
builds of the same key never see each other's half-written files.
"""

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["cache_root", "build_key", "BuildCache"]

CACHE_ENV = "GRAVFM_CACHE"
DEFAULT_CACHE_DIR = ".gravfm-cache"


def cache_root(cache_dir=None):
    """The cache directory: ``cache_dir`` if given, else ``$GRAVFM_CACHE``, else ``./.gravfm-cache``."""
    if cache_dir is not None:
        return Path(cache_dir)
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)


def build_key(parts):
    """SHA-256 (hex, 24 characters) over an ordered mapping ``{name: str | bytes}``.

    Names are hashed with their contents, so moving text from one part to another changes the key.
    """
    digest = hashlib.sha256()
    for name, content in parts.items():
        data = content.encode() if isinstance(content, str) else bytes(content)
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:24]


class BuildCache:
    """Builds stored as ``<root>/<kind>-<key>/`` folders, each holding the file named ``product``.

    Parameters
    ----------
    root : path-like, optional
        Cache directory (see :func:`cache_root`).
    """

    def __init__(self, root=None):
        self.root = cache_root(root)

    def path(self, kind, key):
        """Folder of the build ``kind``/``key`` (whether or not it exists)."""
        return self.root / f"{kind}-{key}"

    def lookup(self, kind, key, product):
        """Path of the cached ``product`` file of this build, or None when it is not cached."""
        candidate = self.path(kind, key) / product
        return candidate if candidate.is_file() else None

    def make(self, kind, key, product, builder):
        """Return ``(path of product, cached)``; run ``builder(folder)`` to fill a fresh build.

        ``builder`` receives an empty private folder and must leave ``product`` in it. On any
        failure the folder is removed and the exception propagates.
        """
        found = self.lookup(kind, key, product)
        if found is not None:
            return found, True
        self.root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{kind}-{key}-", dir=self.root)).resolve()
        try:
            builder(work)
            if not (work / product).is_file():
                raise RuntimeError(f"build in {work} did not produce {product}")
            final = self.path(kind, key).resolve()
            try:
                work.rename(final)
            except OSError:
                # Someone else finished the same build first; theirs is as good as ours.
                if self.lookup(kind, key, product) is None:
                    raise
                shutil.rmtree(work, ignore_errors=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return final / product, False
