"""Combining in the gather stage's parking slots (:mod:`gravfm.hw.pe.parking`).

With the algorithm's combiner (PageRank: add two contributions) a message whose vertex is in
flight is added into one parked for it instead of stalling the stream, so a hub's PE keeps
taking a message per cycle when messages from several PEs reach the hub a cycle or two apart.
One PE keeps the single parking slot and the reference's summation order.
"""

import dataclasses

import numpy as np
import pytest

from conftest import check_pagerank_run, run_flow
from gravfm.algorithms import make_pagerank
from gravfm.errors import ConfigError
from gravfm.graph import Graph

SHORT = make_pagerank(supersteps=4)


def hub_graph(vertices=64, extra=96, seed=5):
    """Every vertex points at vertex 0 (the hub) and at a few random others."""
    rng = np.random.default_rng(seed)
    sources = np.concatenate([np.arange(1, vertices), rng.integers(0, vertices, extra)])
    targets = np.concatenate([np.zeros(vertices - 1, dtype=np.int64), rng.integers(1, vertices, extra)])
    return Graph.from_edges(sources, targets, num_vertices=vertices, name="hub64")


def stalls(report):
    return int(np.sum(report.readback.counters["stall_hazard"]))


def test_a_hub_is_combined_not_stalled():
    graph = hub_graph()
    combined, rank = check_pagerank_run(run_flow(SHORT, graph, pes=2))
    waited, rank_waited = check_pagerank_run(run_flow(dataclasses.replace(SHORT, combiner=None), graph, pes=2))
    assert combined.readback.counters["messages"].sum() == waited.readback.counters["messages"].sum()
    # The hub takes 63 of each round's ~160 messages: one write-back at a time it held the
    # stream for most of its 7-cycle window per message; combined it does not (574 against
    # 1,453 cycles, hazard stalls 212 against 808 when written).
    assert combined.cycles < 0.6 * waited.cycles, (combined.cycles, waited.cycles)
    assert stalls(combined) < stalls(waited) / 2, (stalls(combined), stalls(waited))
    # Only the grouping of the hub's float sum differs.
    assert np.allclose(rank, rank_waited, rtol=1e-5, atol=0)


@pytest.mark.parametrize("options", [{"fpgas": 2, "pes": 2}, {"pes": 2, "edge_memory": "offchip"}],
                         ids=["2fpga", "offchip"])
def test_combining_across_fpgas_and_off_chip(options):
    check_pagerank_run(run_flow(SHORT, hub_graph(48, 60, seed=6), **options))


def test_combining_while_the_gather_kernel_stalls():
    """The read stage waits while the kernel stalls (every third cycle): combining must keep
    the parked messages and the one in the read stage as they are (an earlier read stage that
    selected its message behind a registered source failed this without its held copy)."""
    from test_hw_kernels import Delayed, run_unchecked   # the slow-kernel wrapper of those tests

    slow = dataclasses.replace(SHORT, gather=lambda layouts: Delayed(SHORT.gather(layouts), port="o", stages=2,
                                                                     stall_period=3))
    report, rank = check_pagerank_run(run_unchecked(slow, hub_graph(), pes=2))
    assert stalls(report) > 0
    _, unstalled = check_pagerank_run(run_flow(SHORT, hub_graph(), pes=2))
    assert np.allclose(rank, unstalled, rtol=1e-5, atol=0)


def test_one_pe_keeps_the_reference_order():
    report, rank = check_pagerank_run(run_flow(SHORT, hub_graph(32, 40, seed=7)))
    assert (rank == report.prepared.reference.rank).all()


def test_a_combiner_must_be_callable():
    with pytest.raises(ConfigError, match="combiner must be callable"):
        dataclasses.replace(SHORT, combiner=3)


def test_a_combinational_combiner_is_refused():
    from gravfm.hw import SystemConfig
    from gravfm.hw.layouts import KernelLayouts
    from gravfm.hw.pe.parking import parking_for

    from amaranth.hdl import Module
    from amaranth.lib import wiring

    from gravfm.hw.kernels import combiner_signature

    class Instant(wiring.Component):   # declares latency 0 on its signature
        def __init__(self, layouts):
            super().__init__(combiner_signature(layouts, latency=0))

        def elaborate(self, platform):
            return Module()

    def instant(layouts):
        return Instant(layouts)

    algorithm = dataclasses.replace(SHORT, combiner=instant)
    config = SystemConfig.of(algorithm, pes_per_fpga=2)
    with pytest.raises(TypeError, match="latency of at least 1 cycle"):
        parking_for(KernelLayouts(algorithm, config), config)
