"""``gravfm partition`` and the partitioners on the packaged datasets."""

import json

import numpy as np
import pytest

from gravfm import datasets
from gravfm.cli import main
from gravfm.graph import load_graph
from gravfm.partition import gravfm_edge_stores, partition, partition_report


def test_cli_prints_report_and_json(tmp_path, capsys):
    out_file = tmp_path / "p.json"
    assert main(["partition", "--graph", "tiny:grid", "--fpgas", "2", "--pes", "2", "--json", str(out_file)]) == 0
    text = capsys.readouterr().out
    assert "greedy partition over 2 FPGA(s) x 2 PE(s)" in text
    assert "edges crossing FPGAs: 26 (54.17%)" in text
    figures = json.loads(out_file.read_text())
    assert figures["num_edges"] == 48
    assert sum(figures["out_edges_per_pe"]) == 48 == sum(figures["in_edges_per_pe"])
    assert figures["vertices_per_pe"] == [4, 4, 4, 4]
    assert figures["crossing_edges"] == 26
    # GraVF-M index: 4 PEs x (4 << 2) entries x (start + length bits), plus 48 edges x 2 bits.
    gravfm = figures["memory_bits"]["gravfm"]
    assert gravfm["total_bits"] == 4 * 16 * gravfm["index_entry_bits"] + 48 * 2
    assert figures["memory_bits"]["filter"] == 16 * 2


@pytest.mark.parametrize("method", ["greedy", "round_robin", "metis"])
def test_cli_methods(method, capsys):
    assert main(["partition", "--graph", "tiny:binary_tree", "--fpgas", "2", "--pes", "3", "--method", method]) == 0
    assert f"{method} partition over 2 FPGA(s) x 3 PE(s)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--graph", "tiny:grid", "--pes", "17"], "17 PEs is more than the graph's 16 vertices"),
    (["--graph", "tiny:grid", "--fpgas", "0"], "fpgas must be a positive integer"),
    (["--graph", "tiny:grid", "--vertices-per-pe", "2"], "--vertices-per-pe 2 is too small: a PE holds up to 16 vertices; use at least --vertices-per-pe 16"),
    (["--graph", "tiny:no_such_graph"], "unknown tiny graph"),
])
def test_cli_errors_are_one_line(argv, message, capsys):
    assert main(["partition", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gravfm: error: ") and message in err
    assert err.count("\n") == 1


def test_cli_rejects_unknown_method(capsys):
    with pytest.raises(SystemExit):
        main(["partition", "--graph", "tiny:grid", "--method", "spectral"])
    assert "invalid choice" in capsys.readouterr().err


def test_road_network_metis_keeps_edges_local():
    graph = load_graph(datasets.path("road-minnesota.mtx"))
    metis_report = partition_report(graph, partition(graph, 4, 9, "metis", seed=1))
    greedy_report = partition_report(graph, partition(graph, 4, 9, "greedy"))
    # A planar road network cuts into 4 regions with few crossing edges; greedy ignores locality
    # (about 3/4 of edges cross between 4 FPGAs).
    assert metis_report.crossing_fraction < 0.05
    assert greedy_report.crossing_fraction > 0.5
    assert metis_report.out_edge_imbalance < 1.1
    assert greedy_report.out_edge_imbalance < 1.01


def test_social_graph_edge_stores_cover_every_edge():
    graph = load_graph(datasets.path("facebook_combined.txt"))
    parts = partition(graph, 2, 4, "greedy")
    stores = gravfm_edge_stores(graph, parts, parts.min_local_bits)
    assert stores.edges_per_pe.sum() == graph.num_edges
    np.testing.assert_array_equal(stores.edges_per_pe, partition_report(graph, parts).in_edges_per_pe)
    lengths = sum(store.length for store in stores)
    hw = parts.hw_ids(parts.min_local_bits)
    np.testing.assert_array_equal(lengths[hw], graph.out_degree())
