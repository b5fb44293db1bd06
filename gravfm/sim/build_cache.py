"""A content-addressed cache of compiled simulators that repairs itself.

A build is keyed by a hash of everything that goes into it (generated Verilog, harness sources,
tool version and flags), so a second run on another graph that fits the same capacities reuses the
executable. The cache lives in ``$GRAVFM_CACHE`` or else the user's cache folder,
``$XDG_CACHE_HOME/gravfm`` (``~/.cache/gravfm``), so a design built from one folder is reused
from any other.

An entry is the folder ``<kind>-<key>/`` holding the product and ``manifest.json`` (key, product
size, SHA-256, executable bit, tool information). A build is made in a private temporary folder;
the manifest is written last and the folder is then renamed into place, so an entry is either
complete or absent. Every use checks the entry against its manifest (and, if asked, that the
product starts); a damaged or incomplete entry is moved aside and rebuilt, with one log line.
Builders of one key take a lock (``fcntl.flock`` on ``.<kind>-<key>.lock``): the first builds,
the others wait for it and then use its entry.
"""

import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..errors import CacheError
from ..version import PACKAGE_NAME
from ..files import can_create_in

__all__ = ["cache_root", "check_cache_root", "build_key", "BuildCache", "MANIFEST"]

CACHE_ENV = "GRAVFM_CACHE"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1


def cache_root(cache_dir=None):
    """The cache directory: ``cache_dir`` if given, else ``$GRAVFM_CACHE``, else
    ``$XDG_CACHE_HOME/gravfm`` (the XDG base directory rule: ``~/.cache/gravfm`` when unset or
    not absolute)."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / PACKAGE_NAME


def check_cache_root(cache_dir=None):
    """Fail unless the cache folder can be used: a writable folder, or one that can be created.

    Nothing is created. Raises :class:`~gravfm.errors.CacheError` (one line naming the folder,
    and ``$GRAVFM_CACHE`` when the folder came from it).
    """
    root = cache_root(cache_dir)
    where = f"build cache {root}" + (f" (${CACHE_ENV})" if cache_dir is None and os.environ.get(CACHE_ENV) else "")
    existing = root
    while not existing.exists() and existing != existing.parent:
        if existing.is_symlink():
            raise CacheError(f"{where}: {existing} is a broken link")
        existing = existing.parent
    if not existing.is_dir():
        raise CacheError(f"{where} is not a folder" if existing == root else f"{where}: {existing} is not a folder")
    if not can_create_in(existing):
        raise CacheError(f"{where} is not writable" if existing == root
                         else f"{where} cannot be created: {existing} is not writable")
    return root


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


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _describe(path):
    """Size, checksum and executable bit of a product file, as the manifest records them."""
    return {"size": path.stat().st_size, "sha256": _sha256(path),
            "executable": bool(path.stat().st_mode & stat.S_IXUSR)}


class BuildCache:
    """Builds stored as ``<root>/<kind>-<key>/`` folders, each holding ``product`` and its manifest.

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
        """Path of the cached ``product`` file of this build, or None when it is absent or damaged."""
        found, _ = self.inspect(kind, key, product)
        return found

    def inspect(self, kind, key, product, check=None):
        """``(path of product, None)`` for a sound entry, ``(None, None)`` when there is none,
        ``(None, reason)`` for a damaged one.

        Sound: the manifest names this kind, key and product, and the product has the size,
        SHA-256 and executable bit it records; ``check(path)``, when given, returns None (else
        the reason the product is unusable, e.g. that it crashes at start).
        """
        folder = self.path(kind, key).resolve()
        if not folder.exists():
            return None, None
        target = folder / product
        try:
            manifest = json.loads((folder / MANIFEST).read_text())
        except FileNotFoundError:
            return None, "no manifest"
        except (OSError, UnicodeDecodeError, ValueError) as error:
            return None, f"unreadable manifest ({error})"
        expected = {"format": MANIFEST_FORMAT, "kind": kind, "key": key, "product": product}
        if not isinstance(manifest, dict) or any(manifest.get(k) != v for k, v in expected.items()):
            return None, "manifest of another build"
        if not target.is_file():
            return None, f"{product} missing"
        actual = _describe(target)
        if actual["size"] != manifest.get("size"):
            return None, f"{product} has {actual['size']} bytes, manifest says {manifest.get('size')}"
        if actual["sha256"] != manifest.get("sha256"):
            return None, f"{product} checksum differs from the manifest's"
        if manifest.get("executable") and not actual["executable"]:
            return None, f"{product} is not executable"
        problem = check(target) if check is not None else None
        if problem:
            return None, f"{product} {problem}"
        return target, None

    def make(self, kind, key, product, builder, *, check=None, info=None, log=None):
        """Return ``(path of product, cached)``; run ``builder(folder)`` to fill a fresh build.

        ``builder`` receives an empty private folder and must leave ``product`` in it. On any
        failure (or interruption) the folder is removed and the exception propagates. A damaged
        entry (see :meth:`inspect`) is removed and rebuilt once; a fresh build that fails
        ``check`` too is an error. ``info`` (a JSON-able dict: tool versions, flags) goes into
        the manifest. ``log`` receives one-line messages (damaged entry, waiting for another builder).
        """
        log = log or (lambda message: None)
        found, _ = self.inspect(kind, key, product, check)
        if found is not None:
            return found, True
        with self._locked(kind, key, log):
            # Another process may have built it while this one waited for the lock.
            found, damage = self.inspect(kind, key, product, check)
            if found is not None:
                return found, True
            self._clear(kind, key, damage, log)
            return self._build(kind, key, product, builder, check, info), False

    @contextmanager
    def _locked(self, kind, key, log):
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.root / f".{kind}-{key}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise CacheError(f"build cache {self.root}: {error.strerror or error}") from None
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log(f"waiting for another process building {kind}-{key} in {self.root}")
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # releases the lock

    def _clear(self, kind, key, damage, log):
        """Under the lock: remove a damaged entry and the work folders of builds that were killed."""
        if damage is not None:
            log(f"cache entry {self.path(kind, key)} is damaged ({damage}): rebuilding it")
            aside = Path(tempfile.mkdtemp(prefix=f".{kind}-{key}-damaged-", dir=self.root))
            self.path(kind, key).rename(aside / "entry")
        for stale in self.root.glob(f".{kind}-{key}-*"):
            shutil.rmtree(stale, ignore_errors=True)

    def _build(self, kind, key, product, builder, check, info):
        work = Path(tempfile.mkdtemp(prefix=f".{kind}-{key}-", dir=self.root)).resolve()
        try:
            builder(work)
            target = work / product
            if not target.is_file():
                raise RuntimeError(f"build in {work} did not produce {product}")
            problem = check(target) if check is not None else None
            if problem:
                raise RuntimeError(f"the new build {kind}-{key}: {product} {problem}")
            manifest = {"format": MANIFEST_FORMAT, "kind": kind, "key": key, "product": product,
                        **_describe(target), "info": info or {}}
            (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
            final = self.path(kind, key).resolve()
            work.rename(final)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return final / product
