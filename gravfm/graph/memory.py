"""Memory a graph needs and memory there is: a graph that cannot fit is refused before allocating.

The estimate is the peak of generating and cleaning a graph, measured: about 48 bytes per edge
for RMAT (int32 ids) and 65 for uniform graphs (int64 ids), with the sort keys and the CSR
arrays; 32 bytes per vertex covers the row pointers and the relabelling. What there is comes
from psutil when installed, else ``/proc/meminfo``'s MemAvailable, lowered by a control group's
memory limit and by an address-space limit (``RLIMIT_AS``, ``ulimit -v``).
"""

import resource
from pathlib import Path

from ..errors import SpecError

__all__ = ["BYTES_PER_EDGE", "BYTES_PER_VERTEX", "graph_bytes", "available_memory", "check_graph_fits",
           "format_bytes"]

BYTES_PER_EDGE = 64
BYTES_PER_VERTEX = 32
_CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def graph_bytes(vertices, edges):
    """Estimated peak bytes to build a graph of ``vertices`` and ``edges`` (before cleaning)."""
    return BYTES_PER_VERTEX * int(vertices) + BYTES_PER_EDGE * int(edges)


def format_bytes(count):
    """``count`` bytes for a human: ``1.5 GiB``."""
    value = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} EiB"  # pragma: no cover


def _read_int(path, *, field=None):
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    if field is not None:
        line = next((line for line in text.splitlines() if line.startswith(field)), None)
        if line is None:
            return None
        text = line.split(":", 1)[1].split()[0]
        return int(text) * 1024  # kB
    text = text.strip()
    return int(text) if text.isdigit() else None


def _system_available():
    try:
        import psutil
    except ImportError:
        return _read_int("/proc/meminfo", field="MemAvailable:"), "MemAvailable in /proc/meminfo"
    return psutil.virtual_memory().available, "available memory (psutil)"


def available_memory():
    """``(bytes, source)``: what this process may still allocate, and which limit says so;
    ``(None, "")`` when nothing is known (not Linux, no psutil)."""
    limits = []
    available, source = _system_available()
    if available is not None:
        limits.append((available, source))
    for limit_file, usage_file in _CGROUP_FILES:
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and usage is not None and limit < 1 << 60:
            limits.append((max(0, limit - usage), f"the memory limit of the control group ({limit_file})"))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        in_use = _read_int("/proc/self/status", field="VmSize:") or 0
        limits.append((max(0, soft - in_use), f"the address-space limit RLIMIT_AS (ulimit -v) of "
                                              f"{format_bytes(soft)}"))
    return min(limits, key=lambda item: item[0]) if limits else (None, "")


def check_graph_fits(what, vertices, edges):
    """Refuse a graph too large for the memory there is, before any of it is allocated.

    Raises
    ------
    gravfm.errors.SpecError
        ``what``, the estimated size, the vertices and edges, and the limit that refuses it.
    """
    needed = graph_bytes(vertices, edges)
    available, source = available_memory()
    if available is not None and needed > available:
        raise SpecError(f"{what}: {vertices:,} vertices and {edges:,} edges need about {format_bytes(needed)}, "
                        f"more than the {format_bytes(available)} available ({source})")
