"""A system of several FPGAs simulated as one compiled FPGA model per FPGA, joined by C++ link
models (issue 19), against the monolithic model of the whole system: the same cycles,
per-superstep rows, PE counters and per-link counters, link by link, for every kind of link."""

import pytest

from gravfm.flow import RunOptions, run
from gravfm.hw.link import LinkConfig
from gravfm.sim.verilator_backend import VerilatorBackend

LINKS = {
    "default": LinkConfig(),
    "reordering": LinkConfig(reorder_window=4, seed=3),
    "stalling": LinkConfig(stall_probability=0.6, seed=5),
    "slow": LinkConfig(bits_per_cycle=3.5, latency_cycles=40, fifo_depth=48),
    "depth1": LinkConfig(fifo_depth=1, latency_cycles=1),
    # Threads meeting every latency - 2 = 10 cycles (harness_system.h): with room in the FIFOs,
    # and with FIFOs too small for a whole quantum (shorter quanta, full ones cycle by cycle).
    "long": LinkConfig(latency_cycles=12, fifo_depth=32, reorder_window=2, stall_probability=0.3, seed=7),
    "nearly_full": LinkConfig(latency_cycles=12, fifo_depth=4, bits_per_cycle=40.0, seed=9),
}


def figures(algorithm, graph, *, fpgas, pes, arch, link, per_fpga, cache, threads=None):
    """The run's JSON figures without wall times and build details."""
    backend = VerilatorBackend(cache_dir=cache, per_fpga=per_fpga, watchdog_cycles=1 << 18, threads=threads)
    report = run(RunOptions(edge_memory="onchip", algorithm=algorithm, graph=graph, fpgas=fpgas, pes=pes, arch=arch, link=link,
                            backend=backend))
    assert report.verified, report.check_detail
    if threads is not None:
        assert report.threads == threads
    result = report.to_dict()
    result.pop("sim")
    return result


def check_identical(algorithm, graph, *, fpgas, pes, arch, link, cache, threads=None):
    separate = figures(algorithm, graph, fpgas=fpgas, pes=pes, arch=arch, link=LINKS[link], per_fpga=True,
                       cache=cache, threads=threads)
    whole = figures(algorithm, graph, fpgas=fpgas, pes=pes, arch=arch, link=LINKS[link], per_fpga=False,
                    cache=cache)
    differing = sorted(key for key in whole if separate.get(key) != whole[key])
    assert not differing, {key: (separate.get(key), whole[key]) for key in differing}
    assert separate["links"]["per_link"], "several FPGAs must report their links"


# The default suite: both architectures, 2 and 3 FPGAs, a slow and a one-deep link; reordering
# and stalling links are in test_threads_meeting_every_quantum_are_cycle_identical's "long" link.
# The other two cases build monolithic models of their own (~40 s each on an idle machine), so
# they run with the slow tests (`make test-all`), beside the sweep over every link below.
@pytest.mark.parametrize("algorithm,fpgas,arch,link", [
    pytest.param("wcc", 2, "gravfm", "reordering", marks=pytest.mark.slow),
    pytest.param("bfs", 3, "gravf", "stalling", marks=pytest.mark.slow),
    ("wcc", 3, "gravfm", "slow"),
    ("bfs", 2, "gravf", "depth1"),
])
def test_per_fpga_simulation_is_cycle_identical(algorithm, fpgas, arch, link, build_cache):
    check_identical(algorithm, "rmat:scale=7,ef=8,seed=2", fpgas=fpgas, pes=1, arch=arch, link=link,
                    cache=build_cache)


@pytest.mark.slow
@pytest.mark.parametrize("link", sorted(LINKS))
@pytest.mark.parametrize("arch", ["gravfm", "gravf"])
@pytest.mark.parametrize("fpgas", [2, 3, 4])
def test_per_fpga_simulation_is_cycle_identical_everywhere(fpgas, arch, link, build_cache):
    for algorithm in ("wcc", "bfs"):
        check_identical(algorithm, "rmat:scale=8,ef=8,seed=1", fpgas=fpgas, pes=2, arch=arch, link=link,
                        cache=build_cache)


@pytest.fixture
def schedules(monkeypatch):
    """The harness's schedule of every compiled run in the test: (quantum, quanta, quantum cycles, cycles)."""
    from gravfm.sim import verilator_backend

    seen, real = [], verilator_backend.run_simulator

    def spy(*args, **kwargs):
        outcome = real(*args, **kwargs)
        seen.append((outcome.quantum, outcome.quanta, outcome.quantum_cycles, outcome.cycles))
        return outcome

    monkeypatch.setattr(verilator_backend, "run_simulator", spy)  # the name the back-end calls
    return seen


def test_threads_meeting_every_quantum_are_cycle_identical(schedules, build_cache):
    """Links of latency 12: two threads advance 3 FPGAs up to 10 cycles apart, as the serial schedule."""
    check_identical("wcc", "rmat:scale=7,ef=8,seed=2", fpgas=3, pes=1, arch="gravfm", link="long",
                    cache=build_cache, threads=2)
    (quantum, quanta, in_quanta, cycles), monolithic = schedules
    assert monolithic[:2] == (0, 0)
    assert quantum == 10 and in_quanta > cycles // 2 and in_quanta > 5 * quanta, schedules[0]


def test_nearly_full_link_fifos_shorten_the_quanta(schedules, build_cache):
    """A link FIFO of 3 free entries at most: quanta of at most 3 cycles, full FIFOs cycle by cycle."""
    check_identical("bfs", "rmat:scale=7,ef=8,seed=2", fpgas=2, pes=1, arch="gravf", link="nearly_full",
                    cache=build_cache, threads=2)
    quantum, quanta, in_quanta, cycles = schedules[0]
    assert quantum == 10 and quanta > 0 and in_quanta <= 3 * quanta and in_quanta < cycles, schedules[0]


def test_the_build_does_not_depend_on_the_graph(build_cache):
    """The build key is the FPGA design's: another graph of the same capacities reuses it."""
    keys = set()
    for graph in ("rmat:scale=7,ef=8,seed=2", "rmat:scale=7,ef=8,seed=3"):
        backend = VerilatorBackend(cache_dir=build_cache)
        report = run(RunOptions(edge_memory="onchip", algorithm="wcc", graph=graph, fpgas=2, pes=1, link=LINKS["default"],
                                backend=backend, local_bits=7, edges_per_pe=2048))
        assert report.verified
        keys.add(report.build_key)
    assert len(keys) == 1


def test_threads_change_nothing(build_cache):
    """The same run with one and with two threads: identical figures apart from wall times."""
    results = [figures("bfs", "rmat:scale=7,ef=8,seed=2", fpgas=3, pes=1, arch="gravfm", link=LINKS["stalling"],
                       per_fpga=True, cache=build_cache, threads=threads) for threads in (1, 2)]
    assert results[0] == results[1]


def test_more_threads_than_fpgas_is_refused(build_cache):
    from gravfm.errors import ConfigError

    backend = VerilatorBackend(cache_dir=build_cache, threads=3)
    with pytest.raises(ConfigError, match="threads=3: more threads than the system's 2 FPGAs"):
        run(RunOptions(edge_memory="onchip", algorithm="wcc", graph="tiny:grid", fpgas=2, pes=1, backend=backend))


def test_threads_with_the_amaranth_backend_are_refused_not_ignored(capsys):
    from conftest import cli_error

    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--backend", "amaranth", "--threads", "2",
                     "--edge-memory", "onchip")
    assert "--threads" in line and "Amaranth simulator" in line
