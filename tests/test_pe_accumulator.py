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


def _vertex_memories(algorithm):
    """``{memory name: (width, read ports)}`` of the vertex memories of a one-PE top."""
    from amaranth.hdl import Fragment, Shape
    from amaranth.hdl._mem import MemoryInstance

    from gravfm.flow.elaboration import elaborate
    from gravfm.flow.planning import plan
    from gravfm.flow.preparation import prepare
    from gravfm.graph.tiny import tiny_graph

    top = elaborate(plan(prepare(algorithm, tiny_graph("star")), pes=1), kernel_check=False)
    found = {}

    def walk(fragment, name):
        if isinstance(fragment, MemoryInstance) and name.startswith("vertex"):
            found[name] = (Shape.cast(fragment._data.shape).width, len(fragment._read_ports))
        for sub, sub_name, *_ in fragment.subfragments:
            walk(sub, str(sub_name))

    walk(Fragment.get(top, None), "top")
    return found


def test_block_ram_per_vertex():
    """A read port is a copy of a block RAM: 2 x 64 + 2 x 2 x 32 = 256 bits per vertex apart,
    3 x (96 + 2 flags) = 294 shared (gather no longer keeps a copy of rank and degree)."""
    split = _vertex_memories(SHORT)
    assert split == {"vertex_rest": (64, 2), "vertex_acc0": (32, 2), "vertex_acc1": (32, 2)}
    assert _vertex_memories(dataclasses.replace(SHORT, accumulator=None)) == {"vertex_mem": (98, 3)}
    assert sum(width * ports for width, ports in split.values()) == 256
