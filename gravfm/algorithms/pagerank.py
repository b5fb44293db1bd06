"""PageRank in Pregel form with IEEE-754 binary32 arithmetic (docs/interfaces.md §2).

Round 0: every vertex holds ``rank = 1/N`` and emits ``rank / out_degree``. Round ``r >= 1``:
``rank = (1-d)/N + d * sum`` where ``sum`` adds the messages of round ``r - 1``, and the vertex
emits ``rank / out_degree`` unless ``r`` is the last round (``supersteps - 1``), which is silent.
This is exactly :func:`gravfm.algorithms.reference.pagerank`; every hardware operation is the
bit-exact float32 unit of :mod:`gravfm.hw.fp`, so the only difference from the float32
reference is the ORDER in which a vertex's messages are summed (the reference adds them in
sender-id order, the hardware in arrival order). On one PE messages arrive in sender order and
the ranks come out bit-identical; across PEs arrivals interleave and each sum may differ in its
last bits. :data:`RANK_RTOL` is the tolerance the check allows for that.

Vertex state (96 bits): ``rank``, ``sum`` and ``degree``, each a binary32 bit pattern.

* ``degree`` is ``float32(max(out_degree, 1))`` of the whole graph, written by the loader
  (the scatter kernel's ``num_neighbors`` is only the length of the edge list stored on ONE
  PE in GraVF-M, so it cannot give the out-degree).
* ``sum`` accumulates the messages; apply resets it to +0. Before round 0 the loader stores the
  constant ``float32((1-d)/N)`` there instead: apply latches it during round 0 (every vertex
  carries the same value) and uses it in later rounds, so no register has to be written by the
  host and ``N`` need not be known when the hardware is built.
* ``d`` and the number of supersteps are constants of the hardware: build another variant with
  :func:`make_pagerank`.

Kernels: gather adds the message to ``sum`` with an :class:`~gravfm.hw.fp.FPAdder` (latency
5); apply chains multiplier -> adder -> divider (latency 6 + 5 + 31, one vertex per cycle,
never stalled: its updates queue behind it); scatter forwards the contribution through one
register.

Throughput (why the paper's CPE was 1.42): a message holds its vertex in the hazard unit from
its state read until its write-back, 5 cycles with this adder, so the PE issues one message per
cycle only with enough hazard slots (the build raises ``SystemConfig.hazard_slots`` to the
kernel's latency + 3 = 7: :func:`gravfm.hw.pe.gather.hazard_slots_for`). Two messages to the SAME
vertex within 5 cycles still stall. On one PE they are rare: messages arrive grouped by sender,
and one sender's edge list has distinct destinations. On many PEs of a power-law graph they are
not: low-degree senders mostly point at the hubs, and the PE holding a hub stalls and holds the
broadcast (4 x 9, RMAT scale 16: CPE 1.52 against 1.02 on a uniform graph, where one hub takes
19% of its PE's messages, more than the 1/7 one write-back at a time allows). So PageRank has a
combiner (:func:`_combiner`, a second FP adder): on several PEs the gather stage adds a message
whose vertex is in flight into one parked for it (:mod:`gravfm.hw.pe.parking`), which sums a
hub's contributions in another grouping (within :data:`RANK_RTOL`); one PE keeps arrival order
and exact sums (``benchmarks/results/bench_scaling_s16_pagerank.json``). No forwarding inside
the kernel is possible with this interface, since the hazard unit sits in front of it. Apply's pass no longer holds gather: ``sum`` is the algorithm's ``accumulator``,
kept in two banks by round parity (:mod:`gravfm.hw.pe.vertex_memory`), so the next round's
gather runs beside the pass. Measured (``benchmarks/bench_pagerank_cpe.py``, Verilator, one PE,
6 hazard slots, 30 supersteps): CPE 1.026-1.027 on RMAT scale 14 edge factor 16 seeds 1-3 and
1.001 on a uniform graph of degree 32 (1.098 and 1.032 while gather paused for every pass, 16k
of ~245k cycles per superstep); ranks bit-identical to the float32 reference. What remains on
RMAT is a scatter cycle for each of the ~5.4k senders without edges per superstep, and the
last, silent pass, which no message overlaps.
"""

import numpy as np

from ..errors import ConfigError
from .base import Algorithm
from .checks import compare_close

__all__ = ["PAGERANK", "make_pagerank", "RANK_RTOL", "float_bits", "bits_float"]

#: Relative tolerance of the check against the float32 reference (summation order only: a sum
#: of k positive float32 terms moves by at most about k * 2**-24 relative when reordered, and
#: the damping keeps earlier rounds' differences from growing).
RANK_RTOL = 1e-4


def float_bits(values):
    """binary32 bit patterns (int64) of ``values`` rounded to float32."""
    return np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.int64)


def bits_float(bits):
    """float32 values of binary32 bit patterns."""
    return np.asarray(bits, dtype=np.int64).astype(np.uint32).view(np.float32)


def _gather(layouts):
    from amaranth.hdl import Module  # deferred: Amaranth (heavy)
    from amaranth.lib import data, wiring  # deferred: Amaranth (heavy)

    from ..hw.fp import FPAdder  # deferred: Amaranth (heavy)
    from ..hw.kernels import gather_signature  # deferred: Amaranth (heavy)

    tag = data.StructLayout({"nodeid": layouts.gather_out["nodeid"].shape,
                             "rank": 32, "degree": 32})

    class PageRankGather(wiring.Component):
        """``sum += message`` in a pipelined binary32 adder (its latency on the signature)."""

        def __init__(self):
            super().__init__(gather_signature(layouts, latency=FPAdder.latency))

        def elaborate(self, platform):
            m = Module()
            m.submodules.adder = adder = FPAdder(tag_shape=tag)
            i, o = self.i.payload, self.o.payload
            operands, results = adder.operands, adder.results
            m.d.comb += [
                operands.valid.eq(self.i.valid),
                self.i.ready.eq(operands.ready),
                operands.payload.a.eq(i.state.sum),
                operands.payload.b.eq(i.message.contribution),
                operands.payload.tag.nodeid.eq(i.nodeid),
                operands.payload.tag.rank.eq(i.state.rank),
                operands.payload.tag.degree.eq(i.state.degree),
                self.o.valid.eq(results.valid),
                results.ready.eq(self.o.ready),
                o.nodeid.eq(results.payload.tag.nodeid),
                o.state.rank.eq(results.payload.tag.rank),
                o.state.sum.eq(results.payload.result),
                o.state.degree.eq(results.payload.tag.degree),
            ]
            return m

    return PageRankGather()


def _combiner(layouts):
    from amaranth.hdl import Module  # deferred: Amaranth (heavy)
    from amaranth.lib import wiring  # deferred: Amaranth (heavy)

    from ..hw.fp import FPAdder  # deferred: Amaranth (heavy)
    # deferred: Amaranth (heavy)
    from ..hw.kernels import combiner_signature

    class PageRankCombiner(wiring.Component):
        """Two contributions to one vertex added into one (its latency on the signature)."""

        def __init__(self):
            super().__init__(combiner_signature(layouts, latency=FPAdder.latency))

        def elaborate(self, platform):
            m = Module()
            m.submodules.adder = adder = FPAdder()
            m.d.comb += [
                adder.operands.valid.eq(self.i.valid),
                self.i.ready.eq(adder.operands.ready),
                adder.operands.payload.a.eq(self.i.payload.a.contribution),
                adder.operands.payload.b.eq(self.i.payload.b.contribution),
                self.o.valid.eq(adder.results.valid),
                adder.results.ready.eq(self.o.ready),
                self.o.payload.contribution.eq(adder.results.payload.result),
            ]
            return m

    return PageRankCombiner()


def _apply_factory(supersteps, damping):
    damping_bits = int(float_bits(damping))

    def _apply(layouts):
        # deferred: Amaranth (heavy)
        from amaranth.hdl import Module, Mux, Signal
        from amaranth.lib import data, wiring  # deferred: Amaranth (heavy)

        # deferred: Amaranth (heavy)
        from ..hw.fp import FPAdder, FPDivider, FPMultiplier
        # deferred: Amaranth (heavy)
        from ..hw.kernels import apply_signature
        from ..hw.latency_queue import LatencyQueue  # deferred: Amaranth (heavy)

        chain_latency = FPMultiplier.latency + FPAdder.latency + FPDivider.latency
        rnd = layouts.apply_in["round"].shape
        tag = data.StructLayout({"nodeid": layouts.apply_in["nodeid"].shape, "rank": 32,
                                 "degree": 32, "round": rnd, "barrier": 1, "first": 1})

        class PageRankApply(wiring.Component):
            """rank = base + d*sum (round 0: kept), then rank/degree as the update.

            Multiplier, adder and divider in a chain that never stalls, its updates queued
            behind it (:class:`~gravfm.hw.latency_queue.LatencyQueue`): a vertex is taken only
            while the queue has room for every one on its way, so the update queue's ``ready``
            reaches that queue alone, not the chain's ~3,000 stage registers. The barrier
            travels through the chain behind the last vertex, which keeps write-backs and
            updates in order.
            """

            def __init__(self):
                super().__init__(apply_signature(layouts, latency=chain_latency + 1))  # + the queue's head

            def elaborate(self, platform):
                m = Module()
                m.submodules.multiplier = mul = FPMultiplier(tag_shape=tag, constant_b=damping_bits)
                m.submodules.adder = add = FPAdder(tag_shape=tag)
                m.submodules.divider = div = FPDivider(tag_shape=tag)
                m.submodules.queue = queue = LatencyQueue(shape=self.update_o.payload.shape(), latency=chain_latency)
                i = self.i.payload
                first = i.round == 0
                taken = self.i.valid & queue.room
                # float32((1-d)/N), latched from the round-0 state (see the module docstring).
                base = Signal(32)
                with m.If(taken & first & ~i.barrier):
                    m.d.sync += base.eq(i.state.sum)
                m.d.comb += [
                    mul.operands.valid.eq(taken),
                    self.i.ready.eq(queue.room),
                    mul.operands.payload.a.eq(i.state.sum),
                    mul.operands.payload.tag.nodeid.eq(i.nodeid),
                    mul.operands.payload.tag.rank.eq(i.state.rank),
                    mul.operands.payload.tag.degree.eq(i.state.degree),
                    mul.operands.payload.tag.round.eq(i.round),
                    mul.operands.payload.tag.barrier.eq(i.barrier),
                    mul.operands.payload.tag.first.eq(first),
                ]
                m.d.comb += [
                    add.operands.valid.eq(mul.results.valid),
                    mul.results.ready.eq(add.operands.ready),
                    add.operands.payload.a.eq(base),
                    add.operands.payload.b.eq(mul.results.payload.result),
                    add.operands.payload.tag.eq(mul.results.payload.tag),
                ]
                new_rank = Mux(add.results.payload.tag.first, add.results.payload.tag.rank,
                               add.results.payload.result)
                m.d.comb += [
                    div.operands.valid.eq(add.results.valid),
                    add.results.ready.eq(div.operands.ready),
                    div.operands.payload.a.eq(new_rank),
                    div.operands.payload.b.eq(add.results.payload.tag.degree),
                    div.operands.payload.tag.eq(add.results.payload.tag),
                    div.operands.payload.tag.rank.eq(new_rank),
                ]
                out = div.results.payload
                st, up = self.state_o.payload, queue.i.payload
                emits = out.tag.round < supersteps - 1
                m.d.comb += [
                    # The write-back has no handshake: one beat per vertex, as it leaves the chain.
                    self.state_o.valid.eq(div.results.valid),
                    st.nodeid.eq(out.tag.nodeid),
                    st.state.rank.eq(out.tag.rank),
                    st.state.sum.eq(0),
                    st.state.degree.eq(out.tag.degree),
                    st.barrier.eq(out.tag.barrier),
                    div.results.ready.eq(1),  # every stage advances every cycle: no enables
                    queue.i.valid.eq(div.results.valid & (out.tag.barrier | emits)),
                    up.update.contribution.eq(out.result),
                    up.sender.eq(out.tag.nodeid),
                    up.round.eq(out.tag.round),
                    up.barrier.eq(out.tag.barrier),
                ]
                wiring.connect(m, queue.o, wiring.flipped(self.update_o))
                return m

        return PageRankApply()

    return _apply


def _scatter(layouts):
    from .blocks import MapScatter  # deferred: Amaranth (heavy)
    return MapScatter(layouts)  # the contribution, through one pipeline register


def _initial_state_factory(damping):
    def _initial_state(graph, params):
        n = graph.num_vertices
        if n == 0:
            raise ConfigError("pagerank: the graph has no vertices")
        # The same float32 roundings as the reference: rank = float32(1/N), base = float32((1-d)/N).
        rank = float_bits(np.full(n, 1.0 / n))
        base = float_bits(np.full(n, (1.0 - damping) / n))
        degree = float_bits(np.maximum(graph.out_degree(), 1))
        return {"rank": rank, "sum": base, "degree": degree}

    return _initial_state


def _reference_factory(supersteps, damping):
    def _reference(graph, params):
        from .reference import pagerank  # deferred: scipy.sparse.csgraph (heavy), only to compute a reference
        return pagerank(graph, supersteps=supersteps, damping=damping, dtype=np.float32)

    return _reference


def _check(graph, params, state, result):
    return compare_close("rank", bits_float(state["rank"]), result.rank, rtol=RANK_RTOL, graph=graph)


def make_pagerank(*, supersteps=30, damping=0.85, name="pagerank"):
    """A PageRank :class:`~gravfm.algorithms.Algorithm` whose hardware runs ``supersteps`` rounds.

    Parameters
    ----------
    supersteps : int
        Apply rounds (the last one silent), at least 1; the paper uses 30.
    damping : float
        Damping factor ``d`` in ``[0, 1]`` (rounded to float32 in the hardware, as in the
        float32 reference).
    name : str
        Name of the algorithm object.

    Raises
    ------
    gravfm.errors.ConfigError
        ``supersteps`` or ``damping`` out of range.
    """
    if isinstance(supersteps, bool) or not isinstance(supersteps, (int, np.integer)) or supersteps < 1:
        raise ConfigError(f"pagerank: supersteps must be a positive integer, not {supersteps!r}")
    if isinstance(damping, bool) or not isinstance(damping, (int, float)) or not 0.0 <= damping <= 1.0:
        raise ConfigError(f"pagerank: damping must be a number between 0 and 1, not {damping!r}")
    return Algorithm(
        name=name,
        vertex={"rank": 32, "sum": 32, "degree": 32},
        update={"contribution": 32},
        message={"contribution": 32},
        edge={},
        gather=_gather,
        apply=_apply_factory(int(supersteps), float(damping)),
        scatter=_scatter,
        initial_state=_initial_state_factory(float(damping)),
        reference=_reference_factory(int(supersteps), float(damping)),
        check=_check,
        # Gather only adds into ``sum``, apply only reads and clears it: kept in two banks, so
        # the next round's gather runs beside apply's pass (gravfm.hw.pe.vertex_memory).
        accumulator="sum",
        # Contributions to one vertex add up in any grouping (up to rounding): the gather stage
        # adds one whose vertex is in flight into one waiting instead of stalling (hubs).
        combiner=_combiner,
    )


#: PageRank as in the paper: 30 supersteps, damping 0.85.
PAGERANK = make_pagerank()
