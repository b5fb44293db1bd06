"""Every packaged dataset file loads, and `gravfm graph info` reproduces its README counts."""

import json
import tomllib
from pathlib import Path

import pytest

from gravfm import datasets
from gravfm.cli import main
from gravfm.errors import GraphFormatError
from gravfm.graph import load_graph
from gravfm.graph.stats import unordered_pairs

# The README's counts of each file (tests/data/dataset_counts.toml).
README_COUNTS = tomllib.loads((Path(__file__).parent / "data" / "dataset_counts.toml").read_text())


def _main_counts(name):
    """``(nodes, edge lines, distinct unordered pairs, self-loops)`` of ``name``."""
    return tuple(README_COUNTS[name][key] for key in ("nodes", "edge_lines", "unordered_pairs", "self_loops"))


def test_every_dataset_file_is_covered():
    assert datasets.files() == sorted(README_COUNTS)


def test_unknown_packaged_name_is_a_one_line_error():
    message = r"^nope\.txt: no such packaged dataset \(known: 4x4\.graph, [^\n]*\)$"
    with pytest.raises(GraphFormatError, match=message):
        datasets.path("nope.txt")


@pytest.mark.parametrize("name", sorted(README_COUNTS))
def test_dataset_counts_match_readme(name):
    nodes, lines, unique, self_loops = _main_counts(name)
    raw = load_graph(datasets.path(name), self_loops="keep", duplicates="keep")
    assert raw.num_vertices == nodes
    assert raw.cleaning.input_edges == lines
    assert raw.cleaning.self_loops_kept == self_loops
    assert unordered_pairs(raw) == unique
    # Default cleaning: self-loops dropped and counted, duplicates merged and counted.
    clean = load_graph(datasets.path(name))
    report = clean.cleaning
    assert report.self_loops_removed == self_loops
    assert report.input_edges + report.mirrored_edges == \
        clean.num_edges + report.self_loops_removed + report.duplicates_removed
    if "distinct_arcs" in README_COUNTS[name]:
        assert clean.num_edges == README_COUNTS[name]["distinct_arcs"]
    if name.endswith(".mtx") or name.endswith(".mtx.gz"):  # symmetric storage: both directions
        assert report.mirrored_edges == lines and clean.is_symmetric()


@pytest.mark.parametrize("name", sorted(README_COUNTS))
def test_graph_info_reports_readme_counts(name, tmp_path, capsys):
    nodes, lines, unique, self_loops = _main_counts(name)
    out = tmp_path / "info.json"
    assert main(["graph", "info", "--graph", name, "--keep-self-loops", "--keep-duplicates", "--json", str(out)]) == 0
    info = json.loads(out.read_text())
    assert info["vertices"] == nodes
    assert info["cleaning"]["input_edges"] == lines
    assert info["unordered_pairs"] == unique
    assert info["self_loops"] == self_loops
    assert f"{nodes:,}" in capsys.readouterr().out


def test_s7e16_like_fpgagraphlib_loader():
    # README: dropping self-loops, merging duplicates and adding reverse edges gives 1,890 edges.
    assert load_graph("s7e16.graph", undirected=True).num_edges == 1890
