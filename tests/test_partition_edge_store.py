"""Edge stores (GraVF-M and GraVF layouts) and the neighbour filter."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.graph.tiny import tiny_graph
from gravfm.partition import (
    Partition,
    edge_stores,
    gravf_edge_stores,
    gravfm_edge_stores,
    greedy,
    neighbor_filter,
)


@st.composite
def partitioned_graphs(draw):
    n = draw(st.integers(1, 14))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=50))
    weights = np.arange(len(edges), dtype=np.int64) + 100  # tells edges apart
    graph = Graph.from_edges(np.array([u for u, _ in edges], dtype=np.int64),
                             np.array([v for _, v in edges], dtype=np.int64), n, weights=weights)
    fpgas = draw(st.integers(1, 3))
    pes = draw(st.integers(1, 3))
    pe_of_vertex = draw(st.lists(st.integers(0, fpgas * pes - 1), min_size=n, max_size=n))
    part = Partition(np.array(pe_of_vertex), fpgas, pes)
    local_bits = part.min_local_bits + draw(st.integers(0, 1))
    return graph, part, local_bits


def graph_edges(graph):
    src, dst = graph.edges()
    return Counter(zip(src.tolist(), dst.tolist(), graph.weights.tolist()))


@settings(max_examples=80, deadline=None)
@given(partitioned_graphs())
def test_gravfm_layout_holds_every_edge_on_its_destination_pe(case):
    graph, part, local_bits = case
    stores = gravfm_edge_stores(graph, part, local_bits)
    assert len(stores) == part.num_pes
    found = Counter()
    for store in stores:
        assert store.start.size == part.num_pes << local_bits
        assert store.num_edges == stores.edges_per_pe[store.pe]
        vertices = part.vertices_of_pe(store.pe)
        for hw_id in np.flatnonzero(store.length):
            sender = int(part.vertex_of_hw_id(hw_id, local_bits))
            assert sender >= 0, "edges stored under a hw id that holds no vertex"
            span = slice(store.start[hw_id], store.start[hw_id] + store.length[hw_id])
            local = store.destination[span]
            assert np.all(np.diff(local) >= 0), "edge list not in destination order"
            for d, w in zip(vertices[local].tolist(), store.weights[span].tolist()):
                found[(sender, d, w)] += 1
        # Lists are laid out back to back in hw id order.
        assert np.array_equal(store.start, np.cumsum(store.length) - store.length)
    assert found == graph_edges(graph)
    assert stores.max_list_length == max(
        [int(s.length.max()) for s in stores if s.length.size] + [0])


@settings(max_examples=80, deadline=None)
@given(partitioned_graphs())
def test_gravf_layout_holds_every_vertex_full_list(case):
    graph, part, local_bits = case
    stores = gravf_edge_stores(graph, part, local_bits)
    found = Counter()
    for store in stores:
        assert store.start.size == 1 << local_bits
        vertices = part.vertices_of_pe(store.pe)
        assert not store.length[vertices.size:].any()
        for local in range(vertices.size):
            v = int(vertices[local])
            span = slice(store.start[local], store.start[local] + store.length[local])
            assert store.length[local] == graph.out_degree()[v]
            targets = part.vertex_of_hw_id(store.destination[span], local_bits)
            np.testing.assert_array_equal(targets, graph.neighbors(v))
            for d, w in zip(targets.tolist(), store.weights[span].tolist()):
                found[(v, d, w)] += 1
    assert found == graph_edges(graph)


def test_gravfm_store_by_hand():
    # dag edges: 0->2, 0->3, 1->3, 1->7, 2->4, 3->4, 3->5, 4->6, 5->6, 6->7
    graph = tiny_graph("dag")
    part = Partition(np.array([0, 1, 0, 1, 0, 1, 0, 1]), fpgas=1, pes_per_fpga=2)
    # local indices: 0,2,4,6 -> PE0 0..3 ; 1,3,5,7 -> PE1 0..3 ; hw id = pe << 2 | local
    stores = gravfm_edge_stores(graph, part, local_bits=2)
    pe0 = stores[0]  # destinations on PE 0: 2, 4, 6 -> edges 0->2, 2->4, 3->4, 4->6, 5->6
    assert pe0.length.tolist() == [1, 1, 1, 0, 0, 1, 1, 0]  # by hw id: 0,2,4,(6) ; 1,3,5,7
    assert pe0.destination.tolist() == [1, 2, 3, 2, 3]
    pe1 = stores[1]  # 0->3, 1->3, 1->7, 3->5, 6->7
    assert pe1.length.tolist() == [1, 0, 0, 1, 2, 1, 0, 0]
    assert pe1.destination.tolist() == [1, 3, 1, 3, 2]
    assert pe1.weights is None

    footprint = stores.footprint()
    # start: 3 bits (5 edges max), length: 2 bits (longest list 2), destination: 2 bits.
    assert footprint.index_entry_bits == 5 and footprint.edge_bits == 2
    assert footprint.index_bits_per_pe == (40, 40)
    assert footprint.edge_bits_per_pe == (10, 10)
    assert footprint.total_bits == 100
    wide = stores.footprint(start_bits=32, length_bits=16, edge_data_bits=8)
    assert wide.total_bits == 2 * 8 * 48 + 10 * 10

    gravf = edge_stores(graph, part, 2, layout="gravf")
    assert gravf.destination_bits == 3  # 1 PE bit + 2 local bits
    # PE 0 holds 0, 2, 4, 6 with out-degrees 2, 1, 1, 1
    assert gravf[0].length.tolist() == [2, 1, 1, 1]
    assert gravf[0].destination.tolist() == [1, 5, 2, 3, 7]  # hw ids of 2, 3 ; 4 ; 6 ; 7


def test_edge_store_errors():
    graph = tiny_graph("path")
    part = greedy(graph, 1, 2)
    with pytest.raises(ConfigError, match="local_bits"):
        gravfm_edge_stores(graph, part, local_bits=1)
    with pytest.raises(ConfigError, match="unknown layout"):
        edge_stores(graph, part, 2, layout="csr")
    with pytest.raises(ConfigError, match="covers 6 vertices but the graph has 16"):
        gravfm_edge_stores(tiny_graph("grid"), part, 2)
    with pytest.raises(ConfigError, match="expected 5 edge weights"):
        gravfm_edge_stores(graph, part, 2, weights=np.ones(3))
    with pytest.raises(IndexError):
        gravfm_edge_stores(graph, part, 2)[2]


@settings(max_examples=60, deadline=None)
@given(partitioned_graphs())
def test_neighbor_filter(case):
    graph, part, local_bits = case
    filt = neighbor_filter(graph, part)
    expected = np.zeros((graph.num_vertices, part.fpgas), dtype=bool)
    for u, v in zip(*graph.edges()):
        expected[u, part.fpga_of_vertex[v]] = True
    np.testing.assert_array_equal(filt.bitmap, expected)
    assert filt.footprint_bits == graph.num_vertices * part.fpgas
    for pe in range(part.num_pes):
        words = filt.words_of_pe(part, pe, local_bits)
        assert words.size == 1 << local_bits
        for local, v in enumerate(part.vertices_of_pe(pe)):
            assert words[local] == sum(1 << f for f in range(part.fpgas) if expected[v, f])
