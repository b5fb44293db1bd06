"""The paper's experiments (GraVF-M, TRETS 2019, section 6), one definition each.

An :class:`Experiment` names its points for ``--quick`` and ``--full`` (:class:`Sizes`), how to
draw them (:mod:`gravfm.reproduce.plots`) and how to check the paper's claim against them
(:mod:`gravfm.reproduce.claims`). This module is the one place a sweep is defined: the CLI
(``gravfm reproduce``) and ``benchmarks/bench_scaling.py`` both take their points from here.
"""

import dataclasses
import functools
from dataclasses import dataclass

from ..architectures import GRAVF, GRAVFM
from ..errors import ConfigError
from .plan import needs
from .points import Point

__all__ = ["Experiment", "Sizes", "SIZES", "EXPERIMENTS", "ALGORITHMS", "select", "points_of", "scaling_points"]

#: The paper's three algorithms, in its panel order.
ALGORITHMS = ("wcc", "bfs", "pagerank")


#: The architectures the paper compares (its Figs. 7 and 8): the experiments reproduce those, not
#: every architecture gravfm builds (the hybrid is compared by ``gravfm model`` and its benchmarks).
PAPER_ARCHITECTURES = (GRAVFM.name, GRAVF.name)


@dataclass(frozen=True)
class Sizes:
    """The sizes one mode uses (``--quick`` keeps builds and simulations small)."""
    mode: str
    scale: int            # uniform and RMAT graphs: 2**scale vertices
    degree: int           # their average degree (edge factor)
    pes: int              # PEs per FPGA on multi-FPGA points (the paper: 9)
    fpgas: tuple          # FPGA counts of the scaling figures
    pe_counts: tuple      # PE counts of the single-FPGA figures (8, 12)
    degrees: tuple        # fig9's average degrees
    wd: tuple             # fig11's (w, d) pairs, w * d constant
    wd_degree: int
    road: str
    peak_graph: str       # table3: the social-like graph of edge factor 32
    fig8_degree: int = None  # fig8's graph: GraVF-M's cost shows at few edges per update and PE (paper: 32 / 8)
    id_bits: int = 32     # about the simulated designs' vertex ids (the paper's, and the model's, are 32 bits)
    share_builds: bool = False  # points of one hardware structure get one capacity: one build

    @property
    def link_scale(self):
        """FPGA-to-FPGA bandwidth factor of the multi-FPGA points: ``pes / 9`` keeps the paper's
        ratio of computation (9 PEs per FPGA) to network bandwidth when an FPGA has fewer PEs, and
        ``id_bits / 32`` its ratio of item size to bandwidth when the ids are narrower than the
        paper's 32 bits (a link item is ids and payload; the model prices the paper's sizes)."""
        return self.pes / 9 * self.id_bits / 32

    def links(self, fpgas):
        return self.link_scale if fpgas > 1 else 1.0

    def uniform(self, degree=None):
        return f"uniform:n={1 << self.scale},deg={degree or self.degree},seed=1"

    def rmat(self):
        return f"rmat:scale={self.scale},ef={self.degree},seed=1"

    def describe(self):
        return (f"uniform/RMAT graphs of 2^{self.scale} vertices, degree {self.degree}; {self.pes} PEs per FPGA "
                f"on 1..4 FPGAs ({', '.join(map(str, self.fpgas))}); single-FPGA PE counts "
                f"{', '.join(map(str, self.pe_counts))} (fig8 on degree {self.fig8_degree or self.degree}); fig9 degrees {', '.join(map(str, self.degrees))}; "
                f"fig11 (w, d) {', '.join(f'{w}x{d}' for w, d in self.wd)} (degree {self.wd_degree}); "
                f"road graph {self.road}; table3 graph {self.peak_graph}; FPGA-to-FPGA bandwidth x{self.link_scale:.3g} "
                f"(= {self.pes}/9 PEs x {self.id_bits}/32 id bits) on multi-FPGA points except table2's"
                + ("; points of one hardware structure share the largest capacity any of them needs (one build)"
                   if self.share_builds else ""))


SIZES = {
    # One build per hardware structure (share_builds); fig8 at 2 PEs only, on a graph of degree 4 so
    # that a PE's edges per update are the paper's at 8 PEs (4 to 8, it has 32 / 8); fig11's deepest graph
    # has 32 ranks so that its round log is the others' (64 rounds); the quick designs' vertex
    # ids are 10-12 bits, hence id_bits 12.
    "quick": Sizes(mode="quick", scale=10, degree=16, pes=2, fpgas=(1, 2, 4), pe_counts=(2,),
                   degrees=(4, 16, 64), wd=((1024, 1), (256, 4), (64, 16), (32, 32)), wd_degree=8,
                   road="road-minnesota.mtx", peak_graph="uniform:n=1024,deg=16,seed=1", fig8_degree=4, id_bits=12,
                   share_builds=True),
    # The paper's layout: 9 PEs per FPGA, 1-4 FPGAs, 1/2/4/8 PEs, degrees 2-64, w x d = 16384.
    # table3's social-like graph (edge factor 32) is RMAT scale 18: the largest whose 4 x 9 run
    # finishes in about 10 minutes on a 2-core machine (benchmarks/results/bench_offchip_scale_s18.json);
    # the platform's HMC holds far larger ones (scale 20 ran in 75 minutes), at hours per point.
    "full": Sizes(mode="full", scale=16, degree=32, pes=9, fpgas=(1, 2, 3, 4), pe_counts=(1, 2, 4, 8),
                  degrees=(2, 4, 8, 16, 32, 64),
                  wd=((16384, 1), (4096, 4), (1024, 16), (256, 64), (64, 256)), wd_degree=64,
                  road="road-luxembourg-osm.mtx.gz", peak_graph="rmat:scale=18,ef=32,seed=1", share_builds=True),
}


@dataclass(frozen=True)
class Experiment:
    """One figure or table of the paper.

    ``points(sizes)`` lists its points; ``plot`` and ``check`` name functions of
    :mod:`~gravfm.reproduce.plots` and :mod:`~gravfm.reproduce.claims` taking the experiment and
    its results (dicts of :func:`~gravfm.reproduce.points.run_point`).
    """
    name: str
    title: str
    claim: str
    points: object
    plot: str
    check: str
    paper: dict = None     # the paper's figures to draw and print beside ours
    note: str = ""         # how this reproduction differs from the paper's experiment

    def __post_init__(self):
        object.__setattr__(self, "paper", self.paper or {})


def scaling_points(*, graphs, algorithms=ALGORITHMS, archs=PAPER_ARCHITECTURES, fpgas, pes, link_scale=1.0,
                   edge_memory="offchip", partition="greedy", platform="ac510x4"):
    """The scaling study: every algorithm x architecture x FPGA count x graph (fig7's points, and
    ``benchmarks/bench_scaling.py``'s at its scale, PEs, platform and edge memory); the links of
    multi-FPGA points scaled by ``link_scale``."""
    return [Point(a, g, fpgas=n, pes=pes, arch=arch, partition=partition, edge_memory=edge_memory, platform=platform,
                  link_scale=link_scale if n > 1 else 1.0)
            for a in algorithms for arch in archs for n in fpgas for g in graphs]


def _fig7(s):
    return scaling_points(graphs=[s.uniform()], fpgas=s.fpgas, pes=s.pes, link_scale=s.link_scale)


def _fig8(s):
    return [Point(a, s.uniform(s.fig8_degree), fpgas=1, pes=p, arch=arch, edge_memory=memory) for a in ALGORITHMS
            for arch in PAPER_ARCHITECTURES for memory in ("offchip", "onchip") for p in s.pe_counts]


def _fig9(s):
    return [Point(a, s.uniform(degree), fpgas=4, pes=s.pes, link_scale=s.links(4)) for a in ALGORITHMS
            for degree in s.degrees]


def _road(s):
    return [Point(a, s.road, fpgas=4, pes=s.pes, link_scale=s.links(4)) for a in ALGORITHMS]


def _fig11(s):
    return [Point("bfs", f"wd:w={w},d={d},deg={s.wd_degree},seed=1", fpgas=4, pes=s.pes, root=0,
                  link_scale=s.links(4)) for w, d in s.wd]


def _fig12(s):
    return [Point(a, s.rmat(), fpgas=1, pes=p, partition=method) for a in ALGORITHMS
            for method in ("round_robin", "greedy") for p in (s.pe_counts if s.mode == "full" else (2, 4))]


def _fig13(s):
    fpgas = s.fpgas if s.mode == "full" else (2, 4)
    return [Point(a, s.rmat(), fpgas=n, pes=s.pes, partition=method, link_scale=s.links(n)) for a in ALGORITHMS
            for method in ("greedy", "metis") for n in fpgas]


#: table2's graph: PageRank sends one message per edge in each of its 30 supersteps.
TABLE2_GRAPH = "uniform:n=2048,deg=32,seed=1"


def _table2(s):
    # A saturating link benchmark: GraVF PageRank (one message per edge, every superstep) with
    # 2n PEs per FPGA, so that each FPGA makes ~1.4 messages per cycle for each of its n-1 links
    # (CPE 1.42, (n-1)/n of the edges cross): the links, not the PEs, are the limit. Links at
    # the platform's bandwidth, and at a quarter of it (the rate gate binds, not the item rate).
    return [Point("pagerank", TABLE2_GRAPH, fpgas=n, pes=2 * n, arch=GRAVF.name, link_scale=scale)
            for scale in (1.0, 0.25) for n in (2, 3, 4)]


def _table3(s):
    return [Point(a, s.peak_graph, fpgas=4, pes=s.pes, link_scale=s.links(4)) for a in ALGORITHMS]


EXPERIMENTS = {e.name: e for e in (
    Experiment("fig7", "GraVF-M vs GraVF on 1-4 FPGAs (uniform graph, HMC edges)",
               "GraVF-M is 2.x-3.x times faster than GraVF on 4 FPGAs", _fig7, "fig7", "fig7",
               note="the paper's GraVF is network-bound on 4 FPGAs. --quick keeps that regime by scaling the links "
                    "(Sizes.link_scale: pes/9 for the PEs, id_bits/32 because the quick designs' vertex ids, hence "
                    "link items, are ~12 bits where the paper's are 32); the predicted ratio is the model's with "
                    "the simulated hardware's item sizes on the same links"),
    Experiment("fig8", "GraVF-M vs GraVF on one FPGA, 1-8 PEs, BRAM vs HMC edges",
               "on one FPGA with BRAM GraVF-M is slower than GraVF; with HMC it regains a large part",
               _fig8, "fig8", "fig8"),
    Experiment("fig9", "GraVF-M on 4 FPGAs, uniform graphs of average degree 2-64",
               "throughput grows with the average degree; at degree 64 the computation limit is reached "
               "before the network limit", _fig9, "fig9", "fig9"),
    Experiment("road", "road network (average degree ~2-3) on 4 FPGAs",
               "a road network gains little: 182 (BFS) / 720 (PR) / 663 (WCC) MTEPS on 4 x 9, BFS the lowest",
               _road, "road", "road", paper={"bfs": 182, "pagerank": 720, "wcc": 663},
               note="the paper's graph is a subgraph of the Pennsylvania road network (SNAP), not packaged here; "
                    "ours are the packaged Minnesota (quick) and Luxembourg (full) road networks"),
    Experiment("fig11", "superstep latency: w x d graphs, BFS on 4 FPGAs",
               "latency becomes significant below ~2k active vertices per superstep (4 x 9 PEs, HMC)",
               _fig11, "fig11", "fig11",
               note="the knee's position depends on the system's size and superstep latency: the paper's ~2k "
                    "active vertices is for 4 x 9 PEs and |V| = 16k"),
    Experiment("fig12", "round-robin vs greedy edge-based partitioning, 1 FPGA, RMAT",
               "greedy shows a slight advantage; round-robin is not significantly poorer", _fig12, "fig12", "fig12"),
    Experiment("fig13", "greedy edge-based vs METIS partitioning, 1-4 FPGAs, RMAT",
               "greedy is within 5% of METIS", _fig13, "fig13", "fig13"),
    Experiment("table2", "network bandwidth per FPGA when sending to 1/2/3 peers",
               "send = receive = 2.79 / 5.59 / 5.85 GiB/s per FPGA for 2 / 3 / 4 FPGAs", _table2, "table2", "table2",
               paper={2: 2.79, 3: 5.59, 4: 5.85},
               note="the paper measured PCIe streams; our links are a simulated model whose bandwidth IS the "
                    "platform file's Table 2 figure (its input), so this checks that the simulated links deliver "
                    "what the platform file says, not the PCIe hardware. A simulated link also moves at most one "
                    "item per cycle: with items narrower than a cycle's bandwidth (here) that binds first, so the "
                    "points at a quarter of the bandwidth show the bandwidth gate itself"),
    Experiment("table3", "peak throughput on 4 FPGAs",
               "GraVF-M 5791 (WCC) / 5493 (BFS) / 4623 (PR) MTEPS, 94% of the model's limit; ForeGraph "
               "1727 / 1458 / 1856", _table3, "table3", "table3",
               paper={"wcc": (5791, 1727), "bfs": (5493, 1458), "pagerank": (4623, 1856)},
               note="ForeGraph's figures are the paper's (simulated by ForeGraph's authors), not re-measured; the "
                    "paper's graph is a social graph of edge factor 32 whose size it does not state, ours (full) an "
                    "RMAT graph of scale 18, the largest whose 4 x 9 run takes minutes here"),
)}


def select(names):
    """The experiments named (``all`` for every one), in the registry's order; an unknown name is
    a :class:`~gravfm.errors.ConfigError` naming it."""
    names = list(names) or ["all"]
    for name in names:
        if name != "all" and name not in EXPERIMENTS:
            raise ConfigError(f"unknown experiment {name!r} (known: all, {', '.join(EXPERIMENTS)})")
    return [e for e in EXPERIMENTS.values() if "all" in names or e.name in names]


def points_of(experiment, mode, *, shared=None, cache_dir=None):
    """The experiment's points in ``mode`` (``quick`` or ``full``), without repeats; with
    ``shared`` (default: the mode's ``share_builds``) each carries its structure's shared
    capacities (:func:`shared_capacities`, whose probes are kept in ``cache_dir`` when given)."""
    if mode not in SIZES:
        raise ConfigError(f"mode must be one of {', '.join(SIZES)}, not {mode!r}")
    points = list(dict.fromkeys(experiment.points(SIZES[mode])))
    if not (SIZES[mode].share_builds if shared is None else shared):
        return points
    capacity = shared_capacities(mode, None if cache_dir is None else str(cache_dir))
    return list(dict.fromkeys(dataclasses.replace(p, **capacity[structure(p)]) for p in points))


def structure(point):
    """What decides a point's hardware besides its capacities (the graph, the partition and the
    links' bandwidth do not enter the build)."""
    return point.algorithm, point.arch, point.fpgas, point.pes, point.edge_memory, point.platform


@functools.cache
def shared_capacities(mode, cache_dir=None):
    """``{structure: {"local_bits": ., "edges_per_pe": ., "max_rounds": .}}``: the largest needs of the points of
    every experiment in ``mode`` with that structure, so that one build serves all of them
    whichever experiments are run (the same points, the same keys). The full sizes' needs take
    minutes to find: pass ``cache_dir`` to keep them (:func:`~gravfm.reproduce.plan.probe`)."""
    capacity = {}
    for experiment in EXPERIMENTS.values():
        for point in experiment.points(SIZES[mode]):
            old = capacity.get(structure(point), {})
            capacity[structure(point)] = {k: max(v, old.get(k, 0)) for k, v in needs(point, cache_dir).items()}
    return capacity
