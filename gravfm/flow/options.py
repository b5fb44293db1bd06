"""What to run: :class:`RunOptions`, checked when made."""

import dataclasses
from dataclasses import dataclass, field

from ..architectures import ARCHITECTURES, DEFAULT_ARCHITECTURE, built_architecture_info
from ..errors import ConfigError
from ..sim.build_cache import check_cache_root
from ..sim.trace import TraceRequest
from .memory import EDGE_MEMORIES, check_memory_options
from .planning import HARDWARE_OPTIONS
from .simulation import BACKENDS

__all__ = ["RunOptions", "DEFAULT_PLATFORM", "ARCHITECTURES", "GRAPH_OPTIONS"]

DEFAULT_PLATFORM = "ac510x4"
#: Keywords of gravfm.graph.load_graph that RunOptions.graph_options may set.
GRAPH_OPTIONS = ("fmt", "self_loops", "duplicates", "relabel", "undirected")


def _positive(name, value, *, optional=False, zero=False):
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if zero else 1):
        kind = "non-negative" if zero else "positive"
        raise ConfigError(f"{name} must be a {kind} integer, not {value!r}")


@dataclass(frozen=True)
class RunOptions:
    """What to run.

    Parameters
    ----------
    algorithm, graph
        As :func:`gravfm.flow.prepare` takes them (names, specs or objects).
    fpgas, pes : int
        FPGAs and PEs per FPGA.
    platform : str
        Platform name or file: its clock converts cycles to seconds, its links join the FPGAs
        (unless ``link``), and the model predicts for it.
    partition : str, optional
        Partitioning method (``greedy``, ``sorted_greedy``, ``round_robin``, ``metis``); by
        default the architecture's (:attr:`~gravfm.architectures.ArchitectureInfo.default_partition`).
    root : int, optional
        Root vertex (algorithms with a ``root`` parameter, e.g. BFS), the input's id of it (a
        file's own id, also when its ids were relabelled).
    params : dict, optional
        Further runtime parameters of the algorithm (``root`` overrides its entry).
    backend : {"verilator", "amaranth"} or a back-end object
        See :mod:`gravfm.flow.simulation`.
    local_bits, edges_per_pe : int, optional
        Capacities of a PE; by default the graph's needs rounded up to powers of two, so similar
        graphs share a build (:mod:`gravfm.flow.planning`).
    max_cycles : int, optional
        Stop the simulation after this many cycles.
    watchdog_cycles : int
        Stop a run that makes no progress for this many cycles (it is reported as a deadlock).
    cache_dir : str, optional
        Build cache folder (default ``$GRAVFM_CACHE`` or ``$XDG_CACHE_HOME/gravfm``).
    threads : int, optional
        Compiled simulation of several FPGAs: threads advancing the FPGA models (default: the
        machine's cores, at most the FPGAs); the results do not depend on it.
    arch : str (one of gravfm.architectures.ARCHITECTURES)
        GraVF-M (broadcast updates) or the GraVF baseline (unicast messages, one per edge).
    update_lanes : int, optional
        Updates a GraVF-M PE takes per cycle (1 or 2); by default the plan's rule.
    gather_forwarding : bool
        Forward in-flight gather results to later messages for the same vertex (combinational
        gather kernels only; :mod:`gravfm.hw.pe.gather_forward`). False: messages wait in the
        hazard unit, as in the paper.
    hub_degree : int, optional
        Hybrid: the senders of more than this many out-edges are hubs, whose updates every
        scatter unit of their FPGA takes (:func:`gravfm.flow.planning.with_hubs`).
    hardware : dict
        Further :class:`~gravfm.hw.SystemConfig` fields (``hazard_slots``, FIFO depths,
        ``max_rounds``; :data:`gravfm.flow.planning.HARDWARE_OPTIONS`).
    graph_options : dict
        Cleaning options of :func:`gravfm.graph.load_graph` for a graph given by name
        (:data:`GRAPH_OPTIONS`: ``fmt``, ``self_loops``, ``duplicates``, ``relabel``, ``undirected``).
    link : gravfm.hw.link.LinkConfig, optional
        Several FPGAs: the simulated links (default: the platform's).
    use_filter : bool
        Several FPGAs (GraVF-M): the neighbor filter in front of each link.
    edge_memory : {"onchip", "offchip"}, optional
        Where the PEs keep their edges (default: the platform's ``[memory] edge_storage``).
    memory : dict
        Off-chip edges: overrides of the platform's memory figures and the simulated memory's
        faults (:data:`gravfm.flow.memory.MEMORY_OPTIONS`).
    check_kernels : bool
        Bench each kernel alone against the kernel contract before the build
        (:func:`gravfm.flow.elaboration.check_kernels`; ``gravfm run --no-kernel-check``).
    link_options : dict
        Several FPGAs: :class:`~gravfm.hw.link.LinkConfig` fields that replace those of ``link``
        (or of the platform's links): bandwidth, latency, FIFO depth, reordering, stalls, faults,
        dead links, the link check (``gravfm run --link-*``).
    trace : gravfm.sim.trace.TraceRequest, optional
        Dump the run's waveform (compiled back-end only; ``gravfm run --trace``).
    """

    algorithm: object
    graph: object
    fpgas: int = 1
    pes: int = 1
    platform: str = DEFAULT_PLATFORM
    partition: str | None = None
    root: int | None = None
    params: dict | None = None
    backend: object = "verilator"
    local_bits: int | None = None
    edges_per_pe: int | None = None
    max_cycles: int | None = None
    watchdog_cycles: int = 1 << 20
    cache_dir: str | None = None
    threads: int | None = None
    arch: str = DEFAULT_ARCHITECTURE
    update_lanes: int | None = None
    gather_forwarding: bool = True
    hub_degree: int | None = None
    hardware: dict = field(default_factory=dict)
    graph_options: dict = field(default_factory=dict)
    link: object = None
    use_filter: bool = True
    edge_memory: str | None = None
    memory: dict = field(default_factory=dict)
    check_kernels: bool = True
    link_options: dict = field(default_factory=dict)
    trace: object = None

    def __post_init__(self):
        _positive("fpgas", self.fpgas)
        if not isinstance(self.check_kernels, bool):
            raise ConfigError(f"check_kernels must be true or false, not {self.check_kernels!r}")
        _positive("pes", self.pes)
        # an unknown name, or one without hardware: one line
        info = built_architecture_info(self.arch)
        lanes = info.max_update_lanes
        if self.partition is None:
            object.__setattr__(self, "partition", info.default_partition)
        if info.power_of_two_pes and self.pes & (self.pes - 1):
            raise ConfigError(f"--pes {self.pes}: the {info.title} architecture needs a power of two PEs per FPGA "
                              f"(its message network routes by the PE bits)")
        if self.update_lanes is not None and (isinstance(self.update_lanes, bool) or
                                              self.update_lanes not in range(1, lanes + 1)):
            raise ConfigError(f"update_lanes must be 1 .. {lanes} with the {self.arch} architecture, "
                              f"not {self.update_lanes!r}")
        _positive("hub_degree", self.hub_degree, optional=True, zero=True)
        if self.hub_degree is not None and not info.has_hub_path:
            raise ConfigError(f"--hub-degree {self.hub_degree}: the {info.title} architecture has no hub path "
                              f"(the hybrid's: --arch hybrid)")
        if isinstance(self.backend, str) and self.backend not in BACKENDS:
            raise ConfigError(f"unknown backend {self.backend!r} (known: {', '.join(BACKENDS)})")
        if not isinstance(self.backend, str) and not hasattr(self.backend, "simulate"):
            raise ConfigError(f"backend must be a name or have a simulate method, not {self.backend!r}")
        if self.backend == "verilator":
            check_cache_root(self.cache_dir)  # before any work: an unusable cache is one line, not a lost run
        _positive("edges_per_pe", self.edges_per_pe, optional=True)
        _positive("local_bits", self.local_bits, optional=True, zero=True)
        _positive("max_cycles", self.max_cycles, optional=True)
        if self.watchdog_cycles < 1:
            raise ConfigError(f"watchdog_cycles must be positive, not {self.watchdog_cycles!r}")
        unknown = sorted(set(self.graph_options) - set(GRAPH_OPTIONS))
        if unknown:
            raise ConfigError(f"unknown graph option {unknown[0]!r} (known: {', '.join(GRAPH_OPTIONS)})")
        if self.edge_memory not in (None, *EDGE_MEMORIES):
            raise ConfigError(f"edge memory must be one of {', '.join(EDGE_MEMORIES)}, not {self.edge_memory!r}")
        check_memory_options(self.memory)
        unknown = sorted(set(self.hardware) - set(HARDWARE_OPTIONS))
        if unknown:
            raise ConfigError(f"unknown hardware option {unknown[0]!r} (known: {', '.join(HARDWARE_OPTIONS)})")
        self._check_link_options()
        if self.trace is not None:
            if not isinstance(self.trace, TraceRequest):
                raise ConfigError(f"trace must be a TraceRequest, not {self.trace!r}")

    def _check_link_options(self):
        """Link options that make no link, or no sense, refused before any work."""
        # deferred: Amaranth (heavy)
        from ..hw.link.config import LinkConfig

        if not self.link_options:
            return
        if self.fpgas == 1:
            raise ConfigError(f"link options ({', '.join(sorted(self.link_options))}) need several FPGAs (--fpgas 2 "
                              f"or more)")
        known = {f.name for f in dataclasses.fields(LinkConfig)}
        unknown = sorted(set(self.link_options) - known)
        if unknown:
            raise ConfigError(f"unknown link option {unknown[0]!r} (known: {', '.join(sorted(known))})")
        link = LinkConfig(**self.link_options) if self.link is None else dataclasses.replace(self.link, **self.link_options)
        link.check_fpgas(self.fpgas)

    @property
    def algorithm_params(self):
        """``params`` with ``root`` in it (when given)."""
        given = dict(self.params or {})
        if self.root is not None:
            given["root"] = self.root
        return given
