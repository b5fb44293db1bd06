"""Figures that cannot mislead (issue 35 item 3): memory wait apart from work, no throughput for
a run that did not finish, a root that reaches nothing said so, ``model`` proposing only systems
``run`` accepts, ``model --supersteps --param``, a plot that stands alone."""

import json

import pytest

from gravfm.cli import main

ONCHIP = ["--backend", "amaranth", "--edge-memory", "onchip"]


@pytest.fixture(scope="module")
def offchip_run(tmp_path_factory):
    """WCC on the grid, 2 PEs, edges off chip: its JSON, printed report and plot caption."""
    import contextlib
    import io

    from gravfm.cli.run_plot import plot_caption
    from gravfm.flow import run
    from gravfm.cli.run_cmd import options_from_args
    from gravfm.cli import build_parser

    folder = tmp_path_factory.mktemp("offchip")
    out = folder / "run.json"
    argv = ["run", "wcc", "--graph", "tiny:grid", "--pes", "2", "--backend", "amaranth", "--edge-memory", "offchip",
            "--json", str(out), "--plot", str(folder / "run.png")]
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(argv) == 0
    args = build_parser().parse_args(argv[:-4])
    report = run(options_from_args(args, args.algorithm, args.graph, args.pes))
    return json.loads(out.read_text()), text.getvalue(), plot_caption(report)


def test_memory_wait_is_apart_from_work(offchip_run):
    document, text, _ = offchip_run
    breakdown = document["cycle_breakdown"]
    assert breakdown["work"] + breakdown["mem_wait"] == document["stalls"]["busy"]
    assert breakdown["mem_wait"] == document["memory"]["wait_cycles"] > 0
    assert list(breakdown)[:2] == ["work", "mem_wait"]
    assert "scatter waited on off-chip memory" in text and "busy, not waiting on memory" in text


def test_the_plot_carries_configuration_verdict_throughput_and_memory(offchip_run):
    document, _, caption = offchip_run
    assert "1 FPGA x 2 PEs (gravfm, offchip edges" in caption
    assert f"verified; {document['cycles']:,} cycles" in caption
    assert f"{document['mteps']:,.1f} MTEPS" in caption and "memory " in caption and "GiB/s" in caption


def test_a_run_that_did_not_finish_reports_no_throughput(build_cache, tmp_path, capsys):
    out = tmp_path / "run.json"
    argv = ["run", "wcc", "--graph", "tiny:grid", "--edge-memory", "onchip", "--max-cycles", "20",
            "--cache", build_cache, "--json", str(out)]
    assert main(argv) == 1
    text = capsys.readouterr().out
    document = json.loads(out.read_text())
    assert document["status"] == "max_cycles" and document["finished"] is False
    assert document["mteps"] is None and document["cpe"] is None and document["cycles"] > 0
    assert document["notes"] == [f"the run did not finish (max_cycles): no MTEPS or CPE, only the "
                                 f"{document['cycles']:,} cycles simulated"]
    assert "; measured " not in text and "no measured MTEPS: the run did not finish (max_cycles)" in text
    assert main([*argv[:-2], "--quiet"]) == 1
    line = capsys.readouterr().out
    assert "MTEPS" not in line and "max_cycles" in line


def test_a_root_that_reaches_nothing_says_so(tmp_path, capsys):
    out = tmp_path / "run.json"
    # tiny:out_star: leaves 1..6 have no out-edges.
    assert main(["run", "bfs", "--graph", "tiny:out_star", "--root", "3", *ONCHIP, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    line = "root 3 reaches no other vertex (it has no out-edges): nothing was traversed, 0 messages"
    assert line in text and line in json.loads(out.read_text())["notes"][0]
    assert main(["run", "bfs", "--graph", "tiny:out_star", "--root", "0", *ONCHIP]) == 0
    assert "reaches no other vertex" not in capsys.readouterr().out


def test_model_proposes_only_systems_run_accepts(capsys):
    from gravfm.model import predict

    for vertices in (1, 2, 5, 16, 40):
        prediction = predict("ac510x4", "wcc", vertices, 3 * vertices)
        assert prediction.fpgas * prediction.pes <= vertices, vertices
    assert main(["model", "--graph", "tiny:grid", "--json", "-"]) == 0
    chosen = json.loads(capsys.readouterr().out)["prediction"]
    assert chosen["fpgas"] * chosen["pes_per_fpga"] <= 16
    assert main(["model", "--graph", "tiny:grid", "--fpgas", "3", "--pes", "7"]) == 0
    assert "21 PEs is more than the graph's 16 vertices: gravfm run refuses this system" in capsys.readouterr().out


def test_model_supersteps_takes_param(capsys):
    def predicted(*extra):
        assert main(["model", "--graph", "tiny:binary_tree", "--algorithm", "bfs", "--supersteps", "--fpgas", "1",
                     "--pes", "2", "--json", "-", *extra]) == 0
        return json.loads(capsys.readouterr().out)["supersteps"]["messages_per_superstep"]

    assert predicted("--param", "root=7") == predicted("--root", "7") != predicted()
    assert main(["model", "--graph", "tiny:grid", "--algorithm", "bfs", "--supersteps", "--param", "k=3"]) == 2
    assert "has no parameter 'k'" in capsys.readouterr().err


def test_run_prints_the_superstep_aware_model_and_the_nearest_bound(tmp_path, capsys):
    out = tmp_path / "run.json"
    assert main(["run", "bfs", "--graph", "tiny:grid", "--pes", "2", *ONCHIP, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    document = json.loads(out.read_text())
    model = document["model"]["supersteps"]
    assert model["source"] == "design" and model["cycles"] == model["design"]["cycles"]
    assert abs(document["cycles"] / model["cycles"] - 1) < 0.15       # measured 177 against 192
    assert model["platform"]["supersteps"] == document["reference"]["supersteps"]
    assert model["nearest_bound"] == "latency"                        # 8 supersteps of 3 messages each
    assert set(model["bounds"]) == {"PE", "latency"}
    assert "superstep-aware model of the generated design" in text
    assert "the run is nearest its latency bound" in text


@pytest.mark.slow
def test_s7e16_bfs_superstep_aware_prediction_within_15_percent(build_cache, tmp_path, capsys):
    out = tmp_path / "run.json"
    assert main(["run", "bfs", "--graph", "s7e16.graph", "--root", "124", "--pes", "4", "--undirected",
                 "--edge-memory", "onchip", "--cache", build_cache, "--quiet", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert abs(document["cycles"] / document["model"]["supersteps"]["cycles"] - 1) < 0.15
