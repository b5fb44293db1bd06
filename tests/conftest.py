"""Helpers shared by the test files (tests/ is on sys.path: ``from conftest import run_flow``).

* :func:`run_dut`: a block under Amaranth's simulator with its testbenches; :func:`stream_source`
  and :func:`insert_addresses`, testbench pieces the block tests share.
* :func:`run_flow`: a whole system through the same stages as ``gravfm run`` (:mod:`gravfm.flow`),
  on the Amaranth back-end unless told otherwise; it returns the :class:`~gravfm.flow.RunReport`.
* :func:`assert_verified`, :func:`check_run`: what every whole-system run must satisfy.
* :func:`random_graph`: a seeded random multigraph.
* :func:`cli_error`: a ``gravfm`` command that must refuse its input with one line and exit 2.
* :func:`generate_board_soc`: ``gravfm board build`` up to the generated SoC (LiteX elaboration only).
* the ``build_cache`` fixture: one Verilator build cache for the session.
"""

import numpy as np
import pytest

from gravfm.graph import Graph


def run_dut(dut, *benches, period=1e-8):
    """Simulate ``dut`` with a clock until every testbench returns."""
    from amaranth.sim import Simulator

    sim = Simulator(dut)
    sim.add_clock(period)
    for bench in benches:
        sim.add_testbench(bench)
    sim.run()


def stream_source(port, items):
    """A testbench offering ``items`` in order on the stream ``port``, each until it is taken."""
    async def source(ctx):
        for item in items:
            ctx.set(port.valid, 1)
            ctx.set(port.payload, item)
            await ctx.tick().until(port.ready)
        ctx.set(port.valid, 0)

    return source


async def insert_addresses(ctx, hazard_unit, addresses):
    """Insert ``addresses`` into a hazard unit, one per cycle; ``insert`` is low afterwards."""
    for address in addresses:
        ctx.set(hazard_unit.insert, 1)
        ctx.set(hazard_unit.insert_addr, address)
        await ctx.tick()
    ctx.set(hazard_unit.insert, 0)


def random_graph(vertices, edges, seed, *, name=None):
    """``edges`` random edges (repeats and self-loops allowed) among ``vertices`` vertices."""
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, vertices, edges), rng.integers(0, vertices, edges),
                            num_vertices=vertices, name=name)


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory):
    """A Verilator build cache shared by the session's compiled runs."""
    return str(tmp_path_factory.mktemp("gravfm-build-cache"))


_IDEAL = object()


def run_flow(algorithm, graph, *, fpgas=1, pes=1, backend="amaranth", link=_IDEAL, edge_memory="onchip",
             **options):
    """Run ``algorithm`` on ``graph`` through :func:`gravfm.flow.run`; return its report.

    Parameters
    ----------
    link : gravfm.hw.link.LinkConfig or None
        Several FPGAs: the simulated links. By default ideal ones (the platform's 300-cycle
        latency would only slow the Amaranth simulation); None: the platform's.
    edge_memory : {"onchip", "offchip", None}
        On chip unless a test asks (off-chip tests say so); None: the platform's.
    **options
        :class:`~gravfm.flow.RunOptions` fields (``params``, ``partition``, ``arch``,
        ``local_bits``, ``update_lanes``, ``cache_dir``, ...) and
        :data:`~gravfm.flow.planning.HARDWARE_OPTIONS` (``hazard_slots=6``, FIFO depths, ...).
    """
    from gravfm.flow import HARDWARE_OPTIONS, RunOptions, run
    from gravfm.hw.link import LinkConfig

    hardware = {key: options.pop(key) for key in list(options) if key in HARDWARE_OPTIONS}
    return run(RunOptions(algorithm=algorithm, graph=graph, fpgas=fpgas, pes=pes, backend=backend,
                          link=LinkConfig() if link is _IDEAL else link, hardware=hardware,
                          edge_memory=edge_memory, **options))


def assert_verified(report):
    """The flow's one rule held: terminated, the answer matches, as many messages as the reference."""
    assert report.verified, f"{report.status}: {report.check_detail}"


def check_run(report):
    """Assert that a run matches the reference in every count the hardware keeps; return it.

    The answer (through the algorithm's check), the supersteps of every PE, the messages and
    updates of every superstep (round log), the per-PE counters against the round log, and no
    PE counting more cycles than the run took.
    """
    assert_verified(report)
    reference, readback = report.prepared.reference, report.readback
    counters, log = readback.counters, readback.round_log
    assert readback.supersteps == reference.supersteps
    assert readback.messages_per_superstep == tuple(reference.messages_per_superstep)
    assert readback.updates_per_superstep == tuple(reference.updates_per_superstep)
    assert counters["messages"].sum() == sum(reference.messages_per_superstep)
    assert counters["updates"].sum() == sum(reference.updates_per_superstep)
    assert (counters["supersteps"] == reference.supersteps).all()
    # Per PE, the round log adds up to the counters.
    assert (log["messages"].sum(axis=1) == counters["messages"]).all()
    assert (log["updates"].sum(axis=1) == counters["updates"]).all()
    assert (counters["cycles"] <= readback.cycles).all()
    return report


def check_pagerank_run(report):
    """:func:`check_run`, ranks within PageRank's tolerance, accumulators cleared; returns ``(report, rank)``."""
    from gravfm.algorithms.pagerank import RANK_RTOL, bits_float

    check_run(report)
    state, reference = report.readback.state, report.prepared.reference
    rank = bits_float(state["rank"])
    assert rank.dtype == np.float32
    assert np.allclose(rank, reference.rank, rtol=RANK_RTOL, atol=0)
    # The accumulator is left at +0 by the last apply.
    assert (state["sum"] == 0).all()
    return report, rank


def cli_error(capsys, *argv):
    """Run ``gravfm ARGV`` in-process; assert exit status 2 and one line on stderr; return the line."""
    from gravfm.cli import main

    capsys.readouterr()
    try:
        status = main([str(arg) for arg in argv])
    except SystemExit as stop:  # an argument the parser refuses
        status = stop.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, f"exit {status}, stderr:\n{err}"
    return lines[0]


def generate_board_soc(monkeypatch, out, *argv):
    """``gravfm board build wcc ARGV`` in-process up to the generated SoC: the top's Yosys fit check,
    the BIOS and an open flow's place and route (all covered by the slow bitstream tests) left out.
    Returns the SoC's Verilog, its constraints (an ECP5 board's ``.lpf``, a Xilinx one's ``.xdc``)
    and the build's figures."""
    import json
    import subprocess

    import litex.soc.integration.builder as builder

    import gravfm.board.build as build
    from gravfm.cli import main

    monkeypatch.setattr(build, "check_fit", lambda *args, **kwargs: {"checked": False, "note": "left out"})
    run = subprocess.run
    monkeypatch.setattr(build.subprocess, "run", lambda argv, *args, **kwargs: subprocess.CompletedProcess(argv, 0)
                        if argv[0] == "bash" else run(argv, *args, **kwargs))   # the P&R script: not run

    class GatewareOnly(builder.Builder):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, compile_software=False, **kwargs)

    monkeypatch.setattr(builder, "Builder", GatewareOnly)
    assert main(["board", "build", "wcc", *argv, "--out", str(out), "--json", str(out / "figures.json")]) == 0
    gateware = out / "soc" / "gateware"
    verilog = "".join(path.read_text() for path in gateware.glob("*.v"))
    constraints = next(path for pattern in ("*.lpf", "*.xdc") for path in gateware.glob(pattern)).read_text()
    return verilog, constraints, json.loads((out / "figures.json").read_text())
