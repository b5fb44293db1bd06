"""gravfm.reproduce's plan and estimate: probes kept in the cache, designs sized without a probe,
the wall-time estimate from measured rates (made-up rates here; benchmarks/bench_reproduce_rates.py
measures the real ones)."""

import json

import pytest

from conftest import cli_error
from gravfm.errors import ConfigError
from gravfm.reproduce import EXPERIMENTS, points_of
from gravfm.reproduce import plan as plan_module
from gravfm.reproduce.estimate import Rates, estimate, format_estimate
from gravfm.reproduce.plan import config_of, design_of, needs, plan_points, probe


def rates_file(path, **changes):
    rows = [{"pes_per_fpga": p, "total_pes": n * p, "edges": e, "messages": 2 * e, "cycles": c, "build_s": b,
             "export_s": x, "overhead_s": o, "run_s": r, "cpu_fraction": 0.5, **changes}
            for p, n, e, c, b, x, o, r in ((1, 1, 1000, 4000, 10.0, 1.0, 2.0, 0.5),
                                           (9, 4, 100000, 20000, 200.0, 40.0, 20.0, 4.0))]
    path.write_text(json.dumps({"benchmark": "reproduce_rates", "results": rows,
                                "provenance": {"date": "2026-12-05"}}))
    return path


def test_design_without_probe_is_the_pipelines():
    from gravfm.algorithms import get_algorithm
    from gravfm.flow import plan, prepare
    from gravfm.flow.memory import memory_hardware

    point = points_of(EXPERIMENTS["fig11"], "quick")[0]   # shared capacities, all given
    prepared = prepare(get_algorithm("bfs"), point.graph, params={"root": point.root})
    piped = plan(prepared, fpgas=point.fpgas, pes=point.pes, arch=point.arch, local_bits=point.local_bits,
                 edges_per_pe=point.edges_per_pe, max_rounds=point.max_rounds,
                 edge_memory=memory_hardware(plan_module._platform(point)[0])).config
    capacities = {"local_bits": point.local_bits, "edges_per_pe": point.edges_per_pe, "max_rounds": point.max_rounds}
    mine = config_of(point, capacities)
    assert (mine.pe, mine.network, mine.fpgas, mine.pes_per_fpga) == (piped.pe, piped.network, piped.fpgas,
                                                                      piped.pes_per_fpga)
    assert design_of(point)[4] == piped.pe


def test_probe_is_kept_in_the_cache(tmp_path, monkeypatch):
    point = points_of(EXPERIMENTS["fig11"], "quick", shared=False)[0]
    first = probe(point, tmp_path)
    assert len(list((tmp_path / "plans").glob("*.json"))) == 1
    assert first["edges"] > 0 and sum(first["messages_per_superstep"]) > 0

    def no_probe(point):
        raise AssertionError("probed again")

    monkeypatch.setattr(plan_module, "_measure_probe", no_probe)
    plan_module._probe_in_memory.cache_clear()
    assert probe(point, tmp_path) == first
    assert needs(point, tmp_path) == {k: first[k] for k in ("local_bits", "edges_per_pe", "max_rounds")}


def test_estimate_counts_builds_points_and_exports(tmp_path):
    rates = Rates.load(rates_file(tmp_path / "rates.json"))
    by_experiment = {"fig11": points_of(EXPERIMENTS["fig11"], "quick")}
    planned, distinct = plan_points(by_experiment)
    once = estimate(planned, rates)
    every = estimate(planned, rates, export_per_point=True)
    points = len(by_experiment["fig11"])
    assert (once.builds, once.points, distinct) == (1, points, 1)
    assert every.export_s == pytest.approx(points * once.export_s) and every.wall_s > once.wall_s
    assert once.messages == sum(sum(probe(p)["messages_per_superstep"]) for p in by_experiment["fig11"])
    assert once.build_s == pytest.approx(rates.build_s(2)) and 10.0 < rates.build_s(2) < 200.0
    assert estimate(planned, rates, workers=2).wall_s == pytest.approx(once.wall_s / 2)
    rest = estimate(planned, rates, done=set(by_experiment["fig11"][:1]))   # resumed: its design built
    assert (rest.points, rest.builds, rest.build_s) == (points - 1, 0, 0.0)
    assert "1 builds" in format_estimate(once) and "wall ~" in format_estimate(once)
    idle = rates.idle()
    assert idle.build_s(1) == pytest.approx(5.0) and idle.messages_per_s(1) == pytest.approx(8000.0)
    measured_cpu = Rates(tuple({**row, "build_cpu_s": 3.0} for row in rates.results), "cpu").idle()
    assert measured_cpu.build_s(1) == 3.0 and measured_cpu.export_s(1) == pytest.approx(0.5)
    assert estimate(planned, idle).wall_s == pytest.approx(once.wall_s / 2)
    assert "on an idle machine" in format_estimate(once, estimate(planned, idle))
    assert Rates(tuple({k: v for k, v in row.items() if k != "cpu_fraction"} for row in rates.results),
                 "old").idle() is None


def test_rates_interpolate_within_the_measured_range(tmp_path):
    rates = Rates.load(rates_file(tmp_path / "rates.json"))
    assert rates.build_s(1) == 10.0 and rates.build_s(9) == 200.0 and rates.build_s(16) == 200.0
    assert rates.messages_per_s(1) == 4000.0 and rates.messages_per_s(36) == 50000.0
    assert 4000.0 < rates.messages_per_s(8) < 50000.0
    assert rates.overhead_s(50500) == pytest.approx(11.0)


def test_bad_rates_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "rates.json"
    bad.write_text(json.dumps({"results": [{"pes_per_fpga": 1}]}))
    with pytest.raises(ConfigError, match="rates.json: not a reproduce_rates result"):
        Rates.load(bad)
    message = cli_error(capsys, "reproduce", "fig11", "--dry-run", "--out", str(tmp_path / "o"), "--rates",
                        str(tmp_path / "missing.json"))
    assert "missing.json: cannot read" in message


def test_dry_run_prints_the_estimate(tmp_path, capsys):
    from gravfm.cli import main

    rates = rates_file(tmp_path / "rates.json")
    assert main(["reproduce", "fig11", "--dry-run", "--out", str(tmp_path / "out"), "--rates", str(rates),
                 "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "total: 4 distinct points, 1 distinct designs" in text
    assert "estimate (rates of rates.json (measured 2026-12-05)): 1 builds" in text and "with 1 worker" in text
