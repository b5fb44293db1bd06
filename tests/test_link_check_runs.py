"""Whole systems on faulty links (issue 24): with the link check in detect mode every fault stops
the run within a few thousand cycles, naming the link, the item's sequence number and the kind;
with retransmission every run recovers and verifies; without the check no fault passes unseen
as a verified wrong answer. Faults are asserted to have happened, from the link counters."""

import dataclasses
import re

import numpy as np
import pytest

from gravfm.flow import RunOptions, run
from gravfm.hw.link import LinkConfig
from gravfm.hw.link_check import LinkCheck
from gravfm.hw.multi.link_report import link_faults
from gravfm.sim.readback import Readback, with_link_faults
from gravfm.sim.verilator_backend import VerilatorBackend

from conftest import check_run, run_flow

SMALL = "rmat:scale=7,ef=8,seed=2"
MEDIUM = "rmat:scale=9,ef=8,seed=1"
FAULTS = {"drop": "drop_rate", "duplicate": "duplicate_rate", "flip": "flip_rate"}
KIND = {"drop": "lost", "duplicate": "duplicate", "flip": "corrupt", "dead": "dead"}
#: How soon after the first fault a detecting run must stop (cycles).
PROMPT = 5000


def simulate(algorithm, graph, *, fpgas, pes=1, arch="gravfm", link, cache, per_fpga=True, threads=None,
             watchdog=1 << 17, **capacities):
    backend = VerilatorBackend(cache_dir=cache, per_fpga=per_fpga, watchdog_cycles=watchdog, threads=threads)
    return run(RunOptions(algorithm=algorithm, graph=graph, fpgas=fpgas, pes=pes, arch=arch, link=link,
                          backend=backend, params={"root": 0} if algorithm == "bfs" else None,
                          edge_memory="onchip", **capacities))   # the faults' timing was chosen with on-chip edges


def faulty_link(kind, rate, *, check, fpgas, **options):
    """A link with faults of ``kind`` at ``rate`` (for ``dead``: the link from the last FPGA to
    FPGA 0 dies ``rate`` cycles after its first item)."""
    if kind == "dead":
        return LinkConfig(check=check, dead=((fpgas - 1, 0, rate),), **options)
    return LinkConfig(check=check, **{FAULTS[kind]: rate}, **options)


def injected(report):
    """Faults the links injected, by kind, and the cycle (from reset) of the first."""
    links = report.readback.links
    counts = {name: int(links[name].sum()) for name in ("dropped", "duplicated", "flipped")}
    faulted = (links["dropped"] + links["duplicated"] + links["flipped"]) > 0
    return counts, int(links["first_fault"][faulted].min()) if faulted.any() else None


def hit_a_running_fpga(report):
    """Whether a link's first fault came while the FPGA it feeds had not detected termination (a
    fault into a finished FPGA cannot change its result, and is no error)."""
    links, counters = report.readback.links, report.readback.counters
    p, n = report.pes_per_fpga, report.fpgas
    finished = [int(counters["cycles"][f * p:(f + 1) * p].max()) for f in range(n)]
    faulted = links["dropped"] + links["duplicated"] + links["flipped"]
    # first_fault counts from reset: two reset cycles, the load, the start pulse.
    return any(faulted[a, k] and int(links["first_fault"][a, k]) - report.load_cycles - 3 < finished[b]
               for a in range(n) for k, b in enumerate(b for b in range(n) if b != a))


def check_stopped(report, *kinds):
    """The run stopped on a link error of one of ``kinds``, named, soon after the first fault."""
    counts, first = injected(report)
    assert hit_a_running_fpga(report), "no fault happened during the run: the test proves nothing"
    assert report.status == "link_error" and not report.verified, (report.status, report.check_detail)
    line = report.diagnosis[0]
    named = "|".join(KIND[kind] for kind in kinds)
    assert re.match(rf"link (\d)->(\d) \(FPGA \1 -> FPGA \2\): ({named}): .*sequence number \d+", line), line
    assert report.check_detail == f"link error: {line}"
    # The harness counts from reset: the stop is the load, then the run's cycles.
    assert 0 <= report.load_cycles + report.cycles - first <= PROMPT, (report.load_cycles + report.cycles, first)


def check_recovered(report):
    """The run verified in every count, and faults happened and were replayed."""
    check_run(report)
    counts, _ = injected(report)
    assert sum(counts.values()) > 0, "no fault happened: the test proves nothing"
    links = report.links
    assert links["check"] == "retransmit" and links["discarded"] > 0
    if counts["dropped"] or counts["flipped"]:
        assert links["retransmissions"] > 0
    return counts


@pytest.mark.parametrize("kind, rate", [("drop", 0.01), ("duplicate", 0.01), ("flip", 0.01), ("dead", 100)])
def test_detect_stops_at_the_first_fault_and_names_it(kind, rate, build_cache):
    link = faulty_link(kind, rate, check="detect", fpgas=2)
    check_stopped(simulate("wcc", SMALL, fpgas=2, link=link, cache=build_cache), kind)


@pytest.mark.parametrize("algorithm, arch, fpgas", [
    ("wcc", "gravfm", 2), pytest.param("bfs", "gravf", 3, marks=pytest.mark.slow)])
def test_retransmission_recovers_from_every_fault_kind(algorithm, arch, fpgas, build_cache):
    link = LinkConfig(check="retransmit", drop_rate=0.01, duplicate_rate=0.01, flip_rate=0.01)
    counts = check_recovered(simulate(algorithm, SMALL, fpgas=fpgas, arch=arch, link=link, cache=build_cache))
    assert all(counts.values()), counts


def test_retransmission_cannot_revive_a_dead_link(build_cache):
    link = faulty_link("dead", 0, check="retransmit", fpgas=2)
    check_stopped(simulate("wcc", SMALL, fpgas=2, link=link, cache=build_cache), "dead")


def test_per_fpga_simulation_is_the_whole_system_with_the_check_and_faults(build_cache):
    """The harness's C++ link models, held counters and error stop, against the RTL of the whole
    system; and two threads change nothing."""
    link = LinkConfig(check="retransmit", drop_rate=0.01, duplicate_rate=0.01, flip_rate=0.01)
    figures = []
    for per_fpga, threads in ((True, 1), (False, None), (True, 2)):
        result = simulate("wcc", SMALL, fpgas=2, link=link, cache=build_cache, per_fpga=per_fpga,
                          threads=threads).to_dict()
        result.pop("sim")
        figures.append(result)
    assert figures[0] == figures[1] == figures[2]
    assert figures[0]["links"]["retransmissions"] > 0


def test_the_amaranth_simulator_recovers_and_stops_alike():
    """A whole system under Amaranth's simulator: a link error ends it through ``done``."""
    link = LinkConfig(check="retransmit", drop_rate=0.05, duplicate_rate=0.02, flip_rate=0.05)
    check_recovered(run_flow("bfs", "tiny:grid", fpgas=3, arch="gravf", link=link, params={"root": 0}))
    stopped = run_flow("wcc", "tiny:grid", fpgas=2, link=LinkConfig(check="detect", duplicate_rate=0.05))
    check_stopped(stopped, "duplicate")


@pytest.mark.slow
def test_both_simulators_agree(build_cache):
    link = LinkConfig(check="retransmit", drop_rate=0.05, flip_rate=0.05)
    reports = [run_flow("wcc", "tiny:grid", fpgas=2, link=link, **options)
               for options in ({}, {"backend": "verilator", "cache_dir": build_cache})]
    for report in reports:
        check_recovered(report)
    assert reports[0].links == reports[1].links and reports[0].cycles == reports[1].cycles


def test_without_the_check_a_lost_item_is_a_stall_never_a_pass(build_cache):
    # The capacities of tests/test_sim_per_fpga.py's build-sharing test: the same FPGA design.
    report = simulate("wcc", SMALL, fpgas=2, link=LinkConfig(drop_rate=0.02), cache=build_cache, watchdog=1 << 12,
                      local_bits=7, edges_per_pe=2048)
    assert injected(report)[0]["dropped"] > 0
    assert report.status == "stalled" and not report.verified
    assert any("the link injected faults" in line for line in report.diagnosis), report.diagnosis


def test_counts_that_do_not_add_up_are_an_error():
    """Without the check, a link that delivered more than it took fails the run, even one that
    finished (a duplicated barrier once verified: 7 delivered for 6 sent)."""
    counters = {name: np.zeros((2, 1), dtype=np.int64) for name in
                ("items", "delivered", "barriers_sent", "barriers_delivered")}
    counters["items"][:] = counters["delivered"][:] = 50
    counters["barriers_sent"][:] = counters["barriers_delivered"][:] = 6
    assert link_faults(counters, fpgas=2, check=LinkCheck()) == ()
    counters["barriers_delivered"][1, 0] = 7
    (line,) = link_faults(counters, fpgas=2, check=LinkCheck())
    assert line.startswith("link 1->0 (FPGA 1 -> FPGA 0): counts do not add up: 50 items delivered for 50 sent, "
                           "7 barriers for 6")

    readback = Readback(status="done", cycles=10, load_cycles=5, state={}, counters={}, round_log={},
                        links=counters)
    judged = with_link_faults(readback, fpgas=2, check=LinkCheck())
    assert judged.status == "link_error" and judged.diagnosis == (line,)
    stopped = dataclasses.replace(readback, status="max_cycles")   # judged by its own status
    assert with_link_faults(stopped, fpgas=2, check=LinkCheck()) is stopped


# The rest of the matrix (slow): both architectures, both algorithms, 2-4 FPGAs, the platform's
# links, rates of 1e-3 per item on a larger graph.
@pytest.mark.slow
@pytest.mark.parametrize("fpgas", [2, 3, 4])
@pytest.mark.parametrize("arch", ["gravfm", "gravf"])
@pytest.mark.parametrize("algorithm", ["wcc", "bfs"])
def test_every_fault_kind_everywhere(algorithm, arch, fpgas, build_cache):
    for kind in ("drop", "duplicate", "flip", "dead"):
        rate = 200 if kind == "dead" else 0.01
        link = faulty_link(kind, rate, check="detect", fpgas=fpgas, seed=fpgas)
        check_stopped(simulate(algorithm, MEDIUM, fpgas=fpgas, pes=2, arch=arch, link=link, cache=build_cache), kind)
    link = LinkConfig(check="retransmit", drop_rate=1e-3, duplicate_rate=1e-3, flip_rate=1e-3, seed=fpgas)
    check_recovered(simulate(algorithm, MEDIUM, fpgas=fpgas, pes=2, arch=arch, link=link, cache=build_cache))


@pytest.mark.slow
@pytest.mark.parametrize("check", ["detect", "retransmit"])
@pytest.mark.parametrize("arch", ["gravfm", "gravf"])
def test_platform_links_with_faults(check, arch, build_cache):
    """The paper's links (300 cycles of latency, their bandwidth) and stalls, 1e-3 per item."""
    options = dict(check=check, drop_rate=1e-3, duplicate_rate=1e-3, flip_rate=1e-3, stall_probability=0.3)
    platform = LinkConfig.from_platform("ac510x4", 4, **options)
    report = simulate("wcc", MEDIUM, fpgas=4, pes=2, arch=arch, link=platform, cache=build_cache)
    if check == "retransmit":
        check_recovered(report)
    else:
        check_stopped(report, "drop", "duplicate", "flip")


#: The hardest links the issue's user tried: 70% stalls, 1 bit per cycle over 2,000 cycles of
#: latency, a depth-1 FIFO.
HARD_LINKS = {"stalling": dict(stall_probability=0.7), "far": dict(bits_per_cycle=1.0, latency_cycles=2000,
                                                                   fifo_depth=2016),
              "depth1": dict(fifo_depth=1, latency_cycles=1)}


@pytest.mark.slow
@pytest.mark.parametrize("hard", sorted(HARD_LINKS))
def test_hard_links_with_faults(hard, build_cache):
    link = LinkConfig(check="retransmit", drop_rate=0.01, duplicate_rate=0.01, flip_rate=0.01, **HARD_LINKS[hard])
    check_recovered(simulate("bfs", SMALL, fpgas=3, link=link, cache=build_cache))
    link = LinkConfig(check="detect", flip_rate=0.01, **HARD_LINKS[hard])
    check_stopped(simulate("wcc", SMALL, fpgas=3, link=link, cache=build_cache), "flip")
    # Without faults the check is silent however slow the link: no false alarm.
    check_run(simulate("wcc", SMALL, fpgas=3, link=LinkConfig(check="detect", **HARD_LINKS[hard]), cache=build_cache))
