"""`gravfm run` end to end on the compiled simulator: generate, build, load, simulate, verify.

The default tests share one small build (2 PEs, fixed capacities) through a session cache; a
deliberately wrong algorithm with the same kernels reuses it too. Builds of other kernels
(BFS, a broken kernel, a deadlocking kernel) and real datasets are marked slow.
"""

import dataclasses
import json

import numpy as np
import pytest

from gravfm import datasets
from gravfm.algorithms import WCC
from gravfm.cli import main
from gravfm.flow import RunOptions, run

#: Capacities shared by every small run, so they all use one build.
SMALL = dict(pes=2, local_bits=5, edges_per_pe=512, edge_memory="onchip")


def small_run(algorithm, graph, build_cache, **changes):
    return run(RunOptions(algorithm=algorithm, graph=graph, cache_dir=str(build_cache), **{**SMALL, **changes}))


def check_figures(report):
    """Counts equal the reference's; the cycle count respects what a PE can do."""
    assert report.status == "done"
    assert report.messages == report.reference_messages
    assert report.supersteps == report.reference_supersteps
    assert sum(row.messages for row in report.rounds) == report.messages
    assert sum(pe["messages"] for pe in report.per_pe) == report.messages
    # A PE scatters at most one edge per cycle, and each superstep takes at least one cycle.
    assert report.cycles >= report.messages / report.total_pes
    assert report.cycles >= report.supersteps
    assert sum(row.cycles for row in report.rounds) <= report.cycles
    assert report.cpe >= 1.0 or report.messages == 0


@pytest.mark.parametrize("graph", ["tiny:grid", "tiny:two_components", "tiny:isolated",
                                   "uniform:n=40,deg=3,seed=2", "rmat:scale=5,ef=4,seed=3"])
def test_wcc_is_verified(graph, build_cache):
    report = small_run("wcc", graph, build_cache)
    assert report.verified, report.check_detail
    check_figures(report)


def test_another_graph_reuses_the_build(build_cache):
    first = small_run("wcc", "tiny:star", build_cache)
    second = small_run("wcc", "uniform:n=50,deg=2,seed=5", build_cache)
    assert first.verified and second.verified
    assert second.build_cached and second.build_key == first.build_key
    assert second.to_dict()["sim"]["build_cached"] is True


def _wrong_start(graph, params):
    state = WCC.initial_state(graph, params)
    label = np.array(state["label"])
    label[0] = graph.num_vertices - 1  # vertex 0 forgets its own id: its component's label is wrong
    return {**state, "label": label}


WRONG_START = dataclasses.replace(WCC, name="wcc_wrong_start", initial_state=_wrong_start)


def test_wrong_answer_is_not_verified(build_cache):
    right = small_run("wcc", "tiny:grid", build_cache)
    report = small_run(WRONG_START, "tiny:grid", build_cache)
    assert report.status == "done"
    assert right.verified and not report.verified
    assert "labels differ" in report.check_detail
    # Same kernels as WCC: the same build, served by the cache.
    assert report.build_cached and report.build_key == right.build_key


def test_cli_exits_nonzero_when_verification_fails(build_cache, tmp_path, capsys):
    source = tmp_path / "broken.py"
    source.write_text("import dataclasses\nimport numpy as np\nfrom gravfm.algorithms import WCC\n"
                      "def start(graph, params):\n"
                      "    label = np.arange(graph.num_vertices)\n"
                      "    label[0] = graph.num_vertices - 1\n"
                      "    return {'label': label, 'active': np.ones(graph.num_vertices)}\n"
                      "BROKEN = dataclasses.replace(WCC, name='broken', initial_state=start)\n")
    out = tmp_path / "r.json"
    common = ["--graph", "tiny:grid", "--pes", "2", "--vertices-per-pe", "32", "--edges-per-pe", "512",
              "--cache", str(build_cache), "--quiet", "--json", str(out)]
    assert main(["run", f"{source}:BROKEN", *common]) == 1
    assert json.loads(out.read_text())["verified"] is False
    assert main(["run", "wcc", *common]) == 0
    data = json.loads(out.read_text())
    assert data["verified"] is True and data["graph"]["vertices"] == 16
    lines = capsys.readouterr().out.splitlines()  # --quiet: one result line per run
    assert len(lines) == 2 and lines[0].startswith("broken on tiny:grid: done, NOT VERIFIED (")  # and why
    assert lines[1].startswith(f"wcc on tiny:grid: done, verified, {data['cycles']:,} cycles, 192 messages")


def test_amaranth_and_verilator_agree_cycle_for_cycle(build_cache):
    compiled = small_run("wcc", "tiny:grid", build_cache)
    interpreted = small_run("wcc", "tiny:grid", build_cache, backend="amaranth")
    assert compiled.verified and interpreted.verified
    assert compiled.cycles == interpreted.cycles
    assert compiled.per_pe == interpreted.per_pe
    assert compiled.rounds == interpreted.rounds


# ---- slow: other builds and real datasets ---------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("graph,root", [("tiny:binary_tree", 0), ("tiny:dag", 1),
                                        ("uniform:n=40,deg=3,seed=2", 7)])
def test_bfs_is_verified(graph, root, build_cache):
    report = small_run("bfs", graph, build_cache, root=root)
    assert report.verified, report.check_detail
    check_figures(report)


def _gather(layouts, drive):
    """A gather kernel whose body is ``drive(m, kernel)`` (a deliberately wrong kernel)."""
    from amaranth.hdl import Module
    from amaranth.lib import wiring

    from gravfm.hw.kernels import gather_signature

    class TestGather(wiring.Component):
        def __init__(self):
            super().__init__(gather_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            drive(m, self)
            return m

    return TestGather()


def _max_gather(layouts):
    """WCC's gather made wrong on purpose: it keeps the LARGER label."""
    from amaranth.hdl import Mux

    def drive(m, kernel):
        i, o = kernel.i.payload, kernel.o.payload
        larger = i.message.label > i.state.label
        m.d.comb += [o.nodeid.eq(i.nodeid), o.state.label.eq(Mux(larger, i.message.label, i.state.label)),
                     o.state.active.eq(larger | i.state.active),
                     kernel.o.valid.eq(kernel.i.valid), kernel.i.ready.eq(kernel.o.ready)]

    return _gather(layouts, drive)


def _stuck_gather(layouts):
    """A gather that never accepts a message: the system must deadlock, and the watchdog stop it."""
    def drive(m, kernel):
        m.d.comb += [kernel.i.ready.eq(0), kernel.o.valid.eq(0)]

    return _gather(layouts, drive)


@pytest.mark.slow
def test_broken_kernel_is_not_verified(build_cache):
    broken = dataclasses.replace(WCC, name="wcc_max", gather=_max_gather)
    report = small_run(broken, "tiny:grid", build_cache)
    assert not report.verified
    assert not report.build_cached


@pytest.mark.slow
def test_deadlock_is_stopped_and_explained(build_cache, tmp_path):
    stuck = dataclasses.replace(WCC, name="wcc_stuck", gather=_stuck_gather)
    # Past the kernel contract check, which would refuse the stuck gather before the build.
    report = small_run(stuck, "tiny:grid", build_cache, watchdog_cycles=5000, check_kernels=False)
    assert report.status == "stalled"
    assert not report.verified and "did not terminate: stalled" in report.check_detail
    assert report.cycles < 5000 + 2 * 1250 + 1000
    assert report.diagnosis and any(line.startswith("PE 0") for line in report.diagnosis)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["wcc", "bfs"])
@pytest.mark.parametrize("dataset", ["facebook_combined.txt", "CA-GrQc.txt", "inf-euroroad.edges"])
def test_datasets_are_verified(algorithm, dataset, tmp_path):
    path = datasets.path(dataset)
    out = tmp_path / "r.json"
    code = main(["run", algorithm, "--edge-memory", "onchip", "--graph", str(path), "--pes", "4", "--quiet", "--json", str(out)])
    data = json.loads(out.read_text())
    assert code == 0 and data["verified"] is True
    assert data["messages"] == data["reference"]["messages"]
