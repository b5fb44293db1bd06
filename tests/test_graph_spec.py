"""Graph spec strings (load_graph) and the `gravfm graph` command line."""

import json
import os

import numpy as np
import pytest

from gravfm import datasets
from gravfm.cli import main
from gravfm.errors import GraphFormatError, SpecError
from gravfm.graph import Graph, load_graph, rmat, tiny_graph, uniform, wd
from gravfm.graph.spec import parse_spec


def test_generator_specs_match_the_functions():
    g = load_graph("rmat:scale=8,ef=4,seed=3")
    np.testing.assert_array_equal(g.targets, rmat(8, 4, seed=3).targets)
    assert g.name == "rmat:scale=8,ef=4,seed=3"
    np.testing.assert_array_equal(load_graph("uniform:n=300,deg=5,seed=2").targets, uniform(300, 5, seed=2).targets)
    np.testing.assert_array_equal(load_graph("wd:w=4,d=6,deg=3").targets, wd(4, 6, 3, seed=1).targets)
    assert load_graph("rmat:scale=5").cleaning.input_edges == 16 * 32  # ef defaults to 16


def test_tiny_spec_is_exact_unless_asked():
    g = load_graph("tiny:self_loop")
    assert g.cleaning.self_loops_kept == 2
    np.testing.assert_array_equal(g.targets, tiny_graph("self_loop").targets)
    assert load_graph("tiny:self_loop", self_loops="drop").cleaning.self_loops_removed == 2


def test_policies_apply_to_generated_graphs():
    raw = load_graph("rmat:scale=8,ef=8", self_loops="keep", duplicates="keep")
    assert raw.num_edges == 8 * 256
    sym = load_graph("rmat:scale=8,ef=8", undirected=True)
    assert sym.is_symmetric()


def test_graph_passes_through():
    g = Graph.from_edges([0], [1])
    assert load_graph(g) is g


@pytest.mark.parametrize("name, vertices, found", [
    ("4x4.graph", 15, "4x4.graph"),
    ("facebook_combined.txt", 4039, "facebook_combined.txt.gz"),  # gzipped here, asked by its name
])
def test_relative_name_found_in_packaged_datasets(name, vertices, found, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    g = load_graph(name)
    assert g.num_vertices == vertices and g.name == found


def test_gravfm_datasets_folders_are_searched_after_the_package(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "extra.txt").write_text("0 1\n1 2\n")
    (second / "4x4.graph").write_text("0 1\n")  # the packaged 4x4.graph comes first
    monkeypatch.setenv("GRAVFM_DATASETS", os.pathsep.join([str(first), str(second)]))
    monkeypatch.chdir(tmp_path)
    assert load_graph("extra.txt").num_edges == 2
    assert load_graph("4x4.graph").num_vertices == 15


def test_missing_graph_names_the_folders_searched(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAVFM_DATASETS", str(tmp_path))
    with pytest.raises(GraphFormatError) as error:
        load_graph("no_such_file.txt")
    folders = f"{datasets.FOLDER}, {tmp_path}"
    assert str(error.value) == f"no_such_file.txt: no such graph file, here or in {folders}"


def test_existing_file_wins_over_generator_syntax(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny:odd").write_text("0 1\n")
    assert load_graph("tiny:odd").num_edges == 1


@pytest.mark.parametrize("spec, error, words", [
    ("foo:x=1", SpecError, "unknown generator 'foo'"),
    ("rmat:scale=4,edges=3", SpecError, "unknown key 'edges' for rmat"),
    ("rmat:ef=4", SpecError, "missing key 'scale'"),
    ("uniform:n=ten,deg=2", SpecError, "bad value 'ten' for key 'n'"),
    ("wd:w=4,d=0", SpecError, "wd d must be at least 1"),
    ("rmat:scale=4,scale=5", SpecError, "given twice"),
    ("rmat:scale", SpecError, "expected key=value"),
    ("tiny:nope", SpecError, "unknown tiny graph 'nope'"),
    ("no_such_file.txt", GraphFormatError, "no such graph file"),
])
def test_bad_specs_name_the_problem(spec, error, words):
    with pytest.raises(error, match=words):
        load_graph(spec)


def test_format_only_for_files():
    with pytest.raises(SpecError, match="file format only applies to files"):
        load_graph("tiny:star", fmt="mtx")


def test_parse_spec():
    assert parse_spec("rmat:scale=3, ef=2") == ("rmat", {"scale": "3", "ef": "2"})
    assert parse_spec("some/file.txt") is None
    assert parse_spec("C:\\graphs\\g.txt") is None


# --- CLI -------------------------------------------------------------------------------------

def test_cli_info_json(tmp_path, capsys):
    out = tmp_path / "info.json"
    assert main(["graph", "info", "--graph", "tiny:isolated", "--json", str(out)]) == 0
    info = json.loads(out.read_text())
    assert info["vertices"] == 6 and info["edges"] == 2 and info["isolated_vertices"] == 4
    assert info["out_degree"] == {"min": 0, "max": 1, "mean": 2 / 6, "median": 0.0}
    text = capsys.readouterr().out
    assert "vertices" in text and "6 (4 isolated)" in text


def test_cli_info_json_to_stdout(capsys):
    assert main(["graph", "info", "--graph", "rmat:scale=6,ef=4", "--keep-duplicates", "--keep-self-loops", "--json", "-"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["edges"] == 256 and info["cleaning"]["input_edges"] == 256


def test_cli_errors_are_one_line_exit_2(capsys):
    assert main(["graph", "info", "--graph", "rmat:scale=4,bogus=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gravfm: error: ") and "'bogus'" in err and err.count("\n") == 1


def test_cli_convert_round_trip(tmp_path, capsys):
    out = tmp_path / "g.mtx"
    assert main(["graph", "convert", "tiny:weighted", str(out)]) == 0
    assert out.read_text().startswith("%%MatrixMarket matrix coordinate integer general")
    back = load_graph(out)
    original = tiny_graph("weighted")
    np.testing.assert_array_equal(back.targets, original.targets)
    np.testing.assert_array_equal(back.weights, original.weights)
    edge_list = tmp_path / "sym.txt.gz"
    assert main(["graph", "convert", "tiny:path", str(edge_list), "--undirected", "--format", "edgelist"]) == 0
    assert load_graph(edge_list).is_symmetric()
    assert "wrote" in capsys.readouterr().out
