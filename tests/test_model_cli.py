"""The ``gravfm model`` command: printed prediction, JSON, sweep table and plot, errors."""

import json

import pytest

from gravfm.cli import main
from gravfm.model.platform import PLATFORM_DIR

DENSE = ["--vertices", "1048576", "--edges", "33554432"]


def test_prints_every_limit_and_the_chosen_configuration(capsys):
    assert main(["model", "--platform", "ac510x4", "--algorithm", "wcc", *DENSE, "--arch", "gravfm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PREDICTION")
    for name in ("L_PE", "L_mem", "L_if", "L_net", "L_intake"):
        assert name in out
    assert "4 FPGA(s) x 9 PEs per FPGA (chosen by the model)" in out
    # every PE takes every update, one per cycle: 187.5 MHz x degree 32 (L_PE is 6428.6)
    assert "predicted T_sys = 6000.0 MTEPS (bottleneck: L_intake)" in out
    assert "L_intake at 1 update lane(s) per PE" in out
    assert "PREDICTED per architecture" not in out   # --arch given: that one only


def test_single_fpga_says_there_is_no_network(capsys):
    assert main(["model", *DENSE, "--fpgas", "1", "--pes", "9"]) == 0
    out = capsys.readouterr().out
    assert "no network with a single FPGA" in out
    assert "(as given)" in out


def test_json_output(tmp_path, capsys):
    path = tmp_path / "prediction.json"
    assert main(["model", "--algorithm", "bfs", *DENSE, "--fpgas", "4", "--pes", "9", "--arch", "gravf",
                 "--json", str(path)]) == 0
    capsys.readouterr()
    data = json.loads(path.read_text())
    prediction = data["prediction"]
    assert prediction["kind"] == "prediction"
    assert prediction["arch"] == "gravf"
    assert (prediction["fpgas"], prediction["pes_per_fpga"]) == (4, 9)
    assert prediction["limits_mteps"]["L_PE"] == pytest.approx(4 * 9 * 187.5 / 1.10)
    assert prediction["t_sys_mteps"] == pytest.approx(min(prediction["limits_mteps"].values()))
    assert prediction["bottleneck"] == min(prediction["limits_mteps"], key=prediction["limits_mteps"].get)


def test_overrides_change_the_sizes(tmp_path, capsys):
    path = tmp_path / "p.json"
    assert main(["model", *DENSE, "--fpgas", "4", "--pes", "9", "--m-edge", "64", "--json", str(path)]) == 0
    capsys.readouterr()
    limits = json.loads(path.read_text())["prediction"]["limits_mteps"]
    assert limits["L_mem"] == pytest.approx(4 * 8.1 * 2**33 / 64 / 1e6)


def test_sweep_prints_a_table_and_writes_a_png(tmp_path, capsys):
    plot = tmp_path / "sweep.png"
    report = tmp_path / "sweep.json"
    assert main(["model", *DENSE, "--sweep-fpgas", "1-8", "--plot", str(plot), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "PREDICTED limits against the number of FPGAs" in out
    assert "beyond the platform's 4 FPGAs" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sweep = json.loads(report.read_text())["sweep"]
    assert [entry["fpgas"] for entry in sweep] == list(range(1, 9))
    assert "L_if" not in sweep[0]["limits_mteps"]


def test_superstep_prediction_from_given_counts(capsys):
    assert main(["model", "--algorithm", "bfs", "--vertices", "16385", "--edges", "1048576", "--fpgas", "4",
                 "--pes", "9", "--messages", "64,4096,4096,0"]) == 0
    out = capsys.readouterr().out
    assert "SUPERSTEP-AWARE PREDICTION" in out
    assert "latency 1340 cycles per superstep; 4 superstep(s) latency-bound" in out


def test_graph_spec_runs_prepare_and_reference(monkeypatch, tmp_path, capsys):
    """--graph goes through gravfm.graph.load_graph, the algorithm's prepare and the reference."""
    graph_package = pytest.importorskip("gravfm.graph")
    generators = pytest.importorskip("gravfm.graph.generators")
    pytest.importorskip("gravfm.algorithms.reference")
    directed = generators.wd(8, 4, 2)
    monkeypatch.setattr(graph_package, "load_graph", lambda spec, **kw: directed, raising=False)
    path = tmp_path / "g.json"
    assert main(["model", "--algorithm", "wcc", "--graph", "wd:w=8,d=4,deg=2", "--supersteps",
                 "--json", str(path)]) == 0
    capsys.readouterr()
    data = json.loads(path.read_text())
    symmetric = directed.symmetrize()
    assert data["prediction"]["edges"] == symmetric.num_edges  # WCC runs on the symmetrized graph
    assert data["prediction"]["vertices"] == directed.num_vertices
    assert sum(data["supersteps"]["messages_per_superstep"]) > 0
    assert len(data["supersteps"]["updates_per_superstep"]) == len(data["supersteps"]["messages_per_superstep"])


def test_platform_list(capsys):
    assert main(["model", "--list-platforms"]) == 0
    out = capsys.readouterr().out
    assert "ac510x4" in out and "ulx3s85" in out


def test_user_platform_file_with_misspelled_key(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text((PLATFORM_DIR / "ac510x4.toml").read_text().replace("max_pes = 9", "max_pe = 9"))
    assert main(["model", "--platform", str(path), *DENSE]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gravfm: error: ")
    assert "unknown key 'max_pe'" in err and "mine.toml" in err


@pytest.mark.parametrize("argv, message", [
    (["model"], "need --graph SPEC"),
    (["model", "--vertices", "10"], "need --graph SPEC"),
    (["model", *DENSE, "--graph", "x"], "either --graph or --vertices"),
    (["model", *DENSE, "--sweep-fpgas", "3-1"], "need 1 <= A <= B"),
    (["model", *DENSE, "--sweep-fpgas", "a-b"], "expected A-B"),
    (["model", *DENSE, "--plot", "x.png"], "--plot needs --sweep-fpgas"),
    (["model", *DENSE, "--platform", "nope"], "unknown platform 'nope'"),
    (["model", *DENSE, "--algorithm", "mine"], "no default model parameters"),
    (["model", *DENSE, "--pes", "0"], "pes must be an integer >= 1"),
    (["model", *DENSE, "--supersteps"], "--supersteps needs --graph"),
    (["model", *DENSE, "--messages", "1,x"], "comma-separated integers"),
    (["model", *DENSE, "--updates", "1,2"], "--updates needs --messages"),
])
def test_user_errors_exit_with_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_graph_spec_end_to_end(tmp_path, capsys):
    """A generator spec through the real graph toolkit and the BFS reference."""
    graph_package = pytest.importorskip("gravfm.graph")
    if not hasattr(graph_package, "load_graph"):
        pytest.skip("gravfm.graph.load_graph not available yet")
    path = tmp_path / "bfs.json"
    assert main(["model", "--algorithm", "bfs", "--graph", "wd:w=16,d=8,deg=4", "--root", "0",
                 "--fpgas", "2", "--pes", "4", "--supersteps", "--json", str(path)]) == 0
    capsys.readouterr()
    data = json.loads(path.read_text())
    graph = graph_package.load_graph("wd:w=16,d=8,deg=4")
    assert data["prediction"]["vertices"] == graph.num_vertices == 1 + 16 * 8
    assert data["prediction"]["edges"] == graph.num_edges
    steps = data["supersteps"]
    assert steps["supersteps"] == 8 + 2  # d + 1 BFS levels and the silent last round
    assert sum(steps["messages_per_superstep"]) == graph.num_edges


def test_layout_memory_model_prints_every_memory_limit(capsys):
    args = ["model", "--algorithm", "pagerank", "--vertices", "4096", "--edges", "32731", "--fpgas", "1", "--pes", "9",
            "--arch", "gravfm"]
    assert main([*args, "--memory-model", "layout"]) == 0
    out = capsys.readouterr().out
    assert "memory model: layout" in out
    # the estimate for uniform destinations: 32-bit edges, 4 per 128-bit word, plus index words
    from gravfm.model import limits as L
    words = L.layout_words_per_pass(4096, 32731, 1, 9, 32, 128)
    expected = L.memory_limit_layout(8.1 * 8 * 2 ** 30, 128, 32731, [words]) / 1e6
    assert f"layout {expected:.1f} MTEPS (words per pass: estimate" in out
    assert f"predicted T_sys = {expected:.1f} MTEPS (bottleneck: L_mem)" in out
