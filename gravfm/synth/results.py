"""Synthesis results as rows: the matrix of FPGA tops issue 38 times, the results file, and the
latest measurement of a top with whether its RTL is still today's.

A row is one ``gravfm synth`` of one top at one nextpnr seed (``kind: "seed"``) or the median over a
top's seeds on one RTL (``kind: "median"``, :func:`median_row`). Every row names its RTL twice: the
``commit`` it was measured on and the ``rtl`` fingerprint of :mod:`gravfm.synth.fingerprint`; a row
whose fingerprint is not the checkout's is stale ("measured on older RTL"). The results file
(:data:`RESULTS_FILE`, written by ``benchmarks/bench_synth.py --matrix``) holds a list of rows,
rewritten whole after each one so that an interrupted sweep keeps what it measured.

Nothing here imports Amaranth.
"""

import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..architectures import DEFAULT_ARCHITECTURE, HYBRID
from ..errors import ConfigError
from ..provenance import PACKAGE_PARENT, stamped

__all__ = ["Top", "MATRIX", "MATRIX_SEEDS", "MATRIX_ROUTER", "RESULTS_FILE", "TOP_KEYS", "CONFIG_KEYS", "ROW_KEYS",
           "FORMAT_NOTE", "FIGURES", "seed_row", "load_rows", "save_rows", "median_row", "rtl_note", "seeds_words",
           "Measurement", "design_match", "latest_measurement", "unfinished_today"]

#: The results file of a checkout (absent from an installed package).
RESULTS_FILE = PACKAGE_PARENT / "benchmarks" / "results" / "synth_matrix.json"

#: What makes two rows the same top, and the same configuration of place and route. A row without
#: ``arch`` was written before the field existed, when ``gravfm synth`` built GraVF-M tops only:
#: :func:`load_rows` gives it the default architecture.
TOP_KEYS = ("algorithm", "arch", "fpgas", "pes", "edge_memory", "target")
CONFIG_KEYS = (*TOP_KEYS, "pnr_freq_mhz", "router")

#: What the rows of a results file are.
FORMAT_NOTE = (
    "One row per gravfm synth of one FPGA top at one nextpnr seed (kind 'seed'), and per top and RTL the median "
    "over the seeds of a benchmarks/bench_synth.py --matrix sweep (kind 'median'). 'commit' is the commit the "
    "row was measured on, 'rtl' its RTL fingerprint (gravfm/synth/fingerprint.py: the files that feed "
    "elaboration and synthesis), 'netlist' (where present) the top's netlist fingerprint (gravfm/synth/netlists.py: "
    "its Verilog, the flow's files, the tools' versions); a row whose RTL fingerprint is not the checkout's, nor its "
    "netlist fingerprint the checkout's for that top, is stale: scripts/synth_table.py marks it 'measured on older "
    "RTL' in the Fmax tables of README.md and docs/results.md.")

#: The figures of a seed row (None where a run gave none: a timeout, a target without nextpnr).
FIGURES = ("status", "fmax_mhz", "critical_path", "luts", "flip_flops", "bram_blocks", "dsps", "seconds")

#: The keys every row has (a seed row also ``seed``, a median row ``seeds``; ``arch`` may be absent).
ROW_KEYS = ("kind", *(key for key in CONFIG_KEYS if key != "arch"), "commit", "commit_date", "rtl", "status",
            "fmax_mhz")

#: The nextpnr seeds and router of every top of the matrix (issue 38: the median of seeds 1-3).
MATRIX_SEEDS = (1, 2, 3)
MATRIX_ROUTER = "router1"


@dataclass(frozen=True)
class Top:
    """One FPGA top of the matrix: ``gravfm synth ALGORITHM --pes --fpgas --edge-memory --target``,
    placed and routed for ``freq_mhz`` (the target's goal)."""

    name: str
    label: str
    algorithm: str
    pes: int
    fpgas: int = 1
    edge_memory: str = "onchip"
    target: str = "ecp5-85"
    freq_mhz: float = 150.0
    arch: str = DEFAULT_ARCHITECTURE

    def key(self):
        """The row fields of :data:`TOP_KEYS` that select this top."""
        return {"algorithm": self.algorithm, "arch": self.arch, "fpgas": self.fpgas, "pes": self.pes,
                "edge_memory": self.edge_memory, "target": self.target}

    def command(self, seed, router=MATRIX_ROUTER):
        """The ``gravfm synth`` arguments of one seed."""
        arch = [] if self.arch == DEFAULT_ARCHITECTURE else ["--arch", self.arch]
        return ["synth", self.algorithm, *arch, "--pes", str(self.pes), "--fpgas", str(self.fpgas),
                "--edge-memory", self.edge_memory, "--target", self.target, "--freq", f"{self.freq_mhz:g}",
                "--seed", str(seed), "--router", router]


#: Issue 38's matrix: every top at speed (ECP5-85 speed 8 at 150 MHz; the ULX3S's speed 6 at 125),
#: and issue 37's small hybrid top beside the GraVF-M one.
MATRIX = (
    Top("wcc-4pe", "1 FPGA, 4 WCC PEs", "wcc", pes=4),
    Top("bfs-4pe", "1 FPGA, 4 BFS PEs", "bfs", pes=4),
    Top("wcc-2x4", "FPGA 0 of 2 x 4 WCC PEs, link ends and neighbour filter", "wcc", pes=4, fpgas=2),
    Top("wcc-4x4", "FPGA 0 of 4 x 4 WCC PEs, link ends and neighbour filter", "wcc", pes=4, fpgas=4),
    Top("pagerank-4pe", "1 FPGA, 4 PageRank PEs", "pagerank", pes=4),
    Top("wcc-1pe-offchip", "1 FPGA, 1 WCC PE, edges off chip (AXI4 read port)", "wcc", pes=1, edge_memory="offchip"),
    Top("ulx3s-wcc-4pe", "ULX3S (ECP5-85 speed 6), 4 WCC PEs", "wcc", pes=4, target="ecp5-85-6", freq_mhz=125.0),
    Top("hybrid-wcc-4pe", "1 FPGA, 4 WCC PEs, hybrid architecture (scatter units, message network)", "wcc",
        pes=4, arch=HYBRID.name),
)


def seed_row(report, *, rtl, commit, commit_date, source):
    """The seed row of a ``gravfm synth --json`` report measured on ``commit`` (whose RTL
    fingerprint is ``rtl``); ``source`` says where it comes from."""
    fpga = report["fpga"]
    when = report.get("provenance", {})
    return {"kind": "seed", "algorithm": report["algorithm"], "arch": report.get("arch", DEFAULT_ARCHITECTURE),
            "fpgas": report["fpgas"], "pes": report["pes"],
            "edge_memory": "offchip" if report["capacity"]["offchip_edges"] else "onchip",
            "target": report["target"], "pnr_freq_mhz": fpga.get("pnr_freq_mhz"), "router": fpga.get("pnr_router"),
            "seed": fpga.get("pnr_seed"), "commit": commit, "commit_date": commit_date, "rtl": rtl,
            **{key: fpga.get(key) for key in FIGURES if key != "status"}, "status": "ok",
            "measured": when.get("time_utc") or when.get("date"), "source": source}


def load_rows(path=RESULTS_FILE):
    """The rows of a results file; no rows when it does not exist.

    Raises
    ------
    ConfigError
        The file is not a results document (one line naming it).
    """
    path = Path(path)
    if not path.exists():
        return []
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{path}: not a synthesis results file ({type(error).__name__}: {error})") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ConfigError(f"{path}: 'rows' must be a list of objects")
    for number, row in enumerate(rows):
        missing = [key for key in ROW_KEYS if key not in row]
        if missing:
            raise ConfigError(f"{path}: row {number} has no {missing[0]!r}")
    return [{**row, "arch": row.get("arch", DEFAULT_ARCHITECTURE)} for row in rows]


def save_rows(path, rows, notes=None):
    """Write ``rows`` to ``path``, replacing it whole (a reader never sees half a file), with
    ``notes``, or the notes the file has (:data:`FORMAT_NOTE` for a new file) when None."""
    path = Path(path)
    if notes is None:
        notes = json.loads(path.read_text(encoding="utf-8"))["notes"] if path.exists() else [FORMAT_NOTE]
    document = stamped({"benchmark": "synth_matrix", "notes": list(notes), "rows": list(rows)})
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, path)


def median_row(rows):
    """The median row of one top's seed rows of one design (same :data:`CONFIG_KEYS`, and ``rtl`` or
    ``netlist``); it names the latest of their commits, with that commit's RTL fingerprint.

    The median is ``median_low`` over the seeds that gave an Fmax: a measured seed's figure, so
    that its critical path and resources go with it. ``status`` is ``ok`` when every seed gave a
    figure, ``partial`` when some did, and the first seed's status when none did.
    """
    seeds = sorted(rows, key=lambda row: row["seed"])
    measured = [row for row in seeds if row.get("fmax_mhz") is not None]
    first = seeds[0]
    latest = max(seeds, key=lambda row: row["commit_date"])  # seeds of one netlist may span commits
    summary = {"kind": "median", **{key: first.get(key) for key in CONFIG_KEYS},
               "seeds": [row["seed"] for row in seeds], "rtl": latest["rtl"], "netlist": latest.get("netlist"),
               "commit": latest["commit"], "commit_date": latest["commit_date"]}
    if not measured:
        return {**summary, "status": first["status"], "fmax_mhz": None}
    middle = statistics.median_low(row["fmax_mhz"] for row in measured)
    chosen = next(row for row in measured if row["fmax_mhz"] == middle)
    return {**summary, "status": "ok" if len(measured) == len(seeds) else "partial",
            "fmax_mhz": middle, "fmax_range_mhz": [min(r["fmax_mhz"] for r in measured),
                                                   max(r["fmax_mhz"] for r in measured)],
            "median_seed": chosen["seed"], "seeds_measured": [row["seed"] for row in measured],
            **{key: chosen.get(key) for key in ("critical_path", "luts", "flip_flops", "bram_blocks", "dsps")}}


def rtl_note(commit, stale, same="RTL"):
    """``today's RTL (commit X)``, ``measured on older RTL (commit X)``, or (``stale`` None) unknown;
    ``same="netlist"``: not today's RTL but today's netlist of that top (:mod:`gravfm.synth.netlists`)."""
    if stale is None:
        return f"commit {commit[:7]}; whether today's RTL differs is unknown (no git checkout)"
    return f"measured on older RTL (commit {commit[:7]})" if stale else f"today's {same} (commit {commit[:7]})"


def _seed_list(seeds):
    """``1-3`` for consecutive seeds, else ``1, 4``."""
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def seeds_words(median):
    """How a :func:`median_row` was measured: ``seed 1`` or ``median of seeds 1-3: 149.1-161.3``,
    the seeds without a figure, and the router when it is not the matrix's."""
    measured = median["seeds_measured"]
    if len(measured) == 1:
        words = f"seed {measured[0]}"
    else:
        low, high = median["fmax_range_mhz"]
        words = f"median of seeds {_seed_list(measured)}: {low:.1f}-{high:.1f}"
    missing = [seed for seed in median["seeds"] if seed not in measured]
    if missing:
        words += f"; no figure from seed {_seed_list(missing)}"
    return words if median["router"] == MATRIX_ROUTER else f"{words}, {median['router']}"


@dataclass(frozen=True)
class Measurement:
    """The latest measurement of a top: the :func:`median_row` of its latest RTL's seed rows,
    and whether that RTL is the checkout's (``stale`` None: the checkout's is unknown)."""

    median: dict
    stale: bool | None
    same: str = "RTL"  # "netlist": today's netlist of the top, measured on other RTL

    def rtl_label(self):
        """The RTL it describes (:func:`rtl_note`)."""
        return rtl_note(self.median["commit"], self.stale, self.same)


def _seed_groups(rows, key):
    """The seed rows of the top ``key`` that count, by (what they describe, router, placement
    goal): their netlist fingerprint (:mod:`gravfm.synth.netlists`; seeds of one netlist pool
    across commits), or for a row without one its RTL fingerprint. Rows whose RTL a later commit
    reverted (``reverted_by``) do not count."""
    groups = {}
    for row in rows:
        if row.get("kind") == "seed" and not row.get("reverted_by") and all(row.get(k) == v for k, v in key.items()):
            design = row.get("netlist") or row["rtl"]
            groups.setdefault((design, row.get("router"), row.get("pnr_freq_mhz")), []).append(row)
    return groups


def design_match(row, rtl, netlist):
    """How ``row`` describes a design: ``"RTL"`` when it was measured on the RTL fingerprint
    ``rtl``, ``"netlist"`` when on another RTL with the netlist fingerprint ``netlist`` (the same
    design), else None (either may be None: unknown)."""
    if rtl is not None and row.get("rtl") == rtl:
        return "RTL"
    if netlist is not None and row.get("netlist") == netlist:
        return "netlist"
    return None


def _sameness(group, fingerprint, netlist):
    """:func:`design_match` of a group of rows: ``"RTL"`` when one row has it, else the rows'."""
    matches = {design_match(row, fingerprint, netlist) for row in group}
    return "RTL" if "RTL" in matches else "netlist" if "netlist" in matches else None


def latest_measurement(rows, key, fingerprint, netlist=None):
    """The latest :class:`Measurement` of the top ``key`` (the :data:`TOP_KEYS`), or None.

    Seed rows group as :func:`_seed_groups` says; groups without an Fmax do not count. A group of
    today's design wins: measured on ``fingerprint`` (the checkout's RTL; None when unknown) or
    of ``netlist`` (the top's netlist fingerprint in the checkout; None when unknown); else the
    one with the latest commit.
    """
    measured = []
    for group in _seed_groups(rows, key).values():
        median = median_row(group)
        if median["fmax_mhz"] is not None:
            measured.append((median, _sameness(group, fingerprint, netlist)))
    if not measured:
        return None
    best, same = max(measured, key=lambda pair: (pair[1] is not None, pair[0]["commit_date"]))
    if fingerprint is None and netlist is None:
        return Measurement(best, None)
    return Measurement(best, same is None, same or "RTL")


def unfinished_today(rows, key, fingerprint, netlist=None):
    """The seed rows of the top ``key`` of today's design (:func:`latest_measurement`) that gave
    no Fmax (a timeout, a run stopped), by seed; none when a run of that design gave a figure, or
    it is unknown. What the table says beside an older measurement: today's RTL was tried."""
    if fingerprint is None and netlist is None:
        return []
    today = [row for group in _seed_groups(rows, key).values() if _sameness(group, fingerprint, netlist)
             for row in group]
    if any(row.get("fmax_mhz") is not None for row in today):
        return []
    return sorted(today, key=lambda row: (row["seed"], row["commit_date"]))
