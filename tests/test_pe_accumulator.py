"""An accumulator kept apart from the vertex state (:mod:`gravfm.hw.pe.vertex_memory`): PageRank's
next-round gather runs beside apply's pass.

Before, gather paused for the whole of every pass (one write port for every message's sum and
every vertex's apply), so a PE took at least ``messages + apply_cycles`` cycles. Now ``sum`` sits
in two banks by round parity and the pass clears the bank the next round's gather does not
use, which must keep the ranks and every per-superstep count of the reference exact.
"""

import dataclasses

import pytest

from conftest import check_pagerank_run, random_graph, run_flow
from gravfm.algorithms import WCC, make_pagerank
from gravfm.errors import ConfigError

SHORT = make_pagerank(supersteps=4)
#: Enough vertices that a pass outlasts the apply kernel's latency: messages of the next round
#: reach gather while it runs.
GRAPH = random_graph(64, 400, seed=3, name="accumulate64")


def test_gather_beside_apply_is_exact_and_faster():
    overlapped, rank = check_pagerank_run(run_flow(SHORT, GRAPH))
    serialized, rank_before = check_pagerank_run(run_flow(dataclasses.replace(SHORT, accumulator=None), GRAPH))
    # One PE: messages reach a vertex in sender order either way, so the ranks are bit-identical.
    assert (rank == overlapped.prepared.reference.rank).all() and (rank == rank_before).all()
    apply_cycles = int(serialized.readback.counters["apply_cycles"][0])
    assert serialized.cycles - apply_cycles <= overlapped.cycles < serialized.cycles


@pytest.mark.parametrize("options", [{"pes": 4}, {"fpgas": 2, "pes": 2}, {"pes": 2, "arch": "gravf"},
                                     {"pes": 2, "edge_memory": "offchip"}],
                         ids=["4pe", "2fpga", "gravf", "offchip"])
def test_several_pes_fpgas_and_architectures(options):
    check_pagerank_run(run_flow(SHORT, random_graph(24, 120, seed=4), **options))


def test_accumulator_must_be_a_vertex_field_of_a_dense_apply():
    with pytest.raises(ConfigError, match="accumulator 'total' is not in the vertex layout"):
        dataclasses.replace(SHORT, accumulator="total")
    with pytest.raises(ConfigError, match="accumulator and sparse_apply cannot be combined"):
        dataclasses.replace(WCC, accumulator="label")
    with pytest.raises(ConfigError, match="is the only vertex field"):
        dataclasses.replace(SHORT, vertex={"sum": 32}, accumulator="sum")
