"""The harness's PLAN file: the words to watch while it runs and the regions to read after.

Lines ``watch KEY=VALUE ...`` and ``read KEY=VALUE ...`` with the fields of :class:`WatchItem` and
:class:`ReadRegion` by name (:func:`~gravfm.sim.named_fields.named_line`) but their ``name``,
which stays in Python; the harness reads them into the structs generated from these dataclasses
(:mod:`gravfm.sim.harness_inputs`). This module imports no Amaranth.
"""

from dataclasses import dataclass, field
from pathlib import Path

from .named_fields import PYTHON_ONLY, named_line

__all__ = ["ReadRegion", "WatchItem", "write_plan"]


@dataclass(frozen=True)
class ReadRegion:
    """Words ``addr .. addr+count-1`` of memory ``mem`` of PE ``pe``, read after the run."""

    name: str = field(metadata=PYTHON_ONLY)
    pe: int
    mem: int
    addr: int
    count: int


@dataclass(frozen=True)
class WatchItem:
    """A word read at every progress scan (counters). ``progress``: its change is forward progress."""

    name: str = field(metadata=PYTHON_ONLY)
    pe: int
    mem: int
    addr: int
    progress: bool = False


def write_plan(path, reads, watch):
    """The harness's plan file (see ``harness.cpp``): every watch item, every non-empty read."""
    lines = [named_line("watch", w) for w in watch]
    lines += [named_line("read", r) for r in reads if r.count > 0]
    Path(path).write_text("\n".join(lines) + "\n")
