"""The neighbour filter's update fan-out (from the partition) and the link limits that take it,
against values computed by hand."""

import numpy as np
import pytest

from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.model import limits as L
from gravfm.model import predict
from gravfm.partition import Partition, partition_report, update_fanout

GIB_S = 8 * 2**30  # bits per second in one GiB/s


def two_fpga_graph():
    """Vertices 0, 1 on FPGA 0 and 2, 3 on FPGA 1 (one PE each).

    0 -> 1 (local), 0 -> 2 (FPGA 1): one copy; 1 -> 0: none; 2 -> 3: none;
    3 -> 0, 3 -> 1 (both on FPGA 0): one copy, not two. 2 copies over 4 vertices.
    """
    graph = Graph.from_edges(np.array([0, 0, 1, 2, 3, 3]), np.array([1, 2, 0, 3, 0, 1]), 4)
    return graph, Partition(np.array([0, 0, 1, 1]), fpgas=2, pes_per_fpga=1)


def three_fpga_graph():
    """Vertices 0, 1 on FPGA 0, 2, 3 on FPGA 1, 4, 5 on FPGA 2 (one PE each).

    0 -> 2, 4, 5: FPGAs 1 and 2, two copies; 1 -> 0: none; 2 -> 3: none; 3 -> 0, 4: two;
    4 -> 5: none; 5 -> 1: one. 5 copies over 6 vertices.
    """
    sources = np.array([0, 0, 0, 1, 2, 3, 3, 4, 5])
    targets = np.array([2, 4, 5, 0, 3, 0, 4, 5, 1])
    graph = Graph.from_edges(sources, targets, 6)
    return graph, Partition(np.array([0, 0, 1, 1, 2, 2]), fpgas=3, pes_per_fpga=1)


def test_fanout_by_hand_on_two_fpgas():
    graph, part = two_fpga_graph()
    assert update_fanout(graph, part) == 2 / 4
    report = partition_report(graph, part)
    assert report.remote_update_copies == 2
    assert report.update_fanout == 0.5
    assert report.to_dict()["update_fanout"] == 0.5


def test_fanout_by_hand_on_three_fpgas():
    graph, part = three_fpga_graph()
    assert update_fanout(graph, part) == 5 / 6


def test_fanout_is_zero_on_one_fpga_and_n_minus_1_when_every_vertex_reaches_every_fpga():
    graph, _ = two_fpga_graph()
    assert update_fanout(graph, Partition(np.array([0, 0, 1, 1]), fpgas=1, pes_per_fpga=2)) == 0.0
    complete = Graph.from_edges(np.repeat(np.arange(3), 3), np.tile(np.arange(3), 3), 3)
    assert update_fanout(complete, Partition(np.array([0, 1, 2]), fpgas=3, pes_per_fpga=1)) == 2.0


def test_link_limits_take_the_fanout_in_place_of_n_minus_1():
    # GraVF-M, 4 FPGAs, BW_if 5.85 GiB/s, degree 2.5, m_update 64: n BW_if degree / (m_update fanout)
    sizes = {"arch": "gravfm", "m_update": 64, "m_message": 96}
    every_peer = L.interface_limit(4, 5.85 * GIB_S, 2.5, **sizes)
    assert every_peer == pytest.approx(4 * 5.85 * GIB_S * 2.5 / (64 * 3))
    assert L.interface_limit(4, 5.85 * GIB_S, 2.5, fanout=1.5, **sizes) == pytest.approx(2 * every_peer)
    # L_net = n BW_net degree / (n fanout m_update)
    assert L.network_limit(4, 23.4 * GIB_S, 2.5, fanout=1.5, **sizes) == pytest.approx(23.4 * GIB_S * 2.5 / (1.5 * 64))
    # GraVF has no filter: its messages do not take the fan-out
    unicast = {**sizes, "arch": "gravf"}
    assert L.interface_limit(4, GIB_S, 2.5, fanout=1.5, **unicast) == L.interface_limit(4, GIB_S, 2.5, **unicast)


def test_predict_passes_the_partition_fanout_to_the_link_limits():
    every_peer = predict("ac510x4", "wcc", 2642, 6606, fpgas=4, pes=2)
    filtered = predict("ac510x4", "wcc", 2642, 6606, fpgas=4, pes=2, update_fanout=1.5)
    assert filtered.limits["L_if"] == pytest.approx(every_peer.limits["L_if"] * 3 / 1.5)
    assert filtered.limits["L_net"] == pytest.approx(every_peer.limits["L_net"] * 3 / 1.5)
    assert filtered.limits["L_PE"] == every_peer.limits["L_PE"]
    assert filtered.details["update_fanout"] == 1.5
    assert "update_fanout" not in every_peer.details


@pytest.mark.parametrize("fanout", [-0.5, 3.5, True])
def test_a_fanout_outside_0_to_n_minus_1_is_refused(fanout):
    with pytest.raises(ConfigError, match="update_fanout"):
        predict("ac510x4", "wcc", 2642, 6606, fpgas=4, pes=2, update_fanout=fanout)


def test_a_fanout_needs_the_number_of_fpgas():
    with pytest.raises(ConfigError, match="give fpgas"):
        predict("ac510x4", "wcc", 2642, 6606, update_fanout=1.0)
