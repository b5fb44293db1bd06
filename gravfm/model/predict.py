"""Predicting a platform's throughput for a graph: T_sys = min(L_PE, L_mem, L_if, L_net) (9), and
beyond the paper min(..., L_intake, L_msgnet): the updates a PE takes, the on-chip message network.

:func:`predict` is the library entry point (``gravfm run`` prints its answer beside the measured
throughput). It evaluates every limit of the model for a configuration of n FPGAs with p PEs each,
and, when n or p is not given, chooses them: first the n that maximizes T_sys with the most PEs
per FPGA, then the fewest PEs that keep that T_sys (p >= T_sys CPE / (n f)).

The paper finds n at the crossing of min(L_PE max, L_mem) with the network limits, compared with
n = 1. Here every integer n from 1 to the platform's FPGA count is evaluated instead: that finds
the same optimum for the paper's monotone limits, and stays right when the per-peer interface
bandwidth table makes L_if non-monotone in n (as the AC-510's does).
"""

import dataclasses
import math

from ..architectures import DEFAULT_ARCHITECTURE, architecture_info
from ..errors import ConfigError, SpecError
from . import limits as L
from .algorithm_params import AlgorithmParams, algorithm_params
from .offchip_layout import edge_slot_bits
from .platform import Platform, load_platform
from .prediction import LIMIT_DESCRIPTIONS, MEMORY_MODELS, Prediction
from .units import gib_per_s_to_bits_per_s, to_mteps

__all__ = [
    "LIMIT_DESCRIPTIONS",
    "MEMORY_MODELS",
    "Prediction",
    "check_fit",
    "evaluate",
    "predict",
    "sweep",
]

def _resolve(platform, params):
    if not isinstance(platform, Platform):
        platform = load_platform(platform)
    if isinstance(params, str):
        params = algorithm_params(params)
    if not isinstance(params, AlgorithmParams):
        raise TypeError(f"algorithm_params must be an AlgorithmParams or a name, not {params!r}")
    return platform, params


def _check_count(name, value, *, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, not {value!r}")


def _check_graph(vertices, edges):
    _check_count("vertices", vertices)
    _check_count("edges", edges)


def evaluate(platform, algorithm_params, vertices, edges, fpgas, pes, *, arch=DEFAULT_ARCHITECTURE,
             memory_model="simple", layout_words=None, update_fanout=None, update_lanes=None, link_lanes=None):
    """Every limit and T_sys for one given configuration (nothing is chosen).

    Parameters are those of :func:`predict`, with ``fpgas`` and ``pes`` required. More FPGAs or
    PEs than the platform has are evaluated all the same, with a note saying so.
    """
    platform, params = _resolve(platform, algorithm_params)
    _check_graph(vertices, edges)
    _check_count("fpgas", fpgas)
    _check_count("pes", pes)
    if arch not in L.ARCHITECTURES:
        raise SpecError(f"unknown architecture {arch!r}; expected one of {', '.join(L.ARCHITECTURES)}")
    if memory_model not in MEMORY_MODELS:
        raise SpecError(f"unknown memory model {memory_model!r}; expected one of {', '.join(MEMORY_MODELS)}")

    notes = []
    degree = edges / vertices
    cpe, measured = platform.cpe_for(params.name)
    if not measured:
        notes.append(f"CPE {cpe} is the platform's default: no CPE measured for {params.name!r}")
    limits = {"L_PE": L.pe_limit(fpgas, pes, platform.fpga.f_clk_hz, cpe)}
    details = {"average_degree": degree}
    limits.update(_memory_limits(platform, params, arch, vertices, edges, fpgas, pes, memory_model, layout_words,
                                 details, notes))
    limits.update(_network_limits(platform, params, arch, degree, fpgas, update_fanout, details, notes))
    limits.update(_scatter_limits(platform, arch, degree, fpgas, pes, update_fanout, (update_lanes, link_lanes),
                                  details, notes))

    network, memory = platform.network, platform.memory
    if fpgas > network.max_fpgas:
        notes.append(f"{fpgas} FPGAs: beyond the platform's {network.max_fpgas} (extrapolation)")
    if pes > platform.fpga.max_pes:
        notes.append(f"{pes} PEs per FPGA: beyond the platform's max_pes {platform.fpga.max_pes} "
                     "(they would not fit; extrapolation)")
    needed = L.fpgas_needed(vertices, params.m_vertex, memory.capacity_bits)
    shortfall = L.does_not_fit(vertices, params.m_vertex, memory.capacity_bits, fpgas)
    fits = shortfall is None
    if not fits:
        notes.append(shortfall)
    if platform.estimated:
        notes.append(f"platform figures that are estimates: {', '.join(platform.estimated)}")

    bottleneck = min(limits, key=limits.get)
    return Prediction(
        platform=platform.name, algorithm=params.name, arch=arch, vertices=vertices, edges=edges,
        fpgas=fpgas, pes=pes, limits=limits, t_sys=limits[bottleneck], bottleneck=bottleneck,
        fits=fits, fpgas_needed=needed, chosen=False, memory_model=memory_model, cpe=cpe,
        details=details, notes=tuple(notes),
    )


def _memory_limits(platform, params, arch, vertices, edges, fpgas, pes, memory_model, layout_words, details, notes):
    """``{"L_mem": ...}`` by ``memory_model`` with edges off chip (every memory figure in
    ``details``), {} with edges on chip. With pseudo-channel memory each PE reads its edges from
    one channel, so the FPGA reads at the busiest channel's pace
    (:func:`gravfm.model.limits.channel_memory_bandwidth`)."""
    memory = platform.memory
    if memory.edge_storage != "offchip":
        notes.append("on-chip edge storage: no memory-bandwidth limit (L_PE covers one edge per cycle)")
        return {}
    bandwidth = memory.bandwidth_bits_per_s
    if memory.channels is not None:
        count = memory.channels.count
        bandwidth = L.channel_memory_bandwidth(bandwidth, pes, count)
        details.update(memory_channels=count, pes_per_channel=math.ceil(pes / count),
                       channel_bandwidth_gib_s=memory.bandwidth_gib_s / count)
        if pes % count:
            notes.append(f"{pes} PEs on {count} memory channels: the busiest channel serves "
                         f"{math.ceil(pes / count)} PE(s), L_mem at {bandwidth / memory.bandwidth_bits_per_s:.0%} "
                         f"of the memory's bandwidth")
    info = architecture_info(arch)
    # GraVF keeps the n p lists of the paper's worst case as before (the paper derives it for GraVF-M)
    split = info.edge_lists_per_vertex(fpgas, pes) if info.broadcasts else None
    simple = L.memory_limit(fpgas, bandwidth, params.m_edge)
    granular = L.memory_limit_granular(fpgas, pes, bandwidth, params.m_edge, memory.word_bits,
                                       details["average_degree"], lists_per_vertex=split)
    words, source = _layout_words(params, memory, vertices, edges, fpgas, pes, arch, layout_words)
    layout = L.memory_limit_layout(bandwidth, memory.word_bits, edges, words)
    details["L_mem_simple_mteps"] = to_mteps(simple)
    details["L_mem_granular_mteps"] = to_mteps(granular)
    details["L_mem_layout_mteps"] = to_mteps(layout)
    details["layout_words_per_pass"] = list(words)
    details["layout_words_source"] = source
    details["L_in_flight_mteps"] = to_mteps(L.in_flight_limit(pes, memory.requests_in_flight, memory.round_trip_cycles,
                                                              platform.fpga.f_clk_hz, edges, words))
    return {"L_mem": {"simple": simple, "granular": granular, "layout": layout}[memory_model]}


def _network_limits(platform, params, arch, degree, fpgas, update_fanout, details, notes):
    """The link limits (L_if, L_net; L_if_node, L_net_node between the nodes of a hierarchical
    network); {} for one FPGA."""
    limits = {}
    network = platform.network
    sizes = {"arch": arch, "m_update": params.m_update, "m_message": params.m_message}
    hierarchy = network.hierarchy
    group = fpgas if hierarchy is None else min(hierarchy.fpgas_per_node, fpgas)
    fanout = _group_fanout(update_fanout, fpgas, group, details, notes)
    if group > 1:
        interface_gib_s, extrapolated = network.interface_gib_s(group - 1)
        details["interface_gib_s"] = interface_gib_s
        if extrapolated:
            notes.append(f"BW_if for {group - 1} peers extrapolated from the platform's table "
                         f"(last entry {interface_gib_s} GiB/s)")
        limits["L_if"] = L.interface_limit(fpgas, gib_per_s_to_bits_per_s(interface_gib_s), degree,
                                           group=group, fanout=fanout, **sizes)
        limits["L_net"] = L.network_limit(fpgas, network.total_bits_per_s, degree, group=group, fanout=fanout,
                                          **sizes)
        if network.total_bandwidth_is_lower_bound:
            notes.append(f"BW_net is only known to exceed {network.total_bandwidth_gib_s} GiB/s: "
                         "L_net is a lower bound")
    if hierarchy is not None and fpgas > group:
        node_if = gib_per_s_to_bits_per_s(hierarchy.node_interface_gib_s)
        node_net = gib_per_s_to_bits_per_s(hierarchy.node_network_gib_s)
        limits["L_if_node"] = L.node_interface_limit(fpgas, group, node_if, degree, **sizes)
        limits["L_net_node"] = L.node_network_limit(fpgas, group, node_net, degree, **sizes)
        details["nodes"] = math.ceil(fpgas / group)
        if fpgas % group:
            notes.append(f"{fpgas} FPGAs do not fill nodes of {group}: node limits use the largest node")
    return limits


def _scatter_limits(platform, arch, degree, fpgas, pes, update_fanout, lanes_given, details, notes):
    """The limits inside an FPGA beyond L_PE (not in the paper): L_intake where updates reach
    other PEs (GraVF-M, hybrid), L_linkend where they leave for and arrive from peers, L_msgnet
    where messages cross an on-chip network (GraVF, hybrid) whose efficiency the platform states
    (ideal otherwise, as in the paper's model). ``lanes_given``: (update lanes, link lanes), each
    None for the planner's rule."""
    info = architecture_info(arch)
    update_lanes, link_lanes = lanes_given
    limits, f_clk_hz = {}, platform.fpga.f_clk_hz
    if info.intake_pes(pes) is not None:
        lanes = _update_lanes(info, update_lanes, fpgas * pes, platform.memory.edge_storage == "offchip")
        details["update_lanes"] = lanes
        fanout = update_fanout if fpgas > 1 else None  # checked by the network limits
        limits["L_intake"] = L.intake_limit(fpgas, pes, f_clk_hz, degree, arch=arch, lanes=lanes, fanout=fanout)
    if fpgas > 1 and info.broadcasts:
        link_lanes = info.default_link_lanes(fpgas, pes) if link_lanes is None else link_lanes
        if info.max_link_lanes > 1:
            details["link_lanes"] = link_lanes
        limits["L_linkend"] = L.link_end_limit(fpgas, f_clk_hz, degree, arch=arch, fanout=update_fanout,
                                               items_per_cycle=link_lanes)
    efficiency = platform.fpga.message_network_efficiency
    if info.message_network and efficiency is not None:
        limits["L_msgnet"] = L.message_network_limit(fpgas, pes, f_clk_hz, efficiency)
        details["message_network_efficiency"] = efficiency
    elif info.message_network and not info.built:
        notes.append("the on-chip message network is taken as ideal (one message per PE port per cycle): the "
                     "platform states no fpga.message_network_efficiency")
    if not info.built:
        notes.append(f"the {info.title} architecture's hardware is not built yet: a prediction for a design "
                     "described only (scatter units assumed evenly loaded)")
    return limits


def _update_lanes(info, given, total_pes, offchip):
    """The updates a PE takes per cycle: ``given`` (the hardware's), else the planner's rule
    (:meth:`~gravfm.architectures.ArchitectureInfo.default_update_lanes`)."""
    if given is None:
        return info.default_update_lanes(total_pes, offchip=offchip)
    if isinstance(given, bool) or not isinstance(given, int) or not 1 <= given <= info.max_update_lanes:
        raise ConfigError(f"update_lanes must be 1 .. {info.max_update_lanes} with the {info.name} architecture, "
                          f"not {given!r}")
    return given


def _group_fanout(update_fanout, fpgas, group, details, notes):
    """The fan-out the flat network limits take (None: every peer, the paper's model): the
    partition's mean number of other FPGAs an update goes to, as a share of a node's g - 1 peers
    when the FPGAs form nodes (assumption: the filter's destinations spread evenly over the
    FPGAs; the node limits keep every node)."""
    if update_fanout is None or fpgas <= 1:
        return None
    if isinstance(update_fanout, bool) or not isinstance(update_fanout, (int, float)) \
            or not 0 <= update_fanout <= fpgas - 1:
        raise ConfigError(f"update_fanout must be a number from 0 to n - 1 = {fpgas - 1}, not {update_fanout!r}")
    details["update_fanout"] = update_fanout
    if group == fpgas:
        return update_fanout
    notes.append("the update fan-out is spread evenly over the FPGAs inside a node; the node limits keep "
                 "every update going to every other node")
    return update_fanout * (group - 1) / (fpgas - 1)


def _layout_words(params, memory, vertices, edges, fpgas, pes, arch, given):
    """Words per FPGA one all-active pass reads: ``given`` (from the partition) or the estimate
    for uniformly random destinations, an edge taking its slot in the layout (m_edge rounded up to
    a power of two, at least 8 bits: :func:`gravfm.model.offchip_layout.edge_slot_bits`)."""
    if given is not None:
        if len(given) != fpgas:
            raise ConfigError(f"layout_words must give one word count per FPGA ({fpgas}), not {len(given)}")
        return tuple(given), "partition"
    slot = edge_slot_bits(params.m_edge)
    estimate = L.layout_words_per_pass(vertices, edges, fpgas, pes, slot, memory.word_bits, arch=arch)
    return (estimate,) * fpgas, "estimate (uniformly random destinations)"


def check_fit(platform, algorithm_params, vertices, fpgas):
    """Raise ConfigError when the graph does not fit ``fpgas`` FPGAs of ``platform``, by the
    model's rule (the prediction's ``fits``; :func:`gravfm.model.limits.does_not_fit`)."""
    platform, params = _resolve(platform, algorithm_params)
    shortfall = L.does_not_fit(vertices, params.m_vertex, platform.memory.capacity_bits, fpgas)
    if shortfall is not None:
        where = f" in {platform.origin}" if platform.origin else ""
        raise ConfigError(f"platform {platform.name!r}: {shortfall} ({vertices:,} vertices x "
                          f"{params.m_vertex} bits of {params.name} state; memory.capacity_mib = "
                          f"{platform.memory.capacity_mib:g}{where}), {fpgas} asked")


def predict(platform, algorithm_params, vertices, edges, fpgas=None, pes=None, arch=DEFAULT_ARCHITECTURE,
            memory_model="simple", layout_words=None, update_fanout=None, update_lanes=None, link_lanes=None):
    """Predict T_sys, choosing n_FPGA and PEs per FPGA unless both are given.

    Parameters
    ----------
    platform : Platform or str or os.PathLike
        A platform, a built-in platform name or a platform file.
    algorithm_params : AlgorithmParams or str
        Sizes in bits (or the name of an algorithm with named defaults).
    vertices, edges : int
        |V| and |E|.
    fpgas, pes : int, optional
        n_FPGA and PEs per FPGA. A missing one is chosen by the model: n maximizes T_sys over
        1..max_fpgas (the fewest FPGAs among equals, and only n for which the graph fits when
        some n does); p is the least that keeps T_sys. A chosen system has at most |V| PEs in
        all, as ``gravfm run`` gives every PE a vertex; a given one beyond that gets a note.
    arch : str (one of gravfm.architectures.ARCHITECTURES)
        Update broadcast (GraVF-M), unicast messages (GraVF), or update broadcast between FPGAs
        with one scatter unit per update and an on-chip message network inside (the hybrid,
        whose hardware is not built; the platform must state its message network's efficiency).
    memory_model : {"simple", "granular", "layout"}
        Which memory limit enters T_sys (all are in ``details``): equation (2), its worst case
        with access granularity, or this implementation's layout (index word plus word-aligned
        list words per non-empty list, :func:`gravfm.model.limits.memory_limit_layout`).
    layout_words : sequence of int, optional
        Words per FPGA one all-active pass reads (:func:`gravfm.flow.memory.words_per_pass`);
        only with ``fpgas`` and ``pes`` given. Without it the layout's words are estimated for
        uniformly random destinations (:func:`gravfm.model.limits.layout_words_per_pass`).
    update_fanout : float, optional
        GraVF-M with the neighbour filter: the mean number of other FPGAs an update goes to
        (:func:`gravfm.partition.update_fanout` of the partition); only with ``fpgas`` given.
        Without it every update goes to every other FPGA (the paper's equations (3) and (6)).
    update_lanes : int, optional
        Updates a PE takes per cycle (L_intake); default the planner's rule for the system (2
        lanes for GraVF-M from 8 PEs on with edges on chip, else 1).
    link_lanes : int, optional
        Updates a link end moves per cycle to or from one peer (L_linkend); default the
        planner's rule (2 for the hybrid from 32 PEs per FPGA on, else 1).

    Returns
    -------
    Prediction

    Examples
    --------
    The paper's platform, WCC on 2^16 vertices and 2^21 edges, 4 FPGAs x 9 PEs: every PE takes
    every update, one per cycle, which bounds the system to 32 edges per cycle (L_PE: 6429):

    >>> prediction = predict("ac510x4", "wcc", vertices=65536, edges=2**21, fpgas=4, pes=9)
    >>> round(prediction.t_sys_mteps), prediction.bottleneck
    (6000, 'L_intake')
    """
    platform, params = _resolve(platform, algorithm_params)
    _check_graph(vertices, edges)
    if layout_words is not None and (fpgas is None or pes is None):
        raise ConfigError("layout_words describe one configuration: give fpgas and pes with them")
    if update_fanout is not None and fpgas is None:
        raise ConfigError("update_fanout describes one partition: give fpgas with it")
    kwargs = {"arch": arch, "memory_model": memory_model, "layout_words": layout_words,
              "update_fanout": update_fanout, "update_lanes": update_lanes, "link_lanes": link_lanes}
    if fpgas is not None:
        candidates = [fpgas]
    else:
        needed = L.fpgas_needed(vertices, params.m_vertex, platform.memory.capacity_bits)
        first = min(needed, platform.network.max_fpgas)
        # No more FPGAs than vertices (nor than the first n the memory needs).
        candidates = range(first, max(first, min(platform.network.max_fpgas, vertices)) + 1)
    best = None
    for n in candidates:
        # A chosen p leaves every PE a vertex; a given one is evaluated as given.
        trial_pes = max(1, min(platform.fpga.max_pes, vertices // max(1, n))) if pes is None else pes
        trial = evaluate(platform, params, vertices, edges, n, trial_pes, **kwargs)
        if best is None or trial.t_sys > best.t_sys * (1 + 1e-9):
            best = trial
    if pes is None:
        fewer = L.pes_needed(best.t_sys, best.fpgas, platform.fpga.f_clk_hz, best.cpe)
        if fewer < best.pes:
            trial = evaluate(platform, params, vertices, edges, best.fpgas, fewer, **kwargs)
            if trial.t_sys >= best.t_sys * (1 - 1e-9):
                best = trial
    chosen = fpgas is None or pes is None
    notes = best.notes
    if best.fpgas * best.pes > vertices:
        notes += (f"{best.fpgas} FPGA(s) x {best.pes} PEs = {best.fpgas * best.pes} PEs is more than the graph's "
                  f"{vertices:,} vertices: gravfm run refuses this system (every PE needs a vertex)",)
    elif chosen and pes is None and best.pes < platform.fpga.max_pes and best.pes == vertices // best.fpgas:
        notes += (f"{best.pes} PEs per FPGA, not the platform's {platform.fpga.max_pes}: the graph's "
                  f"{vertices:,} vertices give every PE one at most (as gravfm run needs)",)
    return dataclasses.replace(best, chosen=chosen, notes=notes)


def sweep(platform, algorithm_params, vertices, edges, fpgas_range, pes=None, arch=DEFAULT_ARCHITECTURE,
          memory_model="simple"):
    """Predictions for each n in ``fpgas_range`` with ``pes`` (default: the most) PEs per FPGA."""
    platform, params = _resolve(platform, algorithm_params)
    pes = platform.fpga.max_pes if pes is None else pes
    return [evaluate(platform, params, vertices, edges, n, pes, arch=arch, memory_model=memory_model)
            for n in fpgas_range]
