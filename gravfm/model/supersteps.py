"""A superstep-aware prediction (beyond the paper).

The paper's T_sys assumes every superstep has enough work to hide the synchronization between
supersteps; its Fig. 11 shows that below about 2k active vertices per superstep the fixed latency
of a superstep dominates. Here each superstep ``r`` with ``messages[r]`` traversed edges (from a
software reference run) takes

    time[r] = max(messages[r] / T_sys, latency / f_clk)

and the predicted throughput is sum(messages) / sum(time). (``combine="sum"`` adds the two
terms instead, for a design that overlaps nothing between supersteps.)

When the updates of each superstep are known too (GraVF-M, hybrid), the network's work follows
them rather than the messages: every GraVF-M network limit is proportional to |E|/|V| because the
network carries one update per |E|/|V| messages on average, so a superstep's network time is
updates[r] |E|/|V| / L_network, its compute and memory time messages[r] / L, and its work time
the largest of these. The update intake (L_intake, a PE's updates per cycle) follows the updates
in the same way. A superstep of few hubs with many edges then costs less network time than
its messages suggest, and one of many low-degree vertices more.

The latency of one superstep, in
f_clk cycles, is

    latency = pipeline_depth + kernel_latency + barrier_round_trip + ceil(|V| / (n p))

with barrier_round_trip = barrier_local + 2 link_latency when n > 1 (plus 2 node_latency when
the FPGAs span several nodes), and ceil(|V| / (n p)) the apply pass over one PE's local vertices:
the platform's figures for the paper's system (``latency="platform"``).

``latency="design"`` predicts the generated design instead (what gravfm simulates), from the
path the last update of a superstep takes and nothing measured:

    latency_design = DESIGN_SUPERSTEP_CYCLES + link_latency (n > 1) + node_latency (several nodes)
                     + memory round trip (edges off chip: latency + jitter / 2)

The floating barrier follows the last update once over each link (one way, no round trip);
with edges off chip the last update's edge lists are read after it arrives; apply's pass runs
beside the next round's gather (DESIGN_SUPERSTEP_CYCLES). A superstep's latency and its work
do not overlap there (the next superstep's updates wait for the barrier), so

    time[r] = latency_design + work[r]

(``combine="sum"``, its default), and with edges off chip the work includes what the requests
in flight carry (Little's law, :func:`gravfm.model.limits.in_flight_limit`: p R words per round
trip per FPGA), which bounds a PE reading short lists long before the bandwidth does.
"""

import math
import numbers
from dataclasses import dataclass

from ..architectures import DEFAULT_ARCHITECTURE, architecture_info
from ..errors import ConfigError
from . import limits as L
from .predict import Prediction, _resolve, predict
from .units import to_mteps

__all__ = ["COMBINES", "LATENCIES", "SuperstepPrediction", "superstep_latency_cycles", "predict_supersteps",
           "DESIGN_SUPERSTEP_CYCLES", "design_overhead_cycles", "design_latency_cycles"]

COMBINES = ("max", "sum")
#: Whose superstep latency: the platform's figures (the paper's system) or the generated design's.
LATENCIES = ("platform", "design")

#: Cycles one superstep adds to a run of the generated design (one FPGA, on-chip edges) beyond
#: its messages: the barrier's way from gather (read and read-data stages drained) through
#: apply's pipeline, the update queue, the network FIFO and endpoint, scatter's pipeline and the
#: message FIFO back to gather, about one cycle per registered stage. The barrier skips the
#: stages it finds empty (apply's address and read stages, scatter's edge stages, the FIFOs'
#: memories), so a superstep whose pipeline holds the last messages costs a few cycles more.
#: Apply's pass itself runs beside the next round's gather (gravfm.hw.pe.gather_forward) for a
#: sparse algorithm, and for one with an accumulator field (PageRank: gravfm.hw.pe.vertex_memory),
#: and so adds nothing but in round 0. Not modelled apart: messages held back during a pass and
#: replayed after it, and apply's pass slowed by gather's write-backs (WCC on s7e16, 1 PE, in a
#: trace: round 0's pass of 122 vertices takes 175 cycles, 66 messages are replayed after it, 23
#: and 5 after later passes); the first pass's length stands for them. Nor a cycle per update
#: whose list is empty at a one-lane PE (PageRank's senders without edges). Checked against
#: simulation in tests/test_model_supersteps.py (s7e16.graph symmetrised).
DESIGN_SUPERSTEP_CYCLES = {1: 19, "more": 21}

# Limits set by the network, which GraVF-M loads with updates rather than messages.
NETWORK_LIMITS = ("L_if", "L_net", "L_if_node", "L_net_node")
# Limits that follow a superstep's updates: the network's and a PE's update intake.
UPDATE_LIMITS = NETWORK_LIMITS + ("L_intake", "L_linkend")


def superstep_latency_cycles(platform, algorithm_params, vertices, fpgas, pes):
    """Synchronization latency of one superstep in f_clk cycles (formula in the module doc)."""
    platform, params = _resolve(platform, algorithm_params)
    barrier = platform.latency.barrier_local_cycles
    if fpgas > 1:
        barrier += 2 * platform.network.link.latency_cycles
    hierarchy = platform.network.hierarchy
    if hierarchy is not None and fpgas > hierarchy.fpgas_per_node:
        barrier += 2 * hierarchy.node_latency_cycles
    apply_pass = math.ceil(vertices / (fpgas * pes))
    return platform.latency.pipeline_depth_cycles + params.kernel_latency_cycles + barrier + apply_pass


def design_latency_cycles(platform, fpgas, pes):
    """Cycles one superstep of the generated design adds to its work on ``platform`` (module doc):
    :data:`DESIGN_SUPERSTEP_CYCLES`, one link latency with several FPGAs, one node latency when
    they span several nodes, and the memory's mean round trip when the edges are off chip."""
    latency = DESIGN_SUPERSTEP_CYCLES[1 if fpgas * pes == 1 else "more"]
    if fpgas > 1:
        latency += platform.network.link.latency_cycles
    hierarchy = platform.network.hierarchy
    if hierarchy is not None and fpgas > hierarchy.fpgas_per_node:
        latency += hierarchy.node_latency_cycles
    if platform.memory.edge_storage == "offchip":
        latency += platform.memory.round_trip_cycles
    return latency


def design_overhead_cycles(*, first_pass, supersteps, pes, fpgas=1, link_latency_cycles=0):
    """Predicted cycles of a run of the generated design above its message bound (messages / PEs).

    ``first_pass``: vertices of the busiest PE's round-0 apply (all its vertices, or those the
    host lists, e.g. BFS's root), which no message of its own round overlaps; then
    :data:`DESIGN_SUPERSTEP_CYCLES` per superstep (1 PE, or more PEs behind the crossbar), plus a
    link's latency per superstep with several FPGAs (the barrier crosses it once, behind the last
    update: :func:`design_latency_cycles`). Round 0's latency (its first update's way
    from apply to gather) runs during its pass, so that superstep costs the longer of the two,
    not their sum. A prediction for a sparse algorithm whose supersteps are latency-bound or
    balanced; partition imbalance and message bursts come on top.
    """
    per_step = DESIGN_SUPERSTEP_CYCLES[1 if fpgas * pes == 1 else "more"]
    if fpgas > 1:
        per_step += link_latency_cycles
    if supersteps == 0:
        return first_pass
    return max(first_pass, per_step) + (supersteps - 1) * per_step


@dataclass(frozen=True)
class SuperstepPrediction:
    """Predicted run of an algorithm superstep by superstep (a prediction, not a measurement).

    Attributes
    ----------
    steady : Prediction
        The throughput-limit prediction whose T_sys bounds the work of each superstep.
    latency_cycles : int
        Synchronization latency of one superstep (cycles of f_clk).
    f_clk_hz : float
        Clock used to turn cycles into seconds.
    messages : tuple of int
        Messages (traversed edges) of each superstep.
    times_s : tuple of float
        Predicted duration of each superstep.
    combine : str
        ``"max"`` or ``"sum"`` of work time and latency.
    updates : tuple of int or None
        Updates of each superstep, when the network time was computed from them.
    latency : str
        Whose latency: ``"platform"`` or ``"design"`` (:data:`LATENCIES`).
    work_s : tuple of float or None
        Predicted work of each superstep (seconds), without its latency.
    """

    steady: Prediction
    latency_cycles: int
    f_clk_hz: float
    messages: tuple
    times_s: tuple
    combine: str = "max"
    updates: tuple | None = None
    latency: str = "platform"
    work_s: tuple | None = None

    @property
    def total_time_s(self):
        """Predicted run time in seconds."""
        return sum(self.times_s)

    @property
    def total_messages(self):
        """Traversed edges over the run."""
        return sum(self.messages)

    @property
    def teps(self):
        """Predicted throughput over the run, traversed edges per second."""
        return self.total_messages / self.total_time_s

    @property
    def latency_bound_supersteps(self):
        """Supersteps whose work takes less time than the synchronization latency."""
        latency_s = self.latency_cycles / self.f_clk_hz
        if self.work_s is not None:
            return sum(1 for work in self.work_s if work <= latency_s)
        updates = self.updates if self.updates is not None else (None,) * len(self.messages)
        return sum(1 for count, sent in zip(self.messages, updates)
                   if _work_time(self.steady, count, sent) <= latency_s)

    def to_dict(self):
        """Plain-data form for JSON."""
        return {
            "kind": "prediction",
            "model": f"superstep-aware: time[r] = {self.combine}(work[r], latency / f_clk)",
            "supersteps": len(self.messages),
            "latency": self.latency,
            "latency_cycles": self.latency_cycles,
            "latency_bound_supersteps": self.latency_bound_supersteps,
            "messages_per_superstep": list(self.messages),
            "updates_per_superstep": None if self.updates is None else list(self.updates),
            "time_per_superstep_s": list(self.times_s),
            "total_time_s": self.total_time_s,
            "total_cycles": self.total_time_s * self.f_clk_hz,
            "teps_mteps": to_mteps(self.teps),
            "steady_t_sys_mteps": self.steady.t_sys_mteps,
        }


def _counts(values, name):
    counts = tuple(values)
    if not counts:
        raise ConfigError(f"{name} is empty: a run has at least one superstep")
    for index, count in enumerate(counts):
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
            raise ConfigError(f"{name}[{index}] must be a non-negative integer, not {count!r}")
    return tuple(int(count) for count in counts)


def _work_time(steady, messages, updates, extra_limits=None):
    """Seconds of work for one superstep at the steady-state limits (and ``extra_limits``, edges/s,
    which the messages load: the requests in flight)."""
    extra = max((messages / limit for limit in (extra_limits or {}).values()), default=0.0)
    if updates is None or not architecture_info(steady.arch).broadcasts:
        return max(messages / steady.t_sys, extra)
    degree = steady.edges / steady.vertices
    return max(extra, max((updates * degree if name in UPDATE_LIMITS else messages) / limit
                          for name, limit in steady.limits.items()))


def _in_flight_limits(platform, steady, latency):
    """``{"L_in_flight": edges/s}`` for the design's work with edges off chip, else {}."""
    if latency != "design" or "L_in_flight_mteps" not in steady.details:
        return {}
    words = steady.details["layout_words_per_pass"]
    memory = platform.memory
    return {"L_in_flight": L.in_flight_limit(steady.pes, memory.requests_in_flight, memory.round_trip_cycles,
                                             platform.fpga.f_clk_hz, steady.edges, words)}


def _checked_updates(updates_per_superstep, messages):
    if updates_per_superstep is None:
        return None
    updates = _counts(updates_per_superstep, "updates_per_superstep")
    if len(updates) != len(messages):
        raise ConfigError(f"updates_per_superstep has {len(updates)} entries but messages_per_superstep "
                          f"has {len(messages)}")
    return updates


def predict_supersteps(platform, algorithm_params, vertices, edges, messages_per_superstep, fpgas=None,
                       pes=None, arch=DEFAULT_ARCHITECTURE, memory_model="simple", combine=None,
                       updates_per_superstep=None, *, latency="platform", layout_words=None, update_fanout=None,
                       update_lanes=None, link_lanes=None):
    """Superstep-aware prediction from the message counts of a software reference run.

    Parameters
    ----------
    platform, algorithm_params, vertices, edges, fpgas, pes, arch, memory_model, layout_words, update_fanout
        As for :func:`gravfm.model.predict` (which chooses n and p when not given).
    update_lanes, link_lanes : int, optional
        As for :func:`gravfm.model.predict`.
    messages_per_superstep : sequence of int
        ``messages[r]`` for every superstep (docs/interfaces.md §2), e.g. a reference result's
        ``messages_per_superstep``.
    combine : {"max", "sum"}, optional
        How a superstep's work time and its latency combine (default: ``"max"`` for the
        platform's latency, ``"sum"`` for the design's).
    updates_per_superstep : sequence of int, optional
        ``updates[r]`` for every superstep; with GraVF-M the network time then follows the
        updates (module doc). Ignored for GraVF, whose network carries the messages.
    latency : {"platform", "design"}
        The platform's superstep latency (:func:`superstep_latency_cycles`, the paper's system)
        or the generated design's (:func:`design_latency_cycles`, with the requests in flight in
        the work when the edges are off chip).

    Returns
    -------
    SuperstepPrediction
    """
    platform, params = _resolve(platform, algorithm_params)
    if latency not in LATENCIES:
        raise ConfigError(f"latency must be one of {', '.join(LATENCIES)}, not {latency!r}")
    combine = combine or ("sum" if latency == "design" else "max")
    if combine not in COMBINES:
        raise ConfigError(f"combine must be one of {', '.join(COMBINES)}, not {combine!r}")
    messages = _counts(messages_per_superstep, "messages_per_superstep")
    updates = _checked_updates(updates_per_superstep, messages)
    if sum(messages) == 0:
        raise ConfigError("messages_per_superstep sums to 0: no edge is traversed, TEPS is undefined")
    steady = predict(platform, params, vertices, edges, fpgas=fpgas, pes=pes, arch=arch,
                     memory_model=memory_model, layout_words=layout_words, update_fanout=update_fanout,
                     update_lanes=update_lanes, link_lanes=link_lanes)
    if latency == "design":
        latency_cycles = design_latency_cycles(platform, steady.fpgas, steady.pes)
    else:
        latency_cycles = superstep_latency_cycles(platform, params, vertices, steady.fpgas, steady.pes)
    f_clk_hz = platform.fpga.f_clk_hz
    join = max if combine == "max" else (lambda work, wait: work + wait)
    extra = _in_flight_limits(platform, steady, latency)
    per_step_updates = updates if updates is not None else (None,) * len(messages)
    work = tuple(_work_time(steady, count, sent, extra) for count, sent in zip(messages, per_step_updates))
    times = tuple(join(step, latency_cycles / f_clk_hz) for step in work)
    return SuperstepPrediction(steady=steady, latency_cycles=latency_cycles, f_clk_hz=f_clk_hz,
                               messages=messages, times_s=times, combine=combine, updates=updates,
                               latency=latency, work_s=work)
