"""Hardware ids depend on the partition: a kernel that compares them is caught, by name, with the fix."""

from dataclasses import replace

import numpy as np
import pytest

from conftest import run_flow
from gravfm.algorithms import WCC
from gravfm.flow import check_partition_independence
from gravfm.flow.partition_check import probe_graph, reordering_partitions
from gravfm.errors import ConfigError

# The mistake: WCC's label kept as a hardware id (the loader translates it), so gather's
# "keep the smaller label" compares hardware ids, whose order is the partition's.
WCC_ON_HARDWARE_IDS = replace(WCC, name="wcc_on_hardware_ids", vertexid_fields=("label",))


def test_a_kernel_comparing_hardware_ids_is_named_with_the_fix():
    ok, detail = check_partition_independence(WCC_ON_HARDWARE_IDS)
    assert not ok
    assert detail.startswith("algorithm 'wcc_on_hardware_ids' depends on the partition: it verifies on 1 PE, "
                             "where hardware ids follow the graph's ids, but not on 2 PEs, where vertices "
                             "12..23 come first in hardware id order (24 of 24 labels differ; vertex 0: "
                             "hardware 12, reference 0).")
    assert "the state fields in vertexid_fields (label)" in detail
    assert "Compare the graph's ids instead" in detail and "\n" not in detail


def test_the_built_in_wcc_does_not_depend_on_the_partition():
    assert check_partition_independence(WCC) == (True, "")


def test_an_algorithm_wrong_on_one_pe_is_not_blamed_on_the_partition():
    def wrong_reference(graph, params):
        result = WCC.reference(graph, params)
        return replace(result, labels=result.labels + 1)

    ok, detail = check_partition_independence(replace(WCC, name="wcc_wrong", reference=wrong_reference),
                                              probe_graph(vertices=8, chords=4))
    assert not ok
    assert detail.startswith("algorithm 'wcc_wrong' does not verify on 1 PE, where hardware ids follow the "
                             "graph's ids (8 of 8 labels differ")
    assert detail.endswith("it fails on 2 PEs too: fix that first, it is not a matter of the partition")


def test_a_failed_run_of_a_users_algorithm_on_several_pes_points_at_the_check():
    report = run_flow(WCC_ON_HARDWARE_IDS, probe_graph(), pes=2, partition="round_robin")
    assert not report.verified
    assert report.check_detail.endswith("if it verifies on 1 PE, a kernel may compare hardware ids, which depend "
                                        "on the partition: gravfm.flow.check_partition_independence"
                                        "(algorithm) tells (docs/kernels.md)")


def test_the_two_partitions_order_hardware_ids_differently():
    (_, one), (_, two) = reordering_partitions(9)
    np.testing.assert_array_equal(one.hw_ids(4), np.arange(9))
    order = np.argsort(two.hw_ids(4))  # graph ids in hardware id order
    np.testing.assert_array_equal(order, [4, 5, 6, 7, 8, 0, 1, 2, 3])
    with pytest.raises(ConfigError, match="a graph of 1 vertex cannot be split over 2 PEs"):
        reordering_partitions(1)


def test_plan_takes_a_partition_of_the_right_size():
    from gravfm.flow import plan, prepare

    prepared = prepare(WCC, probe_graph(vertices=8))
    (_, one), (_, two) = reordering_partitions(8)
    assert plan(prepared, pes=2, partition=two).partition is two
    with pytest.raises(ConfigError, match="the partition places 8 vertices on 1 x 1 PEs, but the run has 8 on 1 x 2"):
        plan(prepared, pes=2, partition=one)
