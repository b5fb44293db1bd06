"""The run report (figures, JSON form, printing) and the CLI's argument handling for `gravfm run`."""

import io
import json
import math

import numpy as np
import pytest
from rich.console import Console

from gravfm.cli import build_parser, main
from gravfm.algorithms import WCC
from gravfm.algorithms.loading import resolve_algorithm
from gravfm.cli.run_cmd import local_bits_of, print_report
from gravfm.errors import ConfigError
from gravfm.partition import Partition
from gravfm.flow import RunOptions, RunReport, SuperstepRow, choose_capacities, next_power_of_two

REQUIRED_JSON_KEYS = ("algorithm", "graph.vertices", "graph.edges", "fpgas", "pes_per_fpga", "arch",
                      "verified", "supersteps", "cycles", "messages", "cpe", "f_clk_hz", "mteps",
                      "model.mteps", "model.bottleneck", "sim.build_s", "sim.run_s", "sim.cycles_per_s")


def a_report(**changes):
    figures = dict(
        algorithm="wcc", graph_name="tiny:path", vertices=10, edges=18, fpgas=1, pes_per_fpga=4,
        arch="gravfm", partition="greedy", local_bits=2, edges_per_pe=8, update_lanes=1, gather_forwarding=True,
        backend="verilator",
        status="done", verified=True, check_detail="labels match", supersteps=10, cycles=500,
        messages=100, reference_supersteps=10, reference_messages=100, f_clk_hz=200e6, platform="p",
        rounds=(SuperstepRow(0, 10, 18, 60), SuperstepRow(1, 2, 4, 30)),
        stalls={"stall_hazard": 20, "wait_barrier": 100}, build_s=12.5, run_s=0.5)
    figures.update(changes)
    return RunReport(**figures)


def test_figures_follow_their_definitions():
    report = a_report()
    assert report.cpe == 500 * 4 / 100
    assert report.seconds == 500 / 200e6
    assert report.mteps == pytest.approx(100 / (500 / 200e6) / 1e6)
    assert report.cycles_per_s == 1000
    assert report.edges_per_s == 200
    assert math.isinf(a_report(messages=0).cpe)


def test_json_has_every_required_key():
    data = json.loads(json.dumps(a_report().to_dict()))
    for dotted in REQUIRED_JSON_KEYS:
        value = data
        for part in dotted.split("."):
            assert part in value, dotted
            value = value[part]
    assert data["verified"] is True and data["cpe"] == 20.0
    assert data["model"]["mteps"] is None  # no prediction given: none invented
    assert data["per_superstep"][1] == {"round": 1, "active": 2, "messages": 4, "cycles": 30}


def test_printed_report_names_the_figures():
    console = Console(file=io.StringIO(), width=200)
    print_report(a_report(verified=False, check_detail="vertex 3: label 2, expected 1",
                          diagnosis=("PE 1 waits on wait_barrier",)), console)
    text = console.file.getvalue()
    for expected in ("NOT VERIFIED", "vertex 3: label 2, expected 1", "CPE", "20.000", "per superstep",
                     "stall_hazard", "deadlock", "PE 1 waits on wait_barrier", "built in 12.5 s"):
        assert expected in text, expected


def test_next_power_of_two():
    assert [next_power_of_two(v) for v in (0, 1, 2, 3, 4, 5, 1000, 1024, 1025)] == \
        [1, 1, 2, 4, 4, 8, 1024, 1024, 2048]


def test_capacities_round_up_and_check_given_ones():
    partition = Partition(np.array([0, 0, 0, 1, 1]), fpgas=1, pes_per_fpga=2)
    assert choose_capacities(partition, 37) == (2, 64)
    assert choose_capacities(partition, 37, local_bits=4, edges_per_pe=40) == (4, 40)
    with pytest.raises(ConfigError, match=r"^--vertices-per-pe 2 \(local_bits=1\) is too small: a PE holds up to 3 "
                                          r"vertices; use at least --vertices-per-pe 4$"):
        choose_capacities(partition, 37, local_bits=1)
    with pytest.raises(ConfigError, match=r"^--edges-per-pe 30 \(edges_per_pe\) is too small: a PE holds up to 37 "
                                          r"edges; use at least --edges-per-pe 37$"):
        choose_capacities(partition, 37, edges_per_pe=30)
    with pytest.raises(ConfigError, match="with edges off chip it bounds one edge list, and the longest holds 37"):
        choose_capacities(partition, 37, edges_per_pe=30, offchip=True)


def test_options_are_checked():
    with pytest.raises(ConfigError, match="pes must be a positive integer, not 0"):
        RunOptions(algorithm="wcc", graph="tiny:path", pes=0)
    with pytest.raises(ConfigError, match="unknown backend 'icarus'"):
        RunOptions(algorithm="wcc", graph="tiny:path", backend="icarus")


def test_vertices_per_pe_must_be_a_power_of_two():
    assert local_bits_of(None) is None
    assert local_bits_of(1024) == 10
    with pytest.raises(ConfigError, match="power of two, not 1000"):
        local_bits_of(1000)


def test_algorithm_from_a_user_file(tmp_path):
    assert resolve_algorithm("wcc") is WCC
    source = tmp_path / "mine.py"
    source.write_text("from gravfm.algorithms import WCC as MINE\nNOT_ONE = 3\n")
    assert resolve_algorithm(f"{source}:MINE").name == "wcc"
    with pytest.raises(ConfigError, match="defines no 'OTHER'"):
        resolve_algorithm(f"{source}:OTHER")
    with pytest.raises(ConfigError, match="is a int, not a gravfm.algorithms.Algorithm"):
        resolve_algorithm(f"{source}:NOT_ONE")
    with pytest.raises(ConfigError, match="no such algorithm file"):
        resolve_algorithm(f"{tmp_path / 'absent.py'}:X")


def test_cli_parses_run_and_demo():
    args = build_parser().parse_args(["run", "bfs", "--graph", "tiny:path", "--pes", "4", "--root", "3",
                                      "--json", "r.json", "--backend", "amaranth"])
    assert (args.algorithm, args.graph, args.pes, args.root, args.json, args.backend) == \
        ("bfs", "tiny:path", 4, 3, "r.json", "amaranth")
    demo = build_parser().parse_args(["demo"])
    assert (demo.algorithm, demo.graph, demo.pes, demo.fpgas) == ("wcc", "rmat:scale=12,ef=16,seed=1", 4, 1)


def test_cli_reports_bad_input_as_one_line(capsys):
    assert main(["run", "wcc", "--graph", "tiny:path", "--vertices-per-pe", "3"]) == 2
    assert capsys.readouterr().err.strip() == "gravfm: error: --vertices-per-pe must be a power of two, not 3"


def test_progress_display_shows_superstep_cycles_and_edges():
    from gravfm.cli.run_cmd import progress_display

    console = Console(file=io.StringIO(), width=200, force_terminal=True)
    with progress_display(console) as display:
        display.stage("building", "Verilator model of the system")
        display._progress.refresh()
        building = console.file.getvalue()
        display.update(123456, 3, 5000, 20000)
        display.log("simulator abc found in cache")
        display._progress.refresh()
    text = console.file.getvalue()[len(building):]
    # Building says so (issue 22 item 7), simulating shows where the run is.
    assert "building" in building and "Verilator model of the system" in building and "simulating" not in building
    for expected in ("simulating superstep 3", "123,456 cycles", "5,000/20,000 messages", "found in cache"):
        assert expected in text, expected
    quiet = Console(file=io.StringIO(), width=200)
    with progress_display(quiet, enabled=False) as display:
        display.update(1, 0, 0, 0)
    assert quiet.file.getvalue() == ""


def test_plan_applies_the_sizing_rules_and_takes_overrides():
    from gravfm.flow import default_max_rounds, plan, prepare

    prepared = prepare("wcc", "tiny:grid")
    planned = plan(prepared, pes=2)
    config = planned.config
    assert planned.partition.pes_per_fpga == 2
    assert config.pe.local_bits == planned.partition.min_local_bits
    assert config.pe.edges_per_pe == next_power_of_two(config.pe.edges_per_pe)
    assert config.pe.max_rounds == default_max_rounds(prepared.reference_supersteps) == 64
    assert (config.network.fifo_depth, config.pe.update_lanes) == (4, 1)
    small = plan(prepared, pes=2, edges_per_pe=30, max_rounds=8, hazard_slots=6).config
    assert (small.pe.edges_per_pe, small.pe.max_rounds, small.pe.hazard_slots) == (30, 8, 6)
    big = plan(prepare("wcc", "uniform:n=64,deg=2,seed=1"), fpgas=2, pes=4).config
    assert (big.pe.update_lanes, big.network.fifo_depth, big.network.link_fifo_depth) == (2, 64, 1024)
    with pytest.raises(ConfigError, match="unknown hardware option 'queue_depth'"):
        plan(prepared, pes=2, queue_depth=3)


def test_run_options_check_hardware_options_and_backends():
    with pytest.raises(ConfigError, match="unknown hardware option 'fifo'"):
        RunOptions(algorithm="wcc", graph="tiny:path", hardware={"fifo": 2})
    with pytest.raises(ConfigError, match="backend must be a name or have a simulate method"):
        RunOptions(algorithm="wcc", graph="tiny:path", backend=object())
    assert RunOptions(algorithm="bfs", graph="tiny:path", root=2, params={"root": 1}).algorithm_params == {"root": 2}


def test_verify_is_one_rule():
    from types import SimpleNamespace

    from gravfm.flow import prepare, verify

    prepared = prepare("wcc", "tiny:path")
    reference = prepared.reference
    right = {"label": reference.labels, "active": np.zeros(prepared.graph.num_vertices)}
    done = SimpleNamespace(status="done", state=right, messages=prepared.reference_messages)
    assert verify(prepared, done).ok
    assert verify(prepared, SimpleNamespace(**{**done.__dict__, "status": "stalled"})).detail == \
        "simulation did not terminate: stalled"
    extra = verify(prepared, SimpleNamespace(**{**done.__dict__, "messages": done.messages + 1}))
    assert not extra.ok and "sent" in extra.detail
