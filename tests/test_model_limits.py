"""The limits of the performance model (paper §5) against values computed by hand, and their shape in n (hypothesis)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravfm.model import limits as L

GIB_S = 8 * 2**30  # bits per second in one GiB/s
AC510_F = 187.5e6


def test_pe_limit_of_the_paper_platform():
    # 4 FPGAs x 9 PEs x 187.5 MHz / 1.05 cycles per edge
    assert L.pe_limit(4, 9, AC510_F, 1.05) / 1e6 == pytest.approx(6428.5714, abs=1e-3)


def test_memory_limit_by_hand():
    # 4 x 8.1 GiB/s = 4 x 8.1 x 2^30 x 8 bits/s, one 32-bit edge per traversed edge
    assert L.memory_limit(4, 8.1 * GIB_S, 32) / 1e6 == pytest.approx(8697.3087744, rel=1e-12)


def test_memory_limit_granular_below_one_list_per_edge():
    # (|V|/|E|) n p = 4/32: each edge costs 32 + 0.125 x (128 - 32) = 44 bits
    assert L.memory_limit_granular(1, 4, 1000.0, 32, 128, 32.0) == pytest.approx(1000.0 / 44)


def test_memory_limit_granular_saturates_at_one_word_per_edge():
    # (|V|/|E|) n p = 36/32 >= 1: a whole 128-bit word per edge
    assert L.memory_limit_granular(4, 9, 8.1 * GIB_S, 32, 128, 32.0) == pytest.approx(4 * 8.1 * GIB_S / 128)


def test_memory_limit_granular_is_continuous_at_the_clamp():
    below = L.memory_limit_granular(2, 8, 1e9, 32, 128, 16.0 + 1e-9)
    at = L.memory_limit_granular(2, 8, 1e9, 32, 128, 16.0)
    assert below == pytest.approx(at, rel=1e-6)


def test_interface_limit_gravfm_by_hand():
    # (BW_if / m_update) x n/(n-1) x |E|/|V| with BW_if = 5.85 GiB/s, 64-bit updates, degree 32
    expected = (5.85 * GIB_S / 64) * (4 / 3) * 32
    assert L.interface_limit(4, 5.85 * GIB_S, 32.0, arch="gravfm", m_update=64, m_message=96) == \
        pytest.approx(expected)


def test_interface_limit_gravf_by_hand():
    # (BW_if / m_message) x n^2/(n-1)
    expected = (5.85 * GIB_S / 96) * 16 / 3
    assert L.interface_limit(4, 5.85 * GIB_S, 32.0, arch="gravf", m_update=64, m_message=96) == \
        pytest.approx(expected)


def test_network_limits_by_hand():
    bw = 23.4 * GIB_S
    assert L.network_limit(4, bw, 32.0, arch="gravfm", m_update=64, m_message=96) == \
        pytest.approx(bw / (3 * 64 / 32))
    assert L.network_limit(4, bw, 32.0, arch="gravf", m_update=64, m_message=96) == \
        pytest.approx(bw * 4 / (3 * 96))


@pytest.mark.parametrize("arch", L.ARCHITECTURES)
def test_a_single_fpga_has_no_network_limit(arch):
    sizes = {"arch": arch, "m_update": 64, "m_message": 96}
    assert math.isinf(L.interface_limit(1, GIB_S, 32.0, **sizes))
    assert math.isinf(L.network_limit(1, GIB_S, 32.0, **sizes))


def test_fit_check_by_hand():
    # n >= |V| m_vertex / M: 10^7 vertices x 33 bits over 32 MiB = 1.229... -> 2 FPGAs
    assert L.fpgas_needed(10**7, 33, 32 * 2**20 * 8) == 2
    assert L.fpgas_needed(1, 33, 32 * 2**20 * 8) == 1
    assert L.fpgas_needed(8 * 2**20, 32, 32 * 2**20 * 8) == 1  # exactly full


def test_pes_needed_by_hand():
    # p >= T_sys CPE / (n f): 3000 MTEPS x 1.05 / (3 x 187.5 MHz) = 5.6 -> 6
    assert L.pes_needed(3000e6, 3, AC510_F, 1.05) == 6
    assert L.pes_needed(L.pe_limit(4, 9, AC510_F, 1.05), 4, AC510_F, 1.05) == 9  # exact, no rounding up


def test_unknown_arch_is_refused():
    with pytest.raises(ValueError, match="arch"):
        L.interface_limit(2, GIB_S, 4.0, arch="gravfm2", m_update=64, m_message=96)


fpga_counts = st.integers(min_value=2, max_value=64)
degrees = st.floats(min_value=0.05, max_value=500.0)
bits = st.integers(min_value=1, max_value=512)
bandwidths = st.floats(min_value=1e6, max_value=1e13)


@given(n=fpga_counts, degree=degrees, m_update=bits, m_message=bits, bw=bandwidths)
def test_gravfm_over_gravf_ratio(n, degree, m_update, m_message, bw):
    """L(GraVF-M)/L(GraVF) = |E|/(|V| n) x m_message/m_update, for L_if (5) and L_net (8)."""
    sizes = {"m_update": m_update, "m_message": m_message}
    expected = degree / n * m_message / m_update
    for limit in (L.interface_limit, L.network_limit):
        ratio = limit(n, bw, degree, arch="gravfm", **sizes) / limit(n, bw, degree, arch="gravf", **sizes)
        assert ratio == pytest.approx(expected, rel=1e-9)


@given(n=st.integers(min_value=1, max_value=63), p=st.integers(min_value=1, max_value=32),
       degree=degrees, bw=bandwidths, m_edge=bits, m_memword=st.sampled_from([32, 64, 128, 256, 512]),
       cpe=st.floats(min_value=1.0, max_value=4.0))
def test_compute_and_memory_limits_grow_with_n(n, p, degree, bw, m_edge, m_memword, cpe):
    assert L.pe_limit(n + 1, p, AC510_F, cpe) > L.pe_limit(n, p, AC510_F, cpe)
    assert L.memory_limit(n + 1, bw, m_edge) > L.memory_limit(n, bw, m_edge)
    assert L.memory_limit_granular(n + 1, p, bw, m_edge, m_memword, degree) >= \
        L.memory_limit_granular(n, p, bw, m_edge, m_memword, degree) * (1 - 1e-12)


@given(n=fpga_counts, degree=degrees, bw=bandwidths, m_update=bits, m_message=bits)
def test_network_limits_shrink_with_n(n, degree, bw, m_update, m_message):
    """With a constant bandwidth, GraVF-M's L_if and L_net and GraVF's L_net fall as n grows;
    GraVF's L_if = (BW_if/m_message) n^2/(n-1) grows for n >= 2: every added FPGA brings its own
    interface while the share of messages that leave an FPGA, (n-1)/n, hardly changes."""
    sizes = {"m_update": m_update, "m_message": m_message}
    for limit, arch in ((L.interface_limit, "gravfm"), (L.network_limit, "gravfm"), (L.network_limit, "gravf")):
        assert limit(n + 1, bw, degree, arch=arch, **sizes) < limit(n, bw, degree, arch=arch, **sizes)
    assert L.interface_limit(n + 1, bw, degree, arch="gravf", **sizes) >= \
        L.interface_limit(n, bw, degree, arch="gravf", **sizes)


@given(nodes=st.integers(min_value=2, max_value=16), k=st.integers(min_value=1, max_value=8),
       degree=degrees, bw=bandwidths, m_update=bits, m_message=bits)
def test_hierarchy_uses_the_flat_equations_with_nodes(nodes, k, degree, bw, m_update, m_message):
    """Paper §5: with full nodes of k FPGAs, the limits between nodes are (3) and (6) with the
    number of nodes in place of n; with k = 1 they are the flat limits exactly."""
    n = nodes * k
    sizes = {"arch": "gravfm", "m_update": m_update, "m_message": m_message}
    assert L.node_interface_limit(n, k, bw, degree, **sizes) == \
        pytest.approx((bw / m_update) * nodes / (nodes - 1) * degree)
    assert L.node_network_limit(n, k, bw, degree, **sizes) == \
        pytest.approx(bw / ((nodes - 1) * m_update / degree))
    for arch in L.ARCHITECTURES:
        sizes["arch"] = arch
        assert L.node_interface_limit(nodes, 1, bw, degree, **sizes) == \
            pytest.approx(L.interface_limit(nodes, bw, degree, **sizes))
        assert L.node_network_limit(nodes, 1, bw, degree, **sizes) == \
            pytest.approx(L.network_limit(nodes, bw, degree, **sizes))
        assert math.isinf(L.node_interface_limit(k, k, bw, degree, **sizes))


@given(n=fpga_counts, degree=degrees, bw=bandwidths, m_update=bits, m_message=bits)
def test_group_of_all_fpgas_is_the_flat_network(n, degree, bw, m_update, m_message):
    for arch in L.ARCHITECTURES:
        sizes = {"arch": arch, "m_update": m_update, "m_message": m_message}
        assert L.network_limit(n, bw, degree, group=n, **sizes) == L.network_limit(n, bw, degree, **sizes)
        assert L.interface_limit(n, bw, degree, group=n, **sizes) == L.interface_limit(n, bw, degree, **sizes)
