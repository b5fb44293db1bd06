"""The compiled simulator's parallel load (:class:`~gravfm.hw.FpgaTop`'s ``load`` ports): every PE of
an FPGA takes a write in the same cycle, the top's own codes come over the host bus beside them,
and the run that follows is the one a load over the host bus alone (a board's) gives, cycle for cycle."""

from collections import Counter

import pytest

from gravfm.flow import RunOptions, run
from gravfm.hw.protocol import TOP_WRITE_CODES
from gravfm.sim import verilator_backend
from gravfm.sim.verilator_backend import VerilatorBackend


@pytest.fixture
def loads(monkeypatch):
    """Every compiled run of the test: (its host writes, its outcome)."""
    seen, real = [], verilator_backend.run_simulator

    def spy(build, writes, **options):
        outcome = real(build, writes, **options)
        seen.append((writes, outcome))
        return outcome

    monkeypatch.setattr(verilator_backend, "run_simulator", spy)  # the name the back-end calls
    return seen


def clocked_cycles(writes, pes_per_fpga, *, parallel):
    """The longest queue of any port: per FPGA its host bus, and (``parallel``) each PE's own port
    for every code but the top's."""
    queues = Counter()
    for pe, mem in zip(writes.pe.tolist(), writes.mem.tolist()):
        fpga = pe // pes_per_fpga
        queues[(fpga, pe % pes_per_fpga) if parallel and mem not in TOP_WRITE_CODES else (fpga, "bus")] += 1
    return max(queues.values())


def figures(options, *, parallel_load, cache):
    """The run's figures without wall times and build details, and those (``sim``)."""
    backend = VerilatorBackend(cache_dir=cache, parallel_load=parallel_load, watchdog_cycles=1 << 18)
    report = run(RunOptions(**options, backend=backend))
    assert report.verified, report.check_detail
    result = report.to_dict()
    return result, result.pop("sim")


@pytest.mark.parametrize("options", [
    # GraVF-M on 2 FPGAs: the neighbor filter's writes and the FPGA index come over the bus.
    dict(algorithm="bfs", graph="rmat:scale=8,ef=8,seed=1", fpgas=2, pes=2, edge_memory="onchip"),
    # The hybrid: the scatter units' edges are PE writes too.
    dict(algorithm="wcc", graph="rmat:scale=8,ef=8,seed=2", fpgas=1, pes=4, arch="hybrid", edge_memory="onchip"),
    pytest.param(dict(algorithm="wcc", graph="rmat:scale=8,ef=8,seed=3", fpgas=2, pes=2, edge_memory="offchip"),
                 marks=pytest.mark.slow),
], ids=["bfs-2x2-gravfm", "wcc-1x4-hybrid", "wcc-2x2-offchip"])
def test_parallel_load_runs_as_the_host_bus_load(options, loads, build_cache):
    parallel, parallel_sim = figures(options, parallel_load=True, cache=build_cache)
    serial, _ = figures(options, parallel_load=False, cache=build_cache)
    differing = sorted(key for key in serial if parallel.get(key) != serial[key])
    assert not differing, {key: (parallel.get(key), serial[key]) for key in differing}
    (writes, fast), (_, slow) = loads
    assert fast.load_cycles == slow.load_cycles == len(writes)
    assert slow.load_clocked_cycles == clocked_cycles(writes, options["pes"], parallel=False)
    assert fast.load_clocked_cycles == clocked_cycles(writes, options["pes"], parallel=True)
    assert fast.load_clocked_cycles < slow.load_clocked_cycles
    assert parallel_sim["load_clocked_cycles"] == fast.load_clocked_cycles  # what the run reports
