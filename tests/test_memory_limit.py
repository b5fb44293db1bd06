"""L_mem of this implementation's memory layout (per non-empty list its index word, carrying the
first edges, and the word-aligned words of the others)
against numbers computed by hand, and the estimate from |V| and |E| against a partition's count."""

import math

import pytest

from gravfm.errors import ConfigError
from gravfm.model import limits as L
from gravfm.model.predict import evaluate, predict


def test_layout_limit_by_hand():
    # 128e6 bits/s = 1e6 words/s per FPGA; FPGA 1 reads 150 words for the pass's 300 edges,
    # so a pass takes 150 us: 300 edges / 150 us = 2e6 edges/s
    assert L.memory_limit_layout(128e6, 128, 300, (100, 150)) == pytest.approx(2e6)


def test_layout_limit_without_reads_is_unbounded():
    assert math.isinf(L.memory_limit_layout(128e6, 128, 0, (0, 0)))


def test_layout_words_one_edge_per_word():
    # |V| 100, |E| 200, 1 FPGA x 2 PEs: list length Poisson(1); per list
    # P(K > 0) index words + E[K] list words = (1 - 1/e) + 1 = 1.6321206; x 100 lists x 2 PEs
    words = L.layout_words_per_pass(100, 200, 1, 2, 128, 128)
    assert words == pytest.approx(200 * (2 - math.exp(-1)), rel=1e-9)


def test_layout_words_four_edges_per_word():
    # mean 0.5 (|E|/|V| = 2, 4 PEs), 32-bit edges in 128-bit words: the index word holds a
    # list's first (128 - 64) / 32 = 2 edges, so a list costs its index word and
    # ceil(max(0, K - 2) / 4) words, E[...] = P(K > 2) + P(K > 6) + ... ; by hand
    # P(K > 2) = 1 - e^-0.5 (1 + 0.5 + 0.125) = 0.0143877, P(K > 6) = 1.0e-6
    p_some = 1 - math.exp(-0.5)
    p_over_2 = 1 - math.exp(-0.5) * (1 + 0.5 + 0.5 ** 2 / 2)
    p_over_6 = 1 - math.exp(-0.5) * sum(0.5 ** j / math.factorial(j) for j in range(7))
    assert p_over_2 == pytest.approx(0.0143877, rel=1e-4)
    assert p_over_6 == pytest.approx(1.0e-6, rel=0.01)
    words = L.layout_words_per_pass(1000, 2000, 1, 4, 32, 128)
    assert words == pytest.approx(4 * 1000 * (p_some + p_over_2 + p_over_6), rel=1e-6)


def test_layout_words_edge_wider_than_a_word():
    # 256-bit edges take two 128-bit words each: (1 - e^-1) index words + 2 E[K] list words
    words = L.layout_words_per_pass(100, 200, 1, 2, 256, 128)
    assert words == pytest.approx(200 * (1 - math.exp(-1) + 2), rel=1e-9)


def test_layout_words_gravf_stores_own_vertices_full_lists():
    # GraVF: each of 2 PEs holds 50 lists of mean 2 edges: one edge per word gives
    # (1 - e^-2) + 2 words per list, 2 x 50 lists
    words = L.layout_words_per_pass(100, 200, 1, 2, 128, 128, arch="gravf")
    assert words == pytest.approx(100 * (1 - math.exp(-2) + 2), rel=1e-9)


def test_long_lists_approach_the_simple_limit():
    # mean 1000 edges per list, 4 per word, 2 in the index word: (1000 - 2) / 4 words, the
    # last one 3/8 empty on average (remainders 0-3 equally likely), + 1 index word
    words = L.layout_words_per_pass(10, 10_000, 1, 1, 32, 128)
    assert words / 10 == pytest.approx((1000 - 2) / 4 + 3 / 8 + 1, rel=1e-4)


def test_predict_reports_every_memory_limit():
    layout = evaluate("ac510x4", "pagerank", 4096, 32731, 1, 9, memory_model="layout", layout_words=(40_000,))
    assert layout.details["layout_words_source"] == "partition"
    expected = L.memory_limit_layout(8.1 * 8 * 2 ** 30, 128, 32731, (40_000,))
    assert layout.limits["L_mem"] == pytest.approx(expected)
    assert layout.details["L_mem_layout_mteps"] == pytest.approx(expected / 1e6)
    simple = evaluate("ac510x4", "pagerank", 4096, 32731, 1, 9, layout_words=(40_000,))
    assert simple.limits["L_mem"] == pytest.approx(simple.details["L_mem_simple_mteps"] * 1e6)
    assert simple.details["L_mem_layout_mteps"] == pytest.approx(expected / 1e6)


def test_predict_estimates_the_layout_without_a_partition():
    estimate = evaluate("ac510x4", "pagerank", 4096, 32731, 2, 9, memory_model="layout")
    assert estimate.details["layout_words_source"].startswith("estimate")
    # default m_edge 32 bits: 4 edges per 128-bit word
    words = L.layout_words_per_pass(4096, 32731, 2, 9, 32, 128)
    assert estimate.details["layout_words_per_pass"] == [pytest.approx(words)] * 2


def test_layout_words_need_one_count_per_fpga_and_a_fixed_configuration():
    with pytest.raises(ConfigError, match="one word count per FPGA"):
        evaluate("ac510x4", "pagerank", 4096, 32731, 2, 9, layout_words=(1, 2, 3))
    with pytest.raises(ConfigError, match="give fpgas and pes"):
        predict("ac510x4", "pagerank", 4096, 32731, layout_words=(1,))


def test_estimate_matches_a_uniform_graphs_partition():
    """The Poisson estimate against the exact words of a uniform graph's layout (within 3%)."""
    from gravfm.algorithms import make_pagerank
    from gravfm.flow.memory import memory_hardware, platform_for_run, words_per_pass
    from gravfm.flow.planning import plan
    from gravfm.flow.preparation import prepare
    from gravfm.model import load_platform
    from gravfm.partition import edge_stores

    platform = platform_for_run(load_platform("ac510x4"), "offchip")
    prepared = prepare(make_pagerank(supersteps=2), "uniform:n=2048,deg=8,seed=1")
    hardware = plan(prepared, fpgas=2, pes=4, edge_memory=memory_hardware(platform))
    config = hardware.config
    stores = edge_stores(prepared.graph, hardware.partition, config.pe.local_bits, layout=config.arch)
    exact = words_per_pass(stores, config)
    from gravfm.hw.arch import architecture
    from gravfm.model.offchip_layout import edge_slot_bits
    slot = edge_slot_bits(architecture(config.arch).layouts(config.algorithm, config).edge_word.size)
    graph = prepared.graph
    estimate = L.layout_words_per_pass(graph.num_vertices, graph.num_edges, 2, 4, slot, 128)
    for words in exact:
        assert words == pytest.approx(estimate, rel=0.03)


def test_in_flight_limit_by_hand():
    # 9 PEs x 64 requests per 208-cycle round trip = 2.769 words/cycle at 187.5 MHz; the busiest
    # FPGA reads 2 words per edge: 2.769 x 187.5e6 / 2 = 259.6e6 edges/s
    limit = L.in_flight_limit(9, 64, 208, 187.5e6, 1000, (1500, 2000))
    assert limit == pytest.approx(9 * 64 / 208 * 187.5e6 / 2)
    assert limit / 1e6 == pytest.approx(259.6154, rel=1e-6)
