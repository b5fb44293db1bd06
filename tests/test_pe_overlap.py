"""Apply overlapped with the next round's gather (sparse algorithms, forwarding gather).

Before, gather paused from a round's barrier until apply had visited every listed vertex, so a
PE took at least ``messages + apply_cycles`` cycles. Now a message of the next round is gathered
during the pass unless its vertex is still to be applied (it then waits in the retry queue),
which must keep the answers and every per-superstep count of the reference exact.
"""

import pytest

import gravfm.hw.pe.gather_forward as gather_forward
from conftest import check_run, random_graph, run_flow


@pytest.fixture
def tiny_retry_queue(monkeypatch):
    """A retry queue of 4 (room for 2): full in most passes, so gather also waits for apply."""
    monkeypatch.setattr(gather_forward, "retry_depth", lambda config: 4)


GRAPH = random_graph(48, 240, seed=7, name="overlap48")


@pytest.fixture
def serialized(monkeypatch):
    """The PE as before: gather pauses for the whole of every apply pass."""
    from gravfm.hw.pe import pe

    build = pe.build_gather_unit
    monkeypatch.setattr(pe, "build_gather_unit", lambda **arguments: build(**{**arguments, "overlap": False}))


@pytest.mark.parametrize("algorithm, params", [("wcc", {}), ("bfs", {"root": 3}), ("sssp", {"root": 3})])
def test_overlap_keeps_the_reference_counts(algorithm, params, request):
    overlapped = check_run(run_flow(algorithm, GRAPH, params=params))
    request.getfixturevalue("serialized")
    before = check_run(run_flow(algorithm, GRAPH, params=params))
    # Every pass after round 0's host list overlaps: fewer cycles, by at most the apply cycles.
    apply_cycles = int(before.readback.counters["apply_cycles"][0])
    assert before.cycles - apply_cycles <= overlapped.cycles < before.cycles


@pytest.mark.parametrize("algorithm, params", [("wcc", {}), ("bfs", {"root": 3})])
def test_full_retry_queue_waits_for_apply(algorithm, params, tiny_retry_queue):
    check_run(run_flow(algorithm, GRAPH, params=params))


def test_overlap_on_four_pes():
    check_run(run_flow("wcc", GRAPH, pes=4))


def test_report_breaks_down_the_cycles_above_the_message_bound():
    report = check_run(run_flow("bfs", GRAPH, params={"root": 3}, pes=2))
    overhead = report.to_dict()["superstep_overhead"]
    assert overhead["message_bound_cycles"] == report.messages / 2
    assert overhead["above_bound"] == report.cycles - report.messages / 2
    # Round 0's apply and the rounds' own overheads add up to the whole.
    assert overhead["first_apply"] + sum(overhead["per_superstep"]) == pytest.approx(overhead["above_bound"])
    assert overhead["apply_per_pe"] == report.stalls["apply_cycles"] / 2
