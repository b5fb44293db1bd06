"""One point of an experiment: a frozen configuration, its content key, and how it runs.

A :class:`Point` says everything that decides a measurement (algorithm, graph, system size,
architecture, partitioning, edge memory, platform). Its :meth:`Point.key` is a hash of exactly
those fields, so the same configuration named by two experiments (``table3``'s peak and ``fig7``'s
four-FPGA GraVF-M point) is one task and one cached result. :func:`run_point` runs it through the
ordinary pipeline (:func:`gravfm.flow.run`) and never raises: a failed point comes back with its
error, so the rest of a sweep goes on.
"""

import dataclasses
import hashlib
import json
import time
import traceback
from dataclasses import dataclass

from ..algorithms import get_algorithm
from ..architectures import DEFAULT_ARCHITECTURE
from ..errors import GravfmError
from ..flow import RunOptions, run
from ..flow.memory import edge_memory_of, platform_for_run
from ..graph import load_graph
from ..model import load_platform, predict
from ..model.algorithm_params import params_for_algorithm
from ..model.units import mhz_to_hz
from ..provenance import PACKAGE_PARENT, git_state

__all__ = ["Point", "run_point", "point_root", "scaled_network", "POINT_SCHEMA"]

#: Bumped when the meaning of a cached result changes, so old results are not reused.
POINT_SCHEMA = 1


@dataclass(frozen=True, order=True)
class Point:
    """One measured configuration.

    Parameters
    ----------
    algorithm : str
        A registered algorithm (``wcc``, ``bfs``, ``pagerank``).
    graph : str
        A graph spec (:mod:`gravfm.graph.spec`), e.g. ``uniform:n=1024,deg=16,seed=1``.
    fpgas, pes : int
        FPGAs and PEs per FPGA.
    arch : str (one of gravfm.architectures.ARCHITECTURES)
    partition : str
        ``greedy``, ``round_robin``, ``metis`` ...
    edge_memory : {"onchip", "offchip"}
    platform : str
    root : int, optional
        BFS root; None: the vertex of highest out-degree (vertex 0 of an RMAT graph may be isolated).
    link_scale : float
        Multiplies the platform's FPGA-to-FPGA bandwidths (the simulated links and the model):
        with fewer PEs per FPGA than the paper's 9, ``pes / 9`` keeps its ratio of computation
        to network bandwidth per FPGA.
    local_bits, edges_per_pe, max_rounds : int, optional
        PE capacities (:class:`~gravfm.flow.RunOptions`, its ``hardware`` for ``max_rounds``);
        None: the graph's needs rounded up to powers of two. Set so that points of several graphs
        share one build.
    """

    algorithm: str
    graph: str
    fpgas: int = 1
    pes: int = 1
    arch: str = DEFAULT_ARCHITECTURE
    partition: str = "greedy"
    edge_memory: str = "offchip"
    platform: str = "ac510x4"
    root: int | None = None
    link_scale: float = 1.0
    local_bits: int | None = None
    edges_per_pe: int | None = None
    max_rounds: int | None = None

    def key(self):
        """Content key: a hash of :data:`POINT_SCHEMA` and every field not at its default (so a
        field added later keeps the keys of earlier points), 16 hex digits."""
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                 if f.default is dataclasses.MISSING or getattr(self, f.name) != f.default}
        text = json.dumps({"schema": POINT_SCHEMA, **given}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data):
        return cls(**data)

    def hardware(self):
        """The :class:`~gravfm.hw.SystemConfig` fields the point sets beyond the plan's rules."""
        return {} if self.max_rounds is None else {"max_rounds": self.max_rounds}

    def label(self):
        """Short human-readable name (progress display, errors)."""
        return (f"{self.algorithm} {self.graph} {self.fpgas}x{self.pes} {self.arch} {self.partition} "
                f"{self.edge_memory}" + (f" links x{self.link_scale:.3g}" if self.link_scale != 1.0 else ""))

    def platform_object(self):
        """The platform of the point, its links scaled by ``link_scale``."""
        return scaled_network(load_platform(self.platform), self.link_scale)


def scaled_network(platform, factor):
    """``platform`` with its FPGA-to-FPGA bandwidths multiplied by ``factor``."""
    if factor == 1.0:
        return platform
    network = platform.network
    network = dataclasses.replace(
        network, send_gib_s_by_peers=tuple(v * factor for v in network.send_gib_s_by_peers),
        receive_gib_s_by_peers=tuple(v * factor for v in network.receive_gib_s_by_peers),
        total_bandwidth_gib_s=network.total_bandwidth_gib_s * factor)
    scaled = dataclasses.replace(platform, network=network)
    object.__setattr__(scaled, "origin", platform.origin)  # frozen; the file, for error messages
    return scaled


def point_root(point, algorithm):
    """The BFS root the point uses (None for algorithms without one)."""
    if "root" not in algorithm.default_params:
        return None
    if point.root is not None:
        return point.root

    return load_graph(point.graph).hub()


def _superstep_model(report):
    """The run's superstep-aware prediction (:func:`gravfm.flow.readings.superstep_model`: the
    generated design's, else the platform's) in MTEPS, with the per-superstep latency in cycles;
    None when there is nothing to predict."""
    model = report.superstep_model
    if not model or not report.messages:
        return None
    chosen = model[model["source"]]
    mteps = sum(report.prepared.reference.messages_per_superstep) / chosen["cycles"] * report.f_clk_hz / 1e6
    return {"kind": "prediction", "source": model["source"], "mteps": mteps,
            "latency_cycles": chosen.get("latency_cycles"),
            "latency_bound_supersteps": chosen.get("latency_bound_supersteps")}


def run_point(point, *, cache_dir=None, threads=1):
    """Run ``point`` through :func:`gravfm.flow.run`; return its JSON-ready result (never raises).

    Returns
    -------
    dict
        ``key``, ``point`` (the configuration), ``status`` (``ok`` or ``failed``), ``wall_s``,
        ``git_revision``; when ok also ``verified``, ``measured`` (simulation figures),
        ``model`` (the analytical prediction for the same configuration, labelled so),
        ``build_key`` and ``run`` (the run's full report, :meth:`RunReport.to_dict`); when failed
        ``error`` (one line) and ``traceback``.
    """
    start = time.monotonic()
    result = {"key": point.key(), "point": point.to_dict(), **git_state(PACKAGE_PARENT)}
    try:
        result.update(_measure(point, cache_dir=cache_dir, threads=threads))
        result["status"] = "ok"
    except Exception as error:  # a failed point is a result too: the sweep goes on
        result.update(status="failed", error=f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}",
                      traceback=traceback.format_exc(limit=8))
    result["wall_s"] = time.monotonic() - start
    return result


def _measure(point, *, cache_dir, threads):
    algorithm = get_algorithm(point.algorithm)
    root = point_root(point, algorithm)
    platform = point.platform_object()
    report = run(RunOptions(algorithm=point.algorithm, graph=point.graph, fpgas=point.fpgas, pes=point.pes,
                            platform=platform, partition=point.partition, root=root, arch=point.arch,
                            edge_memory=point.edge_memory, local_bits=point.local_bits,
                            edges_per_pe=point.edges_per_pe, hardware=point.hardware(), cache_dir=cache_dir,
                            threads=threads))
    full = report.to_dict()
    platform = platform_for_run(platform, edge_memory_of(point.edge_memory, platform), {})
    measured = {"kind": "measured (Verilator simulation of the generated RTL)", "status": report.status,
                "verified": report.verified, "detail": report.check_detail, "cycles": report.cycles,
                "messages": report.messages, "supersteps": report.supersteps, "mteps": report.mteps,
                "cpe": full["cpe"], "vertices": report.vertices, "edges": report.edges, "root": root,
                "link": _link_summary(report, platform), "memory": full["memory"]}
    model = {**full["model"], "supersteps": _superstep_model(report),
             "hardware_sizes": _hardware_sized_model(report, platform)}
    model.pop("detail", None)
    model["limits_mteps"] = (full["model"]["detail"] or {}).get("limits_mteps", {})
    return {"verified": report.verified, "measured": measured, "model": model, "build_key": report.build_key,
            "sim": full["sim"], "per_superstep": full["per_superstep"]}


def _hardware_sized_model(report, platform):
    """The model's prediction with the simulated hardware's own sizes (its vertex ids, not the
    paper's 32 bits) in m_update and m_message, on the same platform: what the model expects of
    the machine simulated."""
    config = report.plan.config
    params = params_for_algorithm(report.prepared.algorithm, vertexid_bits=config.vertexid_bits)
    if not report.vertices or not report.edges:
        return None
    try:
        fanout = report.prediction.details.get("update_fanout") if report.prediction is not None else None
        prediction = predict(platform, params, report.vertices, report.edges, fpgas=config.fpgas,
                             pes=config.pes_per_fpga, arch=config.arch, update_fanout=fanout,
                             update_lanes=config.pe.update_lanes, link_lanes=config.network.link_lanes)
    except GravfmError:  # as the run's own model: no prediction, the run still stands
        return None
    return {"kind": "prediction", "mteps": prediction.t_sys_mteps, "bottleneck": prediction.bottleneck,
            "limits_mteps": {k: v / 1e6 for k, v in prediction.limits.items()},
            "m_update": params.m_update, "m_message": params.m_message}


def _link_summary(report, platform):
    """Measured link figures: bytes sent and received by each FPGA and GiB/s over the run, beside
    the two limits of a simulated link (its bandwidth setting, from the platform file, and its
    one item per cycle), each per FPGA: ``(n-1)`` links."""
    from ..hw.link import LinkConfig  # deferred: Amaranth (heavy)

    links = report.links
    if not links:
        return None
    seconds, n = report.seconds, report.fpgas
    sent, received, bound = [0.0] * n, [0.0] * n, [0] * n
    for row in links["per_link"]:
        sent[row["from"]] += row["bytes"]
        received[row["to"]] += row["bytes"]
        bound[row["from"]] += row["link_bound_cycles"]
    gib, f_clk = 2 ** 30, mhz_to_hz(platform.fpga.f_clk_mhz)
    per_cycle = LinkConfig.from_platform(platform, n).bits_per_cycle
    return {"bytes": links["bytes"], "items": links["items"], "item_bits": links["item_bits"],
            "bytes_per_edge": links["bytes_per_edge"], "bytes_per_edge_theory": links["bytes_per_edge_theory"],
            "link_bound_cycles": links["link_bound_cycles"],
            "link_bound_share": [b / ((n - 1) * report.cycles) if report.cycles else 0.0 for b in bound],
            "send_gib_s": [b / seconds / gib for b in sent], "receive_gib_s": [b / seconds / gib for b in received],
            "setting_gib_s": (n - 1) * per_cycle * f_clk / 8 / gib,
            "item_rate_gib_s": (n - 1) * links["item_bits"] * f_clk / 8 / gib}
