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


def check_identical(algorithm, graph, *, fpgas, pes, arch, link, cache):
    separate = figures(algorithm, graph, fpgas=fpgas, pes=pes, arch=arch, link=LINKS[link], per_fpga=True,
                       cache=cache)
    whole = figures(algorithm, graph, fpgas=fpgas, pes=pes, arch=arch, link=LINKS[link], per_fpga=False,
                    cache=cache)
    differing = sorted(key for key in whole if separate.get(key) != whole[key])
    assert not differing, {key: (separate.get(key), whole[key]) for key in differing}
    assert separate["links"]["per_link"], "several FPGAs must report their links"


# The default suite: both architectures, every kind of link, 2 and 3 FPGAs.
@pytest.mark.parametrize("algorithm,fpgas,arch,link", [
    ("wcc", 2, "gravfm", "reordering"),
    ("bfs", 3, "gravf", "stalling"),
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
