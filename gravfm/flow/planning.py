"""Stage 2, plan: the partition and the hardware configuration, with every sizing rule.

Capacities come from the graph's needs rounded up to powers of two, so that similar graphs map
to the same hardware and share a build; the round log holds a power of two of rounds (at least
64) for the same reason. The structural defaults (update lanes, FIFO depths) depend on the
system's size only. Explicit capacities and :class:`~gravfm.hw.SystemConfig` fields override the
rules (tests size tiny builds; benchmarks share one build across graphs). Synthesis uses
:func:`system_config` and :func:`stated_capacity` for graphs it does not hold.
"""

import math
from dataclasses import dataclass, field

from ..architectures import DEFAULT_ARCHITECTURE, LARGE_SYSTEM_PES, architecture_info
from ..errors import ConfigError
from ..hw import SystemConfig
from ..partition import Partition, bits_for_count, edge_stores, partition as make_partition, update_fanout
from ..validate import check_integer
from .memory import image_bytes, words_per_pass

__all__ = ["Plan", "plan", "system_config", "graph_capacities", "choose_capacities", "stated_capacity",
           "stated_vertexid_bits",
           "next_power_of_two", "default_max_rounds", "default_update_lanes", "default_network_fifo_depth",
           "default_link_fifo_depth", "LARGE_SYSTEM_PES", "HARDWARE_OPTIONS"]

#: :class:`~gravfm.hw.SystemConfig` fields a plan may set beyond the ones it chooses.
HARDWARE_OPTIONS = ("message_fifo_depth", "network_fifo_depth", "link_fifo_depth", "link_lanes", "hazard_slots",
                    "round_bits", "max_rounds", "hub_path")


@dataclass(frozen=True)
class Plan:
    """Where every vertex goes and what hardware holds it.

    Attributes
    ----------
    partition : gravfm.partition.Partition
    config : gravfm.hw.SystemConfig
    memory_bytes : tuple of int, optional
        Off-chip edges: bytes of each FPGA's memory image.
    memory_words_per_pass : tuple of int, optional
        Off-chip edges: memory words each FPGA reads in a pass with every vertex active
        (:func:`gravfm.flow.memory.words_per_pass`), the layout the model's L_mem is told about.
    update_fanout : float, optional
        Several FPGAs, GraVF-M: the mean number of other FPGAs an update goes to through the
        neighbour filter (:func:`gravfm.partition.update_fanout`), the fan-out the model's link
        limits are told about.
    memory_channels : int
        Off-chip edges: pseudo-channels of each FPGA's memory, each PE's edges in one
        (:mod:`gravfm.sim.memory_image`); 1 for one memory.
    """

    partition: object = field(repr=False)
    config: object
    memory_bytes: tuple | None = None
    memory_words_per_pass: tuple | None = None
    update_fanout: float | None = None
    memory_channels: int = 1


def next_power_of_two(value):
    """Smallest power of two >= ``value`` (1 for values below 1)."""
    return 1 << max(0, int(value) - 1).bit_length()


def default_max_rounds(supersteps):
    """Round-log depth: the supersteps rounded up to a power of two, at least 64."""
    return max(64, next_power_of_two(supersteps))


def default_update_lanes(arch, fpgas, pes_per_fpga):
    """Two update lanes for a GraVF-M system of :data:`LARGE_SYSTEM_PES` PEs or more, else one.

    Every PE sees every update that reaches its FPGA but holds only the edges to its own
    vertices, about ``|E| / (|V| n p)`` per update: once ``n p`` nears the average degree a PE
    taking one update per cycle idles its edge pipeline. (A structural rule, so that the build
    does not depend on the graph.)
    """
    return architecture_info(arch).default_update_lanes(fpgas * pes_per_fpga)


def default_network_fifo_depth(fpgas, pes_per_fpga):
    """Per-(source, destination) network FIFO depth: 64 from :data:`LARGE_SYSTEM_PES` PEs on, else 4.

    A broadcast moves on when every destination took it, so shallow FIFOs lock the PEs into
    step and each waits for whichever is busiest at the moment. On a 2 x 9-PE system (WCC,
    uniform graph, 0.9 edges per PE per update) depth 4 -> 32 -> 128 gave CPE 1.25 -> 1.15 ->
    1.12 (128 with an 8-deep list queue); 64 is the compromise in LUT RAM.
    """
    return 64 if fpgas * pes_per_fpga >= LARGE_SYSTEM_PES else 4


def default_link_fifo_depth(fpgas, pes_per_fpga):
    """Per-(local PE, link) FIFO depth: 1024 (one block RAM) from :data:`LARGE_SYSTEM_PES` PEs on.

    A link takes one update per cycle from all the FPGA's PEs, which in an update-heavy superstep
    emit several per cycle; with shallow FIFOs each local update then waits for the link before
    the local PEs see it. On 2 x 9 PEs (BFS, RMAT scale 16, edge factor 32) the update-heavy
    superstep (35k updates, 396k edges) took 35.6k cycles with 64-deep link FIFOs, 32.0k with
    2048-deep ones, and 28.8k with 1024-deep ones and the neighbor filter moved in front of the
    link's merger (1 FPGA x 18 PEs: 27.6k).
    """
    return 1024 if fpgas > 1 and fpgas * pes_per_fpga >= LARGE_SYSTEM_PES else default_network_fifo_depth(
        fpgas, pes_per_fpga)


def choose_capacities(partition, edges_needed, *, local_bits=None, edges_per_pe=None, offchip=False):
    """PE capacities ``(local_bits, edges_per_pe)``: given ones checked, others from the graph.

    The graph's needs (most vertices on a PE, most edges in a PE's edge array, or off chip the
    longest edge list) are rounded up to powers of two so that similar graphs map to the same
    hardware and share a build. A refusal names the command line's option (``gravfm run
    --vertices-per-pe``) and the option of :class:`~gravfm.flow.RunOptions` it sets.
    """
    needed_bits = partition.min_local_bits
    if local_bits is None:
        local_bits = needed_bits
    elif local_bits < needed_bits:
        raise ConfigError(f"--vertices-per-pe {1 << local_bits} (local_bits={local_bits}) is too small: a PE holds "
                          f"up to {int(partition.vertices_per_pe.max()):,} vertices; use at least "
                          f"--vertices-per-pe {1 << needed_bits}")
    if edges_per_pe is None:
        edges_per_pe = next_power_of_two(max(1, edges_needed))
    elif edges_per_pe < edges_needed:
        what = ("with edges off chip it bounds one edge list, and the longest holds" if offchip
                else "a PE holds up to")
        raise ConfigError(f"--edges-per-pe {edges_per_pe} (edges_per_pe) is too small: {what} {edges_needed:,} "
                          f"edges; use at least --edges-per-pe {edges_needed}")
    return int(local_bits), int(edges_per_pe)


def graph_capacities(graph, partition, *, arch=DEFAULT_ARCHITECTURE, local_bits=None, edges_per_pe=None, offchip=False):
    """:func:`choose_capacities` for ``graph`` placed by ``partition``, and the edge stores.

    Edges per PE depend on the layout: GraVF-M stores edges at their destination's PE, the GraVF
    baseline at their source's. Off chip, ``edges_per_pe`` bounds one edge list (its length
    field), not a PE's edges.

    Returns
    -------
    (local_bits, edges_per_pe, stores)
    """
    bits = partition.min_local_bits if local_bits is None else max(local_bits, partition.min_local_bits)
    stores = edge_stores(graph, partition, bits, layout=arch)
    if offchip:
        edges_needed = max([int(store.length.max()) for store in stores if store.length.size] or [1])
    else:
        edges_needed = int(stores.edges_per_pe.max()) if len(stores) else 1
    return (*choose_capacities(partition, edges_needed, local_bits=local_bits, edges_per_pe=edges_per_pe,
                               offchip=offchip), stores)


def stated_capacity(vertices, edges, total_pes):
    """``(local_bits, edges_per_pe)`` for a graph of ``vertices`` and ``edges`` spread evenly over
    ``total_pes`` (a graph that is stated, not held: synthesis estimates)."""
    local_bits = max(1, math.ceil(math.log2(max(2, math.ceil(vertices / total_pes)))))
    return local_bits, max(2, math.ceil(edges / total_pes))


def stated_vertexid_bits(vertices, edges, total_pes):
    """Width of a hardware vertex id for a graph that is stated, not held (:func:`stated_capacity`):
    PE index bits and local index bits, as :class:`~gravfm.hw.SystemConfig` adds them."""
    local_bits, _ = stated_capacity(vertices, edges, total_pes)
    return bits_for_count(total_pes) + local_bits


def system_config(algorithm, *, fpgas, pes, local_bits, edges_per_pe, arch=DEFAULT_ARCHITECTURE, update_lanes=None,
                  gather_forwarding=True, edge_memory=None, **hardware):
    """The :class:`~gravfm.hw.SystemConfig` of these capacities, with the structural defaults.

    Parameters
    ----------
    update_lanes : int, optional
        Default :func:`default_update_lanes` (one lane with off-chip edges).
    edge_memory : dict, optional
        Off-chip edges: the PE's memory fields (:func:`gravfm.flow.memory.memory_hardware`).
    **hardware
        Further fields (:data:`HARDWARE_OPTIONS`); the FIFO depths default to
        :func:`default_network_fifo_depth` and :func:`default_link_fifo_depth`, the link lanes
        to the architecture's :meth:`~gravfm.architectures.ArchitectureInfo.default_link_lanes`.
    """
    unknown = sorted(set(hardware) - set(HARDWARE_OPTIONS))
    if unknown:
        raise ConfigError(f"unknown hardware option {unknown[0]!r} (known: {', '.join(HARDWARE_OPTIONS)})")
    hardware.setdefault("network_fifo_depth", default_network_fifo_depth(fpgas, pes))
    hardware.setdefault("link_fifo_depth", default_link_fifo_depth(fpgas, pes))
    hardware.setdefault("link_lanes", architecture_info(arch).default_link_lanes(fpgas, pes))
    edge_memory = dict(edge_memory or {})
    if update_lanes is None:
        # An off-chip PE looks up one edge index per cycle.
        update_lanes = architecture_info(arch).default_update_lanes(
            fpgas * pes, offchip=edge_memory.get("edge_memory") == "offchip")
    return SystemConfig.of(algorithm=algorithm, pes_per_fpga=pes, fpgas=fpgas, local_bits=local_bits,
                           edges_per_pe=edges_per_pe, arch=arch, update_lanes=update_lanes,
                           gather_forwarding=gather_forwarding, **edge_memory, **hardware)


def with_hubs(graph, partition, arch, hub_degree):
    """``partition`` with the hybrid's hub senders: those of more than ``hub_degree`` out-edges.

    A hub's update goes to every scatter unit of its FPGA and its edges there are dealt over
    them (:mod:`gravfm.hw.hybrid.network`), so that a superstep is not as long as its largest
    sender's edges on one unit: BFS on RMAT scale 18 at 1 x 64 PEs cannot go below 1.22 cycles
    per edge otherwise (``benchmarks/superstep_balance.py --hub-degree``). Each hub also costs
    every unit a cycle of update intake, so the degree should exceed the FPGA's units.
    """
    check_integer("plan", "hub_degree", hub_degree, low=0)
    if not architecture_info(arch).has_hub_path:
        raise ConfigError(f"--hub-degree {hub_degree}: the {arch} architecture has no hub path (the hybrid's)")
    return partition.with_hubs(graph.out_degree() > hub_degree)


def plan(prepared, *, fpgas=1, pes=1, partition=None, arch=DEFAULT_ARCHITECTURE, local_bits=None, edges_per_pe=None,
         update_lanes=None, gather_forwarding=True, edge_memory=None, memory_channels=1, hub_degree=None,
         **hardware):
    """Partition the prepared graph and size the hardware for it.

    Parameters
    ----------
    prepared : gravfm.flow.Prepared
    fpgas, pes : int
        FPGAs and PEs per FPGA.
    partition : str or gravfm.partition.Partition, optional
        Partitioning method (``greedy``, ``sorted_greedy``, ``round_robin``, ``metis``; by default
        the architecture's :attr:`~gravfm.architectures.ArchitectureInfo.default_partition`), or a
        partition of the prepared graph over ``fpgas`` x ``pes`` PEs (e.g. to choose the order
        of the hardware ids, :func:`gravfm.flow.check_partition_independence`).
    arch : str (one of gravfm.architectures.ARCHITECTURES)
    local_bits, edges_per_pe : int, optional
        Capacities of a PE (checked against the graph); by default :func:`graph_capacities`.
    update_lanes : int, optional
    gather_forwarding : bool
    edge_memory : dict, optional
        Off-chip edges: the PE's memory fields (:func:`gravfm.flow.memory.memory_hardware`);
        the edge images' size is then known (``Plan.memory_bytes``).
    memory_channels : int
        Off-chip edges: pseudo-channels of each FPGA's memory
        (:func:`gravfm.flow.memory.memory_channels`).
    hub_degree : int, optional
        Hybrid: the senders of more than this many out-edges are hubs (:func:`with_hubs`).
    **hardware
        Further :class:`~gravfm.hw.SystemConfig` fields (:data:`HARDWARE_OPTIONS`); ``max_rounds``
        defaults to :func:`default_max_rounds` of the reference's supersteps.

    Returns
    -------
    Plan
    """
    if isinstance(partition, Partition):
        parts = partition
        if (parts.fpgas, parts.pes_per_fpga, parts.num_vertices) != (fpgas, pes, prepared.graph.num_vertices):
            raise ConfigError(f"the partition places {parts.num_vertices} vertices on {parts.fpgas} x "
                              f"{parts.pes_per_fpga} PEs, but the run has {prepared.graph.num_vertices} "
                              f"on {fpgas} x {pes}")
    else:
        method = architecture_info(arch).default_partition if partition is None else partition
        parts = make_partition(prepared.graph, fpgas, pes, method)
    if hub_degree is not None:
        parts = with_hubs(prepared.graph, parts, arch, hub_degree)
        hardware["hub_path"] = True
    offchip = bool(edge_memory) and edge_memory.get("edge_memory") == "offchip"
    bits, edges, stores = graph_capacities(prepared.graph, parts, arch=arch, local_bits=local_bits,
                                           edges_per_pe=edges_per_pe, offchip=offchip)
    hardware.setdefault("max_rounds", default_max_rounds(prepared.reference_supersteps))
    config = system_config(prepared.algorithm, fpgas=parts.fpgas, pes=parts.pes_per_fpga, local_bits=bits,
                           edges_per_pe=edges, arch=arch, update_lanes=update_lanes,
                           gather_forwarding=gather_forwarding, edge_memory=edge_memory, **hardware)
    fanout = (update_fanout(prepared.graph, parts)
              if parts.fpgas > 1 and architecture_info(arch).filters_links else None)
    if not offchip:
        return Plan(partition=parts, config=config, update_fanout=fanout)
    check_integer("plan", "memory_channels", memory_channels)
    return Plan(partition=parts, config=config, memory_bytes=image_bytes(stores, config, memory_channels),
                memory_words_per_pass=words_per_pass(stores, config), update_fanout=fanout,
                memory_channels=memory_channels)

