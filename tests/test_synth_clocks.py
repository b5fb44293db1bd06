"""The clocks MTEPS are given at (issue 38 item 4): the platform's, labelled met (by which row, on
which RTL) or assumed, and for the ECP5 platforms the Fmax measured for the top; in `gravfm run`'s
report, its --quiet line and JSON, and in `gravfm model`."""

import io
import json

import pytest
from rich.console import Console

from gravfm.cli import main
from gravfm.cli.run_report import clock_lines, print_report
from gravfm.model import load_platform
from gravfm.synth import clocks
from gravfm.synth.clocks import clock_rates
from gravfm.synth.results import save_rows

from test_run_report import a_report  # the run report's factory (tests/ is on sys.path)
from test_synth_results import a_row  # the synthesis rows' factory

WCC4 = {"algorithm": "wcc", "fpgas": 1, "pes": 4, "edge_memory": "onchip"}


def results_with(tmp_path, *rows):
    path = tmp_path / "synth_matrix.json"
    save_rows(path, list(rows))
    return path


def test_an_assumed_clock_and_no_synth_target_give_one_clock():
    assert clock_rates(load_platform("ac510x4"), **WCC4) == [
        {"kind": "platform", "mhz": 187.5, "basis": "assumed", "label": "assumed"}]


def test_a_met_clock_names_its_row_and_says_when_its_rtl_is_older(monkeypatch, tmp_path):
    platform = load_platform("ulx3s85")
    monkeypatch.setattr(clocks, "rtl_fingerprint", lambda commit=None: "same" if commit else "same")
    rates = clock_rates(platform, **WCC4, results=results_with(tmp_path))
    assert rates[0]["label"] == ("met by the 4-PE WCC top (edges on chip) on ecp5-85-6 (synth_matrix.json), "
                                 "today's RTL (commit 1bfbb82)")
    assert rates[0]["stale"] is False and rates[0]["row"]["fmax_mhz"] == 101.08
    monkeypatch.setattr(clocks, "rtl_fingerprint", lambda commit=None: "then" if commit else "now")
    rates = clock_rates(platform, **WCC4, results=results_with(tmp_path))
    assert rates[0]["label"].endswith(", measured on older RTL (commit 1bfbb82)") and rates[0]["stale"] is True


def test_an_ecp5_platform_adds_the_fmax_measured_for_the_top(monkeypatch, tmp_path):
    platform = load_platform("ulx3s85")
    monkeypatch.setattr(clocks, "rtl_fingerprint", lambda commit=None: "aaaaaaaaaaaa")
    rows = [a_row(seed, fmax, target="ecp5-85-6", pnr_freq_mhz=125.0, commit="a" * 40)
            for seed, fmax in ((1, 101.0), (2, 96.0), (3, 110.0))]
    measured = clock_rates(platform, **WCC4, results=results_with(tmp_path, *rows))[1]
    assert measured["mhz"] == 101.0 and measured["stale"] is False and measured["seeds"] == [1, 2, 3]
    assert measured["label"] == ("wcc, 1 FPGA x 4 PEs, edges onchip on ecp5-85-6, median of seeds 1-3: 96.0-110.0; "
                                 "today's RTL (commit aaaaaaa)")
    missing = clock_rates(platform, **{**WCC4, "pes": 2}, results=results_with(tmp_path, *rows))[1]
    assert missing["mhz"] is None
    assert missing["label"] == ("no measured Fmax for wcc, 1 FPGA x 2 PEs, edges onchip on ecp5-85-6 in "
                                "synth_matrix.json")


def test_the_run_report_prints_and_writes_mteps_at_each_clock():
    platform = {"kind": "platform", "mhz": 200.0, "basis": "met", "label": "met by a top"}
    fmax = {"kind": "measured_fmax", "mhz": 100.0, "label": "wcc on ecp5-85, seed 1; measured on older RTL (commit x)"}
    none = {"kind": "measured_fmax", "mhz": None, "label": "no measured Fmax for it"}
    report = a_report(clocks=(platform, fmax, none), clock_basis="met")   # 100 messages in 500 cycles
    assert clock_lines(report) == [
        "MTEPS at the platform clock, 200.0 MHz (met by a top): 40.0",
        "MTEPS at this top's measured Fmax, 100.0 MHz (wcc on ecp5-85, seed 1; measured on older RTL (commit x)): 20.0",
        "MTEPS at this top's measured Fmax: none (no measured Fmax for it)"]
    console = Console(file=io.StringIO(), width=300)
    print_report(report, console)
    assert "MTEPS at this top's measured Fmax, 100.0 MHz" in console.file.getvalue()
    document = json.loads(json.dumps(report.to_dict()))
    assert document["clock_basis"] == "met"
    assert [clock["mteps"] for clock in document["clocks"]] == [40.0, 20.0, None]
    unfinished = a_report(clocks=(platform,), status="max_cycles")
    assert clock_lines(unfinished) == ["MTEPS at the platform clock, 200.0 MHz (met by a top): -, the run did not "
                                       "finish"]
    assert unfinished.to_dict()["clocks"][0]["mteps"] is None


def test_a_run_labels_its_clocks(tmp_path, capsys):
    out = tmp_path / "run.json"
    argv = ["run", "wcc", "--graph", "tiny:grid", "--backend", "amaranth", "--edge-memory", "onchip", "--pes", "3",
            "--platform", "ecpix5x2", "--json", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    document = json.loads(out.read_text())
    assert document["clock_basis"] == "met" and [clock["kind"] for clock in document["clocks"]] == [
        "platform", "measured_fmax"]
    assert "MTEPS at the platform clock, 75.0 MHz (met by the 1-PE WCC top of a 2-FPGA system" in text
    assert document["clocks"][0]["mteps"] == pytest.approx(document["mteps"])
    # No row for a 3-PE top on ECP5-85: said, not guessed.
    assert "MTEPS at this top's measured Fmax: none (no measured Fmax for wcc, 1 FPGA x 3 PEs, edges onchip" in text


def test_the_model_labels_its_clock_and_predicts_at_a_measured_fmax(capsys, tmp_path):
    assert main(["model", "--platform", "ac510x4", "--vertices", "100000", "--edges", "1000000"]) == 0
    out = capsys.readouterr().out
    assert "  clock      f_clk 187.5 MHz (assumed)" in out and "measured Fmax" not in out
    out_json = tmp_path / "model.json"
    assert main(["model", "--platform", "ecpix5x4", "--algorithm", "pagerank", "--vertices", "1000", "--edges", "8000",
                 "--fpgas", "1", "--pes", "4", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "  clock      f_clk 75 MHz (assumed)" in out
    document = json.loads(out_json.read_text())
    platform, measured = document["clocks"]
    assert platform["t_sys_mteps"] == document["prediction"]["t_sys_mteps"]
    # ECPIX-5 keeps its edges off chip; the matrix has no off-chip 4-PE PageRank top.
    assert measured["mhz"] is None and measured["t_sys_mteps"] is None
    assert "predicted T_sys at a measured Fmax: none (no measured Fmax for pagerank, 1 FPGA x 4 PEs, edges offchip" \
        in out
