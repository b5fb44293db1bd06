"""gravfm.reproduce's runner on dask.distributed: tasks, the per-point store, resuming, failures,
and the command's one-line errors. Made-up point functions keep these fast; the slow test at the
end runs one real point through the pipeline."""

import json
import re
import shutil

import pytest

from conftest import cli_error
from gravfm.reproduce import Point, PointStore, reproduce, run_points

POINTS = [Point("wcc", f"uniform:n=64,deg={d},seed=1", fpgas=1, pes=1) for d in (2, 4, 8)]


def fake_run(point, *, cache_dir=None):
    """What run_point returns, without simulating; degree 8 fails."""
    if "deg=8" in point.graph:
        raise RuntimeError("made-up failure")
    return {"key": point.key(), "point": point.to_dict(), "status": "ok", "verified": True, "wall_s": 0.01,
            "measured": {"mteps": 10.0, "vertices": 64, "edges": 64, "detail": "", "link": None},
            "model": {"mteps": 20.0, "bottleneck": "L_PE", "limits_mteps": {"L_PE": 20.0}}}


def without_timestamps(report):
    """A REPORT.md's text (or path's) without its "written" time, or results.json's without its time."""
    text = report.read_text() if hasattr(report, "read_text") else report
    return re.sub(r"(written |\"time_utc\": \")[0-9T:+ -]+", r"\1<time>", text)


def test_points_run_fail_and_resume(tmp_path):
    store = PointStore(tmp_path / "points")
    results, stats = run_points(POINTS, store, workers=1, processes=False, display=False, function=fake_run)
    assert (stats.total, stats.reused, stats.computed, stats.failed) == (3, 0, 3, 1)
    failed = results[POINTS[2].key()]
    assert failed["status"] == "failed" and "made-up failure" in failed["error"]  # the rest went on
    assert results[POINTS[0].key()]["verified"]
    assert json.loads(store.path(POINTS[1].key()).read_text())["measured"]["mteps"] == 10.0
    # A second run reuses the verified points and retries only the failed one.
    results, stats = run_points(POINTS, store, workers=1, processes=False, display=False, function=fake_run)
    assert (stats.reused, stats.computed, stats.failed) == (2, 1, 1)


def test_store_ignores_damaged_and_foreign_results(tmp_path):
    store = PointStore(tmp_path)
    store.path(POINTS[0].key()).write_text("{half a file")
    assert store.get(POINTS[0]) is None
    result = fake_run(POINTS[1])
    store.put({**result, "point": POINTS[0].to_dict(), "key": POINTS[1].key()})  # another point's content
    assert store.get(POINTS[1]) is None
    store.put(result)
    assert store.get(POINTS[1]) == result
    store.put({**result, "verified": False})
    assert store.get(POINTS[1]) is None


def test_reproduce_writes_outputs_and_reports_reuse(tmp_path):
    kwargs = dict(mode="quick", workers=1, processes=False, display=False, points_limit=1, function=fake_run)
    claims, results, stats = reproduce(["table3", "fig7"], tmp_path, **kwargs)
    assert stats.computed == 2 and stats.reused == 0  # fig7's first point is not table3's first
    assert (tmp_path / "fig7.png").exists() and (tmp_path / "table3.png").exists()
    report = (tmp_path / "REPORT.md").read_text()
    claims, results, stats = reproduce(["table3", "fig7"], tmp_path, **kwargs)
    assert stats.reused == 2 and stats.computed == 0
    # The report describes the stored points, not the invocation: the same text (but its timestamp).
    assert without_timestamps(tmp_path / "REPORT.md") == without_timestamps(report)
    assert "Points: 2 (2 verified, 0 failed or unverified)" in report
    assert "Command: `gravfm reproduce table3 fig7 --quick --points-limit 1`" in report


def test_bad_input_is_one_line(tmp_path, capsys):
    assert "unknown experiment 'fig99'" in cli_error(capsys, "reproduce", "fig99", "--out", tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("")
    assert "is a file" in cli_error(capsys, "reproduce", "fig7", "--out", afile)
    # Port 9 (discard) has no scheduler: refused after the short connect timeout.
    line = cli_error(capsys, "reproduce", "table3", "--out", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:9")
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in line


@pytest.mark.slow  # one Verilator build of a 1-PE design (~10-60 s) and a local cluster of processes
def test_one_real_point_end_to_end(tmp_path, build_cache, capsys):
    from gravfm.cli import main

    status = main(["reproduce", "fig8", "--points-limit", "1", "--workers", "1", "--quiet", "--out", str(tmp_path),
                   "--cache", build_cache])
    assert status == 0
    document = json.loads((tmp_path / "results.json").read_text())
    (point,) = document["points"]
    assert point["verified"] and point["measured"]["cycles"] > 0 and point["model"]["kind"] == "prediction"
    assert point["build_key"] and (tmp_path / "fig8.png").exists()


def test_isolated_point_round_trip():
    # The child process's result comes back whole; a bad point is a failed result, not an exception.
    from gravfm.reproduce.task import run_point_isolated

    point = Point("no_such_algorithm", "tiny:star")
    result = run_point_isolated(point)
    assert result["status"] == "failed" and result["key"] == point.key()
    assert "no_such_algorithm" in result["error"] and result["wall_s"] >= 0


def test_report_only_runs_nothing(tmp_path):
    kwargs = dict(mode="quick", workers=1, processes=False, display=False, function=fake_run)
    reproduce(["table3"], tmp_path, points_limit=1, **kwargs)
    claims, results, stats = reproduce(["table3"], tmp_path, report_only=True, **kwargs)
    assert (stats.reused, stats.computed, stats.missing) == (1, 0, 2)
    assert "2 of 3 points not measured yet" in (tmp_path / "REPORT.md").read_text()


def test_report_only_rebuilds_the_outputs_byte_for_byte(tmp_path):
    # A run stores its points; --report-only from a copy of the points alone writes the same files
    # (PNGs, results.json, REPORT.md), apart from the timestamps, failed points included.
    kwargs = dict(mode="quick", workers=1, processes=False, display=False, points_limit=2, function=fake_table)
    reproduce(["table3", "fig7", "fig9"], tmp_path / "run", **kwargs)
    shutil.copytree(tmp_path / "run" / "points", tmp_path / "again" / "points")
    claims, results, stats = reproduce(["table3", "fig7", "fig9"], tmp_path / "again", report_only=True, **kwargs)
    assert (stats.computed, stats.failed) == (0, 1)
    written = sorted(p.name for p in (tmp_path / "run").iterdir() if p.is_file())
    assert written == sorted(p.name for p in (tmp_path / "again").iterdir() if p.is_file())
    assert {"REPORT.md", "results.json", "table3.png", "fig7.png"} <= set(written)
    for name in written:
        first, second = (tmp_path / "run" / name), (tmp_path / "again" / name)
        if name.endswith(".png"):
            assert first.read_bytes() == second.read_bytes(), name
        else:
            assert without_timestamps(first) == without_timestamps(second), name
    document = json.loads((tmp_path / "again" / "results.json").read_text())
    for point in document["points"]:
        assert {"point", "wall_s", "git_revision", "status"} <= set(point)
        if point["status"] == "ok":
            assert {"measured", "model", "build_key"} <= set(point)


def fake_table(point, *, cache_dir=None):
    """fake_run with a model, a build key and the measured figures the plots draw; one failure."""
    if point.pes == 2 and point.fpgas == 2 and point.arch == "gravfm":
        return {"key": point.key(), "point": point.to_dict(), "status": "failed", "wall_s": 1.5,
                "git_revision": "abc", "error": "SimulatorError: made up"}
    mteps = 10.0 * point.fpgas + (5.0 if point.arch == "gravfm" else 0.0)
    return {"key": point.key(), "point": point.to_dict(), "status": "ok", "verified": True, "wall_s": 2.25,
            "git_revision": "abc", "git_dirty": False, "build_key": "k" * 24,
            "measured": {"mteps": mteps, "vertices": 1024, "edges": 16384, "detail": "", "link": None,
                         "cycles": 1000, "supersteps": 5},
            "model": {"kind": "prediction", "mteps": 2 * mteps, "bottleneck": "L_PE",
                      "limits_mteps": {"L_PE": 50.0, "L_if": 30.0}, "supersteps": {"mteps": mteps}}}


def test_interrupted_full_run_resumes_without_recomputing(tmp_path, monkeypatch):
    # --full's points (capacities made up here: probing its graphs takes minutes) are stored one by
    # one as they finish; a run stopped part way and started again computes only the others.
    from gravfm.reproduce import experiments

    capacities = {"local_bits": 13, "edges_per_pe": 1 << 16, "max_rounds": 2048}
    monkeypatch.setattr(experiments, "shared_capacities",
                        lambda mode, cache_dir=None: __import__("collections").defaultdict(lambda: capacities))
    log = tmp_path / "calls"   # the task function runs on a worker: a copy of it, hence a file

    def counted(point, *, cache_dir=None):
        with open(log, "a") as calls:
            calls.write(point.key() + "\n")
        return fake_run(point)

    kwargs = dict(mode="full", workers=1, processes=False, display=False, function=counted)
    reproduce(["table3"], tmp_path / "out", points_limit=2, **kwargs)   # the run stopped after two points
    first = log.read_text().split()
    claims, results, stats = reproduce(["table3", "fig11"], tmp_path / "out", **kwargs)
    calls = log.read_text().split()
    assert len(first) == 2 and not set(first) & set(calls[2:])
    assert (stats.reused, stats.computed) == (2, 3 + 5 - 2) and len(set(calls)) == len(calls) == 3 + 5
    assert all(Point.from_dict(r["point"]).local_bits == 13 for r in results.values())
