"""Every packaged dataset file loads, and `gravfm graph info` reproduces its README counts."""

import json

import pytest

from gravfm import datasets
from gravfm.cli import main
from gravfm.errors import GraphFormatError
from gravfm.graph import load_graph
from gravfm.graph.stats import unordered_pairs

# From gravfm/datasets/README.md: nodes; edge lines; distinct unordered pairs; self-loops.
README_COUNTS = {
    "facebook_combined.txt.gz": (4039, 88234, 88234, 0),
    "CA-GrQc.txt": (5242, 28980, 14496, 12),
    "Wiki-Vote.txt.gz": (7115, 103689, 100762, 0),
    "oregon1_010331.txt.gz": (10670, 44004, 22002, 0),
    "inf-euroroad.edges": (1174, 1417, 1417, 0),
    "road-minnesota.mtx": (2642, 3303, 3303, 0),
    "road-luxembourg-osm.mtx.gz": (114599, 119666, 119666, 0),
    "s10e16.graph": (887, 16237, 10652, 0),
    "s14e16.graph.gz": (12522, 261837, 213113, 0),
    "GRCite.graph": (1953, 4164, 4153, 0),
    "4x4.graph": (15, 52, 30, 0),
    "s7e16.graph": (122, 1972, 945, 0),
}
# Distinct directed arcs, where the README gives them.
README_DISTINCT_ARCS = {"Wiki-Vote.txt.gz": 103689, "GRCite.graph": 4159, "s10e16.graph": 10652}


def test_every_dataset_file_is_covered():
    assert datasets.files() == sorted(README_COUNTS)


def test_unknown_packaged_name_is_a_one_line_error():
    message = r"^nope\.txt: no such packaged dataset \(known: 4x4\.graph, [^\n]*\)$"
    with pytest.raises(GraphFormatError, match=message):
        datasets.path("nope.txt")


@pytest.mark.parametrize("name", sorted(README_COUNTS))
def test_dataset_counts_match_readme(name):
    nodes, lines, unique, self_loops = README_COUNTS[name]
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
    if name in README_DISTINCT_ARCS:
        assert clean.num_edges == README_DISTINCT_ARCS[name]
    if name.endswith(".mtx") or name.endswith(".mtx.gz"):  # symmetric storage: both directions
        assert report.mirrored_edges == lines and clean.is_symmetric()


@pytest.mark.parametrize("name", sorted(README_COUNTS))
def test_graph_info_reports_readme_counts(name, tmp_path, capsys):
    nodes, lines, unique, self_loops = README_COUNTS[name]
    out = tmp_path / "info.json"
    assert main(["graph", "info", name, "--keep-self-loops", "--keep-duplicates", "--json", str(out)]) == 0
    info = json.loads(out.read_text())
    assert info["vertices"] == nodes
    assert info["cleaning"]["input_edges"] == lines
    assert info["unordered_pairs"] == unique
    assert info["self_loops"] == self_loops
    assert f"{nodes:,}" in capsys.readouterr().out


def test_s7e16_like_fpgagraphlib_loader():
    # README: dropping self-loops, merging duplicates and adding reverse edges gives 1,890 edges.
    assert load_graph("s7e16.graph", undirected=True).num_edges == 1890
