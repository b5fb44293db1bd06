"""Boards joined (issue 33): several board SoCs in one simulation, their link ports on SERWB wires,
each driven over its own simulated UART, give the harness back-end's answer and message counts;
bit errors on the wires are recovered by the link check; an absent peer is named, never a hang.

Needs the board extra (``make test-board``); each design is one LiteX + Verilator build of a few
minutes (one per algorithm and FPGA count), cached like every other build.
"""

import numpy as np
import pytest

from conftest import check_pagerank_run, check_run, run_flow
from gravfm.flow import plan, prepare

pytest.importorskip("litex", reason="the board extra is not installed (make test-board installs it)")

from gravfm.board.backend import LitexBackend  # noqa: E402  (after the extra's check)
from gravfm.board.driver import BoardError  # noqa: E402
from gravfm.board.serwb import serwb_link_of  # noqa: E402
from gravfm.board.sim import WIRE_LATENCY_CYCLES  # noqa: E402

pytestmark = pytest.mark.board

GRAPH = "rmat:scale=5,ef=4,seed=1"
CASES = {"wcc": {}, "bfs": {"params": {"root": 0}}, "pagerank": {}}
SIZES = dict(local_bits=5, edges_per_pe=128)


def boards_link(algorithm, fpgas):
    """The boards' link for ``algorithm``'s items on ``fpgas`` FPGAs (the check's timers follow it)."""
    config = plan(prepare(algorithm, GRAPH, params=CASES[algorithm].get("params")), fpgas=fpgas, pes=1,
                  **SIZES).config
    return serwb_link_of(config, wire_latency=WIRE_LATENCY_CYCLES)


def rack_run(algorithm, *, fpgas, build_cache, backend=None, **backend_options):
    """``algorithm`` on ``fpgas`` simulated boards (``backend``: the harness back-end instead), the
    links those of the boards: SERWB wires with the link check retransmit."""
    backend = backend or LitexBackend(cache_dir=build_cache, timeout_s=900, **backend_options)
    return run_flow(algorithm, GRAPH, fpgas=fpgas, pes=1, backend=backend, link=boards_link(algorithm, fpgas),
                    edge_memory="onchip", cache_dir=build_cache, **SIZES, **CASES[algorithm])


@pytest.mark.parametrize("algorithm,fpgas", [
    pytest.param(algorithm, fpgas, marks=[pytest.mark.board_ci] if (algorithm, fpgas) == ("wcc", 2) else [],
                 id=f"{algorithm}-{fpgas}") for fpgas in (2, 4) for algorithm in CASES])
def test_boards_joined_give_the_harness_answer(algorithm, fpgas, build_cache):
    boards = rack_run(algorithm, fpgas=fpgas, build_cache=build_cache)
    harness = rack_run(algorithm, fpgas=fpgas, build_cache=build_cache, backend="verilator")
    check = check_pagerank_run if algorithm == "pagerank" else check_run
    check(boards)
    check(harness)
    assert boards.backend == "litex"
    for field, values in harness.readback.state.items():
        if algorithm == "pagerank" and field == "rank":
            continue   # float sums in arrival order: checked against the reference above
        assert np.array_equal(boards.readback.state[field], values), field
    assert boards.messages == harness.messages
    assert boards.readback.messages_per_superstep == harness.readback.messages_per_superstep
    rows = boards.readback.board_links
    assert len(rows) == fpgas * (fpgas - 1)
    assert all(row["frames_sent"] > 0 and row["frames_received"] > 0 and row["error"]["kind"] is None
               for row in rows)


def check_recovered(boards):
    """Verified, bits flipped on the wires, frames lost to them and replayed."""
    check_run(boards)
    rows = boards.readback.board_links
    assert sum(row["wire_bits_flipped"] for row in rows) > 0
    # A flipped bit costs a frame: dropped as a bad packet, or by the check's CRC, then replayed.
    assert sum(row["retransmissions"] for row in rows) > 0
    assert sum(row["bad_packets"] + row["discarded_in"] for row in rows) > 0


def test_bit_errors_on_the_wires_are_recovered_by_retransmission(build_cache):
    """A run of ~11k cycles: at 1e-3 per bit about one frame in six is hit."""
    check_recovered(rack_run("wcc", fpgas=2, build_cache=build_cache, link_ber=1e-3))


@pytest.mark.slow
def test_a_bit_error_rate_of_1e_5_is_recovered_on_a_longer_run(build_cache):
    """At 1e-5 per bit a run needs ~10**5 cycles or more on the wires to see a few errors: a larger graph."""
    sizes = dict(local_bits=10, edges_per_pe=8192)
    graph = "rmat:scale=10,ef=8,seed=1"
    config = plan(prepare("wcc", graph), fpgas=2, pes=1, **sizes).config
    link = serwb_link_of(config, wire_latency=WIRE_LATENCY_CYCLES)
    backend = LitexBackend(cache_dir=build_cache, timeout_s=3600, link_ber=1e-5)
    boards = run_flow("wcc", graph, fpgas=2, pes=1, backend=backend, link=link, edge_memory="onchip",
                      cache_dir=build_cache, **sizes)
    check_recovered(boards)
    assert boards.cycles > 100_000   # 204,364 measured: frames on the wires for the whole run


def test_an_absent_peer_is_named_not_waited_for(build_cache):
    backend = LitexBackend(cache_dir=build_cache, cut_wires=((1, 0),), bring_up_s=20)
    with pytest.raises(BoardError, match=r"^litex-sim board 0: link 0 to FPGA 1 did not come up .* after 20 s$"):
        rack_run("wcc", fpgas=2, build_cache=build_cache, backend=backend)
