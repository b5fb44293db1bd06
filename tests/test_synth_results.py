"""Synthesis rows (issue 38 item 3): the RTL fingerprint, stale detection, medians over seeds, the
latest measurement of a top, the seeded rows' commits, and the matrix sweep's resume and stop."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gravfm.errors import ConfigError
from gravfm.provenance import PACKAGE_PARENT, git_output
from gravfm.synth.fingerprint import commit_facts, rtl_fingerprint
from gravfm.synth.fmax_table import fmax_table
from gravfm.synth.netlists import FLOW_SOURCES, netlist_fingerprint, today_netlists
from gravfm.synth.results import (MATRIX, RESULTS_FILE, latest_measurement, load_rows, median_row, save_rows,
                                  unfinished_today)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_synth  # noqa: E402  (benchmarks/ is not a package)

WCC4 = {"algorithm": "wcc", "arch": "gravfm", "fpgas": 1, "pes": 4, "edge_memory": "onchip", "target": "ecp5-85"}


def a_row(seed, fmax, rtl="aaaaaaaaaaaa", commit="1" * 40, date="2026-12-01T00:00:00+00:00", **changes):
    return {"kind": "seed", **WCC4, "pnr_freq_mhz": 150.0, "router": "router1", "seed": seed, "commit": commit,
            "commit_date": date, "rtl": rtl, "status": "ok" if fmax else "timeout", "fmax_mhz": fmax,
            "critical_path": {"from": f"design.a{seed}", "to": "design.b", "delay_ns": 6.0}, "luts": 100 + seed,
            "flip_flops": 50, "bram_blocks": 4, "dsps": 0, **changes}


def git(folder, *arguments):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *arguments], cwd=folder, check=True,
                   capture_output=True)


def test_the_fingerprint_follows_the_rtl_and_nothing_else(tmp_path):
    (tmp_path / "gravfm" / "hw").mkdir(parents=True)
    (tmp_path / "gravfm" / "synth").mkdir()
    (tmp_path / "gravfm" / "hw" / "pe.py").write_text("x = 1\n")
    (tmp_path / "gravfm" / "synth" / "fmax_table.py").write_text("t = 1\n")
    (tmp_path / "README.md").write_text("readme\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    clean = rtl_fingerprint(folder=tmp_path)
    assert clean == rtl_fingerprint("HEAD", folder=tmp_path) and len(clean) == 12
    (tmp_path / "README.md").write_text("changed\n")
    (tmp_path / "gravfm" / "synth" / "fmax_table.py").write_text("t = 2\n")   # reads results: not RTL
    assert rtl_fingerprint(folder=tmp_path) == clean
    (tmp_path / "gravfm" / "hw" / "pe.py").write_text("x = 2\n")   # uncommitted RTL counts
    edited = rtl_fingerprint(folder=tmp_path)
    assert edited != clean
    (tmp_path / "gravfm" / "hw" / "new.py").write_text("y = 1\n")   # so does an untracked file
    assert rtl_fingerprint(folder=tmp_path) not in (clean, edited)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "two")
    assert rtl_fingerprint("HEAD", folder=tmp_path) == rtl_fingerprint(folder=tmp_path)
    assert rtl_fingerprint("HEAD~1", folder=tmp_path) == clean
    facts = commit_facts("HEAD~1", folder=tmp_path)
    assert len(facts["commit"]) == 40 and facts["commit_date"].startswith("20")


def test_a_copy_without_git_has_its_commits_fingerprint(tmp_path):
    """CI tests a copy of the tracked files, without .git: the files on disk give the same value."""
    checkout, copy = tmp_path / "checkout", tmp_path / "copy"
    for folder in (checkout, copy):
        (folder / "gravfm" / "hw" / "pe").mkdir(parents=True)
        (folder / "gravfm" / "hw" / "pe" / "apply.py").write_text("x = 1\n")
        (folder / "gravfm" / "widths.py").write_text("w = 1\n")
    (copy / "gravfm" / "hw" / "pe" / "__pycache__").mkdir()
    (copy / "gravfm" / "hw" / "pe" / "__pycache__" / "apply.cpython-311.pyc").write_bytes(b"\0")
    git(checkout, "init", "-q")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "one")
    assert rtl_fingerprint(folder=copy) == rtl_fingerprint("HEAD", folder=checkout)
    (copy / "gravfm" / "hw" / "pe" / "apply.py").write_text("x = 2\n")
    assert rtl_fingerprint(folder=copy) != rtl_fingerprint("HEAD", folder=checkout)


def test_a_commits_fingerprint_needs_a_checkout(tmp_path):
    with pytest.raises(ConfigError, match="cannot fingerprint the RTL in"):
        rtl_fingerprint("HEAD", folder=tmp_path)
    with pytest.raises(ConfigError, match="cannot fingerprint"):
        rtl_fingerprint("no-such-commit")


IN_A_CHECKOUT = git_output(PACKAGE_PARENT, "rev-parse", "--git-dir")[1] is None


@pytest.mark.skipif(not IN_A_CHECKOUT, reason="needs the git history: CI tests a copy of the files without .git")
def test_every_seeded_row_names_a_real_commit_and_its_rtl():
    rows = load_rows(RESULTS_FILE)
    assert len(rows) > 40
    for commit in sorted({row["commit"] for row in rows}):
        rtl = rtl_fingerprint(commit)
        assert all(row["rtl"] == rtl for row in rows if row["commit"] == commit), commit
        assert commit_facts(commit)["commit"] == commit


def test_the_median_is_a_measured_seed_with_its_path_and_resources():
    median = median_row([a_row(3, 161.3), a_row(1, 156.6), a_row(2, 149.1)])
    assert median["kind"] == "median" and median["status"] == "ok" and median["seeds"] == [1, 2, 3]
    assert median["fmax_mhz"] == 156.6 and median["median_seed"] == 1 and median["fmax_range_mhz"] == [149.1, 161.3]
    assert median["critical_path"]["from"] == "design.a1" and median["luts"] == 101
    partial = median_row([a_row(1, 120.0), a_row(2, None), a_row(3, 130.0)])
    assert partial["status"] == "partial" and partial["fmax_mhz"] == 120.0 and partial["seeds_measured"] == [1, 3]
    assert median_row([a_row(1, None)])["fmax_mhz"] is None


def test_todays_rtl_wins_and_older_rtl_is_stale():
    older = [a_row(1, 150.0, rtl="old000000000", date="2026-12-02T00:00:00+00:00")]
    today = [a_row(1, 120.0, rtl="new000000000", date="2026-12-01T00:00:00+00:00")]
    found = latest_measurement(older + today, WCC4, "new000000000")
    assert found.median["fmax_mhz"] == 120.0 and found.stale is False
    assert found.rtl_label() == "today's RTL (commit 1111111)"
    found = latest_measurement(older + today, WCC4, "other0000000")   # neither is today's: the latest commit
    assert found.median["fmax_mhz"] == 150.0 and found.stale is True
    assert found.rtl_label() == "measured on older RTL (commit 1111111)"
    assert latest_measurement(older, WCC4, None).stale is None


def test_seeds_of_one_netlist_pool_across_commits_and_stay_todays():
    rows = [a_row(1, 140.0, rtl="old000000000", netlist="n" * 12),
            a_row(2, 150.0, rtl="mid000000000", commit="2" * 40, date="2026-12-02T00:00:00+00:00", netlist="n" * 12),
            a_row(3, 160.0, rtl="mid000000000", commit="2" * 40, date="2026-12-02T00:00:00+00:00", netlist="n" * 12),
            a_row(1, 99.0, rtl="other0000000", date="2026-12-03T00:00:00+00:00", netlist="m" * 12)]
    found = latest_measurement(rows, WCC4, "new000000000", "n" * 12)
    assert found.median["seeds_measured"] == [1, 2, 3] and found.median["fmax_mhz"] == 150.0
    assert (found.median["commit"], found.median["rtl"]) == ("2" * 40, "mid000000000")   # the latest, with its RTL
    assert found.stale is False and found.rtl_label() == "today's netlist (commit 2222222)"
    found = latest_measurement(rows, WCC4, "new000000000", "z" * 12)   # the netlist changed too: the latest
    assert found.median["fmax_mhz"] == 99.0 and found.rtl_label() == "measured on older RTL (commit 1111111)"
    assert unfinished_today([a_row(1, None, netlist="n" * 12)], WCC4, "new000000000", "n" * 12)[0]["seed"] == 1


def test_the_netlist_fingerprint_is_the_verilog_the_flow_and_the_tools(tmp_path):
    for path in FLOW_SOURCES:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("flow\n")
    text = 'module top;\n  (* src = "/work/a/gravfm/hw/pe.py:10" *)\n  wire x;\nendmodule\n'
    same = netlist_fingerprint(text, folder=tmp_path)
    assert len(same) == 12
    assert netlist_fingerprint(text.replace("/work/a/", "/elsewhere/"), folder=tmp_path) == same
    assert netlist_fingerprint(text.replace("wire x", "wire y"), folder=tmp_path) != same
    (tmp_path / FLOW_SOURCES[1]).write_text("another flow\n")
    assert netlist_fingerprint(text, folder=tmp_path) != same


def test_the_netlists_file_counts_for_its_rtl_only(tmp_path):
    path = tmp_path / "netlists.json"
    assert today_netlists("a" * 12, path) == {}
    path.write_text(json.dumps({"rtl": "a" * 12, "netlists": {"wcc-4pe": "n" * 12}}))
    assert today_netlists("a" * 12, path) == {"wcc-4pe": "n" * 12}
    assert today_netlists("b" * 12, path) == {} and today_netlists(None, path) == {}
    path.write_text("[]")
    with pytest.raises(ConfigError, match="netlists.json: not a netlists file"):
        today_netlists("a" * 12, path)


def test_reverted_failed_and_other_tops_rows_do_not_count():
    rows = [a_row(1, 140.0, rtl="kept00000000"),
            a_row(1, 99.0, rtl="reverted0000", date="2026-12-03T00:00:00+00:00", reverted_by="a9c0cc4"),
            a_row(1, None, rtl="failed000000", date="2026-12-04T00:00:00+00:00"),
            a_row(1, 170.0, rtl="bfs000000000", date="2026-12-05T00:00:00+00:00", algorithm="bfs")]
    assert latest_measurement(rows, WCC4, "x").median["fmax_mhz"] == 140.0
    assert latest_measurement(rows, {**WCC4, "pes": 2}, "x") is None
    assert latest_measurement(rows, {**WCC4, "arch": "hybrid"}, "x") is None   # another architecture's top


def test_a_row_written_before_arch_existed_is_a_gravfm_top(tmp_path):
    old = a_row(1, 140.0)
    del old["arch"]
    save_rows(tmp_path / "r.json", [old, a_row(1, 120.0, arch="hybrid", rtl="h00000000000")])
    rows = load_rows(tmp_path / "r.json")
    assert [row["arch"] for row in rows] == ["gravfm", "hybrid"]
    assert latest_measurement(rows, WCC4, "x").median["fmax_mhz"] == 140.0
    assert latest_measurement(rows, {**WCC4, "arch": "hybrid"}, "x").median["fmax_mhz"] == 120.0


def test_todays_rtl_without_a_figure_is_listed_beside_the_older_figure():
    rows = [a_row(1, 140.0, rtl="old000000000"),
            a_row(1, None, rtl="new000000000", commit="2" * 40, date="2026-12-03T00:00:00+00:00"),
            a_row(2, None, rtl="new000000000", commit="2" * 40, router="router2", status="stopped")]
    assert [row["seed"] for row in unfinished_today(rows, WCC4, "new000000000")] == [1, 2]
    assert unfinished_today(rows, WCC4, "old000000000") == []   # that RTL has a figure
    assert unfinished_today(rows, WCC4, None) == [] and unfinished_today(rows, WCC4, "other0000000") == []
    line = fmax_table(rows, "new000000000").splitlines()[2]
    assert line.startswith("| `wcc-4pe`") and "140.0 MHz (seed 1)" in line
    assert line.endswith("| measured on older RTL (commit 1111111); today's RTL (commit 2222222): no figure from "
                         "seed 1 (timeout), seed 2 (stopped, router2) |")
    line = fmax_table(rows[1:], "new000000000").splitlines()[2]
    assert line.startswith("| `wcc-4pe`: 1 FPGA, 4 WCC PEs | no figure | 150 MHz | - | - | today's RTL")


def test_the_matrix_is_the_issues(tmp_path):
    assert [top.name for top in MATRIX] == ["wcc-4pe", "bfs-4pe", "wcc-2x4", "wcc-4x4", "pagerank-4pe",
                                            "wcc-1pe-offchip", "ulx3s-wcc-4pe", "hybrid-wcc-4pe"]
    offchip, ulx3s, hybrid = MATRIX[5], MATRIX[6], MATRIX[7]
    assert hybrid.command(1)[:4] == ["synth", "wcc", "--arch", "hybrid"] and "--arch" not in ulx3s.command(1)
    assert offchip.command(2)[offchip.command(2).index("--edge-memory") + 1] == "offchip"
    assert ulx3s.command(1)[-6:] == ["--freq", "125", "--seed", "1", "--router", "router1"]
    save_rows(tmp_path / "r.json", [a_row(1, 1.0)])
    assert json.loads((tmp_path / "r.json").read_text())["notes"][0].startswith("One row per gravfm synth")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match="bad.json: not a synthesis results file"):
        load_rows(tmp_path / "bad.json")
    row = a_row(1, 1.0)
    del row["rtl"]
    save_rows(tmp_path / "r.json", [a_row(1, 1.0), row])
    with pytest.raises(ConfigError, match="r.json: row 1 has no 'rtl'"):
        load_rows(tmp_path / "r.json")


def fake_report(top, seed):
    return {"algorithm": top.algorithm, "arch": top.arch, "fpgas": top.fpgas, "pes": top.pes, "target": top.target,
            "capacity": {"offchip_edges": top.edge_memory == "offchip"},
            "fpga": {"pnr_freq_mhz": top.freq_mhz, "pnr_router": "router1", "pnr_seed": seed, "fmax_mhz": 100.0 + seed,
                     "critical_path": None, "luts": 1, "flip_flops": 2, "bram_blocks": 3, "dsps": 0, "seconds": 1.0},
            "provenance": {"time_utc": "2026-12-06T00:00:00+00:00"}}


def test_the_matrix_resumes_and_stops_cleanly(tmp_path, monkeypatch, capsys):
    results, runs = tmp_path / "rows.json", []
    monkeypatch.setattr(bench_synth, "rtl_fingerprint", lambda revision=None: "f" * 12)
    monkeypatch.setattr(bench_synth, "commit_facts", lambda revision: {"commit": "c" * 40, "commit_date": "d"})

    def synth_once(synth_args, workdir, timeout):
        seed = int(synth_args[synth_args.index("--seed") + 1])
        runs.append(seed)
        if seed == 2 and runs.count(2) == 1:
            raise KeyboardInterrupt   # stopped in seed 2's place and route
        return fake_report(MATRIX[0], seed)

    monkeypatch.setattr(bench_synth, "synth_once", synth_once)
    monkeypatch.setattr(bench_synth, "top_netlist", lambda top: "n" * 12)
    argv = ["--matrix", "--tops", "wcc-4pe", "--results", str(results)]
    assert bench_synth.main(argv) == 130
    assert [row["seed"] for row in load_rows(results)] == [1]   # what was measured, nothing half-written
    assert bench_synth.main(argv) == 0
    rows = load_rows(results)
    assert runs == [1, 2, 2, 3]   # seed 1 was not run again
    assert [(row["kind"], row.get("seed")) for row in rows] == [("seed", 1), ("seed", 2), ("seed", 3), ("median", None)]
    assert rows[-1]["fmax_mhz"] == 102.0 and all(row["rtl"] == "f" * 12 for row in rows)
    assert bench_synth.main(argv) == 0 and runs == [1, 2, 2, 3] and len(load_rows(results)) == 4
    monkeypatch.setattr(bench_synth, "rtl_fingerprint", lambda revision=None: "g" * 12)   # other RTL, same netlist
    assert bench_synth.main(argv) == 0 and runs == [1, 2, 2, 3]
    monkeypatch.setattr(bench_synth, "top_netlist", lambda top: "o" * 12)   # and a changed netlist: run again
    assert bench_synth.main(argv + ["--seeds", "1"]) == 0 and runs == [1, 2, 2, 3, 1]
    assert load_rows(results)[-1]["netlist"] == "o" * 12
    monkeypatch.setattr(bench_synth, "rtl_fingerprint", lambda revision=None: "e" * 12 if revision else "f" * 12)
    assert bench_synth.main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith("bench_synth.py: the RTL has uncommitted changes")


def test_a_run_without_figures_is_a_row_with_its_status():
    row = bench_synth.matrix_row(MATRIX[3], 2, "router1", {"status": "timeout", "seconds": 3600.2,
                                                          "note": "gravfm synth did not finish within 3600 s"},
                                 "f" * 12, {"commit": "c" * 40, "commit_date": "d"})
    assert row["status"] == "timeout" and row["fmax_mhz"] is None and row["seed"] == 2 and row["fpgas"] == 4
    assert row["note"] == "gravfm synth did not finish within 3600 s" and row["rtl"] == "f" * 12
    assert median_row([row])["fmax_mhz"] is None
