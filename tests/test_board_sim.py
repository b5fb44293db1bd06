"""The whole SoC in simulation (issue 32): the FPGA top inside LiteX with LiteDRAM's DDR3 model,
driven over a simulated UART by the host driver, gives the harness back-end's answer and counts.

Needs the board extra (``make test-board`` installs it); each design is one LiteX + Verilator build
of about a minute, cached like every other build.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import check_pagerank_run, check_run, run_flow

pytest.importorskip("litex", reason="the board extra is not installed (make test-board installs it)")

from gravfm.board.backend import LitexBackend  # noqa: E402  (after the extra's check)

pytestmark = pytest.mark.board

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "examples"))

GRAPH = "rmat:scale=7,ef=8,seed=3"
#: Fixed capacities, so that a case's two back-ends and its PE counts share their builds.
SIZES = dict(local_bits=7, edges_per_pe=256)
CASES = {
    "wcc": {},
    "bfs": {"params": {"root": 0}},
    "pagerank": {},
    "sssp": {"params": {"root": 0}},
    # a user's algorithm with edge data (8-bit capacities) and a pipelined gather
    f"{REPOSITORY / 'examples' / 'widest_path.py'}:WIDEST_PATH": {"params": {"root": 0}},
}


def on_board(algorithm, *, pes, build_cache, edge_memory="offchip", backend=None):
    """``algorithm`` on the whole SoC (``backend``: the harness back-end's name instead)."""
    # On chip, edges_per_pe is a PE's whole edge memory, not the longest list.
    sizes = SIZES if edge_memory == "offchip" else {**SIZES, "edges_per_pe": 2048}
    return run_flow(algorithm, GRAPH, pes=pes, backend=backend or LitexBackend(cache_dir=build_cache),
                    edge_memory=edge_memory, cache_dir=build_cache, **sizes, **CASES[algorithm])


def both(algorithm, **options):
    """The same run on the whole SoC and on the harness back-end."""
    return on_board(algorithm, **options), on_board(algorithm, backend="verilator", **options)


def ci_case(algorithm, pes):
    """The case CI runs (``board_ci``): WCC on one PE; the others in ``make test-board``."""
    marks = [pytest.mark.board_ci] if (algorithm, pes) == ("wcc", 1) else []
    return pytest.param(algorithm, pes, marks=marks, id=f"{Path(algorithm.split(':')[0]).stem}-{pes}")


@pytest.mark.parametrize("algorithm,pes", [ci_case(algorithm, pes) for pes in (1, 4) for algorithm in CASES])
def test_whole_soc_gives_the_harness_answer_with_edges_in_ddr(algorithm, pes, build_cache):
    board, harness = both(algorithm, pes=pes, build_cache=build_cache)
    check = check_pagerank_run if algorithm == "pagerank" else check_run
    check(board)
    check(harness)
    assert board.backend == "litex" and board.edge_memory == "offchip"
    for field, values in harness.readback.state.items():
        if algorithm == "pagerank" and field == "rank":
            continue   # float sums in arrival order, which the DRAM's timing changes: checked above
        assert np.array_equal(board.readback.state[field], values), field
    assert board.messages == harness.messages
    assert board.readback.messages_per_superstep == harness.readback.messages_per_superstep
    # Edges from LiteDRAM's DDR3 model instead of the harness's memory model: other latencies, so
    # other cycles, never fewer than one per message on a PE.
    assert board.cycles >= board.messages / pes


@pytest.mark.board_ci
def test_edges_on_chip_take_the_harness_cycles_exactly(build_cache):
    """With no DRAM in the way the SoC's cycle counter agrees with the harness to the cycle: the
    host path (records, start, read stream) adds nothing to the run."""
    board, harness = both("wcc", pes=1, build_cache=build_cache, edge_memory="onchip")
    check_run(board)
    assert board.cycles == harness.cycles
    assert board.readback.round_log["cycle"].tolist() == harness.readback.round_log["cycle"].tolist()


def test_image_placed_by_backdoor_is_checked_over_the_bus(build_cache):
    """The backdoor (files of the DDR3 model's banks) gives the same DRAM as the bus path."""
    backdoor = on_board("bfs", pes=4, build_cache=build_cache,
                        backend=LitexBackend(cache_dir=build_cache, image_transfer="backdoor"))
    check_run(backdoor)
    assert backdoor.cycles == on_board("bfs", pes=4, build_cache=build_cache).cycles


def test_the_streams_through_csrs_give_the_same_run(build_cache):
    """The path a PCIe host takes (LitePCIe's BAR0 reaches the CSRs only): records and reads a word
    per CSR access, the same answer and cycles as through the window."""
    pcie = on_board("wcc", pes=1, build_cache=build_cache, edge_memory="onchip",
                    backend=LitexBackend(cache_dir=build_cache, csr_streams=True))
    window = on_board("wcc", pes=1, build_cache=build_cache, edge_memory="onchip")
    check_run(pcie)
    assert pcie.cycles == window.cycles and pcie.messages == window.messages
