"""Waveforms on demand: what to dump (:class:`TraceRequest`) and how a compiled build does it.

A traced Verilator build is compiled with ``--trace`` (VCD) or ``--trace-fst`` (FST) and a
header of its own, ``harness_trace.h``, which wraps the top's model class so that every clock
edge after ``start`` is dumped. Nothing of it enters an untraced build: its sources, flags and
cache key stay exactly as they were. The run tells the traced harness where to write and which
cycles to keep through environment variables (:meth:`TraceRequest.environment`), so that the harness's
own command line, and with it ``harness.cpp``, is the same for both kinds of build.

Times in a dump: cycle ``c`` of the run (``c = 1`` is the clock edge that samples ``start``, as
the reported cycle counts number them) has its rising edge at time ``10 c`` and its falling edge
at ``10 c + 5``; reset and the load before ``start`` are not dumped.
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

__all__ = ["TraceRequest", "TRACE_KINDS", "parse_window", "TIME_PER_CYCLE", "check_fst_headers",
           "missing_headers"]

#: File suffix -> Verilator option of that waveform format.
TRACE_KINDS = {".vcd": "--trace", ".fst": "--trace-fst"}
#: Dump time units per clock cycle (rising edge at 10 c, falling edge at 10 c + 5).
TIME_PER_CYCLE = 10


def parse_window(text):
    """``"A:B"`` (cycles, 0 <= A <= B) as ``(A, B)``; ``A:`` or ``:B`` leave that end open."""
    first, colon, last = str(text).partition(":")
    try:
        window = (int(first) if first.strip() else 0, int(last) if last.strip() else None)
    except ValueError:
        window = None
    if not colon or window is None or window[0] < 0 or window[1] is not None and window[1] < window[0]:
        raise ConfigError(f"--trace-window {text!r}: expected A:B with whole cycles 0 <= A <= B, e.g. 100:2000")
    return window


@dataclass(frozen=True)
class TraceRequest:
    """Dump the waveform of a run to ``path`` (its suffix, ``.vcd`` or ``.fst``, picks the format).

    Parameters
    ----------
    path : str or os.PathLike
        The dump; a system of several FPGAs simulated as one model per FPGA writes one file per
        FPGA, ``path`` with ``-fpga{k}`` before the suffix (:meth:`paths`).
    window : (int, int or None), optional
        First and last run cycle dumped (None: to the end), e.g. from :func:`parse_window`.
    """

    path: object
    window: tuple | None = None

    def __post_init__(self):
        if self.kind is None:
            raise ConfigError(f"--trace {self.path}: unknown waveform format {Path(self.path).suffix!r} "
                              f"(known: {', '.join(TRACE_KINDS)})")
        if self.window is not None:
            first, last = self.window
            if not isinstance(first, int) or first < 0 or last is not None and (not isinstance(last, int) or last < first):
                raise ConfigError(f"--trace-window {self.window!r}: expected whole cycles 0 <= A <= B")

    @property
    def kind(self):
        """``.vcd`` or ``.fst`` (None for another suffix)."""
        suffix = Path(self.path).suffix.lower()
        return suffix if suffix in TRACE_KINDS else None

    @property
    def flags(self):
        """The Verilator option of this format."""
        return (TRACE_KINDS[self.kind],)

    def paths(self, instances):
        """The files written by ``instances`` model instances: ``path`` itself for one."""
        path = Path(self.path)
        if instances == 1:
            return [path]
        return [path.with_name(f"{path.stem}-fpga{k}{path.suffix}") for k in range(instances)]

    def environment(self, instances):
        """Environment variables telling a traced harness of ``instances`` models what to write."""
        first, last = self.window or (0, None)
        env = {"GRAVFM_TRACE_WINDOW": f"{first} {-1 if last is None else last}"}
        env.update({f"GRAVFM_TRACE_FILE{k}": str(Path(path).resolve()) for k, path in enumerate(self.paths(instances))})
        return env


def missing_headers(headers):
    """The ``(header, Debian package)`` pairs the C++ compiler cannot include."""
    missing = []
    for header, package in headers:
        probe = subprocess.run(["c++", "-E", "-x", "c++", "-"], input=f"#include <{header}>\n", text=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if probe.returncode != 0:
            missing.append((header, package))
    return missing


def check_fst_headers():
    """Refuse an FST build with one line when the C++ compiler lacks the headers Verilator's FST
    writer includes (zlib, lz4): the build would otherwise fail after minutes with a page of make."""
    for header, package in missing_headers((("zlib.h", "zlib1g-dev"), ("lz4.h", "liblz4-dev"))):
        raise ConfigError(f"--trace FILE.fst: Verilator's FST writer needs {header} ({package} on Debian); "
                          f"install it or dump VCD (FILE.vcd)")
