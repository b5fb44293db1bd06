"""The superstep-aware prediction: per superstep max(work at T_sys, synchronization latency)."""

import dataclasses
import math

import pytest

from gravfm.architectures import HYBRID
from gravfm.errors import ConfigError
from gravfm.model import predict, predict_supersteps, superstep_latency_cycles

F_AC510 = 187.5e6


def test_latency_formula_by_hand():
    # ac510x4, BFS, the paper's Fig. 11 graphs (|V| = 16385), 4 FPGAs x 9 PEs:
    # pipeline 250 + kernel 2 + barrier (32 local + 2 x 300 link) + ceil(16385 / 36) = 456
    assert superstep_latency_cycles("ac510x4", "bfs", 16385, 4, 9) == 250 + 2 + 32 + 600 + 456


def test_single_fpga_latency_has_no_link():
    assert superstep_latency_cycles("ac510x4", "wcc", 900, 1, 9) == 250 + 2 + 32 + 100


def test_hierarchy_adds_the_node_round_trip():
    within = superstep_latency_cycles("ac510x8-2nodes", "wcc", 7200, 4, 9)
    across = superstep_latency_cycles("ac510x8-2nodes", "wcc", 7200, 8, 9)
    assert across - within == 2 * 1000 - (200 - 100)  # node round trip, minus the shorter apply pass


def test_times_by_hand():
    messages = [1, 10**7, 0]
    result = predict_supersteps("ac510x4", "bfs", 16385, 16385 * 64, messages, fpgas=4, pes=9)
    t_sys = predict("ac510x4", "bfs", 16385, 16385 * 64, fpgas=4, pes=9).t_sys
    latency_s = 1340 / F_AC510
    assert result.latency_cycles == 1340
    assert result.times_s == pytest.approx((latency_s, 10**7 / t_sys, latency_s))
    assert result.latency_bound_supersteps == 2
    assert result.teps == pytest.approx((10**7 + 1) / (2 * latency_s + 10**7 / t_sys))
    assert result.teps < t_sys


def test_large_supersteps_reach_the_steady_throughput():
    result = predict_supersteps("ac510x4", "wcc", 2**20, 2**25, [2**25] * 10, fpgas=4, pes=9)
    assert result.latency_bound_supersteps == 0
    assert result.teps == pytest.approx(result.steady.t_sys)


def test_less_work_per_superstep_means_lower_throughput():
    """The shape of the paper's Fig. 11: the same edges spread over more, smaller supersteps."""
    total = 16384 * 64
    rates = []
    for width in (16384, 2048, 256, 64):
        depth = 16384 // width
        result = predict_supersteps("ac510x4", "bfs", 16385, total, [width * 64] * depth + [0], fpgas=4, pes=9)
        rates.append(result.teps)
    assert rates == sorted(rates, reverse=True)
    assert rates[-1] < 0.2 * rates[0]
    # with 64 active vertices (4096 edges) a superstep is latency-bound: TEPS = 4096 / latency
    assert rates[-1] == pytest.approx(total / ((16384 // 64 + 1) * 1340 / F_AC510))


def test_sum_is_slower_than_max():
    messages = [5000, 200000, 3000, 0]
    fast = predict_supersteps("ac510x4", "wcc", 10000, 100000, messages, fpgas=2, pes=4)
    slow = predict_supersteps("ac510x4", "wcc", 10000, 100000, messages, fpgas=2, pes=4, combine="sum")
    assert slow.total_time_s > fast.total_time_s
    assert slow.total_time_s == pytest.approx(
        sum(m / fast.steady.t_sys for m in messages) + len(messages) * fast.latency_cycles / F_AC510)


@pytest.mark.parametrize("messages, message", [
    ([], "empty"),
    ([0, 0], "sums to 0"),
    ([3, -1], r"messages_per_superstep\[1\]"),
    ([1.5], r"messages_per_superstep\[0\]"),
])
def test_bad_message_counts(messages, message):
    with pytest.raises(ConfigError, match=message):
        predict_supersteps("ac510x4", "wcc", 100, 1000, messages)


def test_bad_combine():
    with pytest.raises(ConfigError, match="combine"):
        predict_supersteps("ac510x4", "wcc", 100, 1000, [10], combine="avg")


def test_fed_by_the_software_reference():
    """BFS on a w x d graph (Fig. 10): d + 2 supersteps, w x degree messages in the middle ones."""
    generators = pytest.importorskip("gravfm.graph.generators")
    reference = pytest.importorskip("gravfm.algorithms.reference")
    graph = generators.wd(16, 8, 4)
    run = reference.bfs(graph, 0)
    result = predict_supersteps("ac510x4", "bfs", graph.num_vertices, graph.num_edges,
                                run.messages_per_superstep, fpgas=4, pes=9)
    assert len(result.messages) == run.supersteps
    assert result.total_messages == graph.num_edges  # BFS: each vertex reached sends once
    # such a small graph is latency-bound in every superstep
    assert result.latency_bound_supersteps == run.supersteps
    assert result.total_time_s == pytest.approx(run.supersteps * result.latency_cycles / F_AC510)
    assert not math.isclose(result.teps, result.steady.t_sys)
    assert result.to_dict()["kind"] == "prediction"


def test_updates_that_match_the_average_degree_change_nothing():
    vertices, edges = 1000, 32000
    messages = [3200, 320000, 32, 0]
    updates = [100, 10000, 1, 0]  # messages = 32 x updates: the average degree
    plain = predict_supersteps("ac510x4", "wcc", vertices, edges, messages, fpgas=4, pes=9)
    with_updates = predict_supersteps("ac510x4", "wcc", vertices, edges, messages, fpgas=4, pes=9,
                                      updates_per_superstep=updates)
    assert with_updates.times_s == pytest.approx(plain.times_s)


def test_hubs_cost_less_network_time_than_their_messages_suggest():
    """A road-like graph is bound by the updates on average (GraVF-M: every PE's update intake;
    the hybrid: its link ends, one update per cycle per peer stream); a superstep of a few hubs is not."""
    vertices, edges = 100_000, 280_000
    for arch, bound in (("gravfm", "L_intake"), (HYBRID.name, "L_linkend")):
        steady = predict("ac510x4", "wcc", vertices, edges, fpgas=4, pes=9, arch=arch)
        assert steady.bottleneck == bound
        hubs = predict_supersteps("ac510x4", "wcc", vertices, edges, [10**7], fpgas=4, pes=9, arch=arch,
                                  updates_per_superstep=[1000])
        assert hubs.times_s[0] == pytest.approx(10**7 / steady.limits["L_PE"])
        many = predict_supersteps("ac510x4", "wcc", vertices, edges, [10**7], fpgas=4, pes=9, arch=arch,
                                  updates_per_superstep=[10**7])  # one edge per update: all updates
        assert many.times_s[0] == pytest.approx(10**7 * 2.8 / steady.limits[bound])
    unicast = predict_supersteps("ac510x4", "wcc", vertices, edges, [10**7], fpgas=4, pes=9, arch="gravf",
                                 updates_per_superstep=[1000])
    assert unicast.times_s[0] == pytest.approx(10**7 / unicast.steady.t_sys)  # GraVF sends messages


def test_update_counts_must_match_the_supersteps():
    with pytest.raises(ConfigError, match="updates_per_superstep has 1 entries"):
        predict_supersteps("ac510x4", "wcc", 100, 1000, [10, 0], updates_per_superstep=[3])
    with pytest.raises(ConfigError, match=r"updates_per_superstep\[0\]"):
        predict_supersteps("ac510x4", "wcc", 100, 1000, [10], updates_per_superstep=[-3])


def test_numpy_counts_are_accepted():
    numpy = pytest.importorskip("numpy")
    result = predict_supersteps("ac510x4", "wcc", 100, 1000, numpy.array([10, 0]),
                                updates_per_superstep=numpy.array([2, 0]))
    assert result.messages == (10, 0) and result.updates == (2, 0)


# The issue 23 cases: s7e16.graph symmetrised (122 vertices, 1,890 edges), BFS from the file's
# vertex 124. Measured (Amaranth back-end, cycle for cycle the Verilator one) against the model
# of the generated design, and against the targets (1/3 of the original GraVF-M's overheads).
@pytest.mark.slow  # three whole-system simulations in Amaranth's simulator, about 10 s each
@pytest.mark.parametrize("algorithm, pes, root, target", [
    ("bfs", 1, 124, 245), ("bfs", 4, 124, None), ("wcc", 1, None, 210)])
def test_design_overhead_on_s7e16(algorithm, pes, root, target):
    from gravfm.flow import RunOptions, run

    report = run(RunOptions(algorithm=algorithm, graph="s7e16.graph", pes=pes, root=root, backend="amaranth",
                            edge_memory="onchip", graph_options={"undirected": True}))
    assert report.verified
    overhead = report.to_dict()["superstep_overhead"]
    assert overhead["above_bound"] == report.cycles - report.messages / pes
    if target is not None:
        assert overhead["above_bound"] <= target
    assert overhead["predicted_above_bound"] == pytest.approx(overhead["above_bound"], rel=0.1)


def test_design_overhead_by_hand():
    from gravfm.model.supersteps import DESIGN_SUPERSTEP_CYCLES, design_overhead_cycles

    # Round 0 costs the longer of its pass and the per-superstep latency, not their sum.
    assert design_overhead_cycles(first_pass=122, supersteps=5, pes=1) == 122 + 4 * DESIGN_SUPERSTEP_CYCLES[1]
    assert (design_overhead_cycles(first_pass=1, supersteps=3, pes=2, fpgas=2, link_latency_cycles=10)
            == 3 * (DESIGN_SUPERSTEP_CYCLES["more"] + 10))  # one link latency: the barrier crosses it once
    assert design_overhead_cycles(first_pass=7, supersteps=0, pes=1) == 7


def test_design_latency_by_hand():
    from gravfm.model import load_platform
    from gravfm.model.supersteps import DESIGN_SUPERSTEP_CYCLES, design_latency_cycles

    platform = load_platform("ac510x4")   # link 300 cycles; memory 190 + jitter 32 (mean 16)
    # several PEs, one link crossing (the floating barrier, one way), the memory's mean round trip
    assert design_latency_cycles(platform, 4, 2) == DESIGN_SUPERSTEP_CYCLES["more"] + 300 + 190 + 16
    assert design_latency_cycles(platform, 1, 1) == DESIGN_SUPERSTEP_CYCLES[1] + 190 + 16
    onchip = dataclasses.replace(platform, memory=dataclasses.replace(platform.memory, edge_storage="onchip"))
    assert design_latency_cycles(onchip, 2, 2) == DESIGN_SUPERSTEP_CYCLES["more"] + 300


def test_design_times_add_latency_and_work_with_the_requests_in_flight():
    """BFS, 1025 vertices, 8172 edges, 4 x 2 PEs, the layout's words of a partition: a superstep
    takes latency + work, the work the largest of the limits and the requests in flight."""
    from gravfm.model.limits import in_flight_limit

    words = (665, 1339, 1386, 1301)
    messages, updates = [1024, 7148, 0], [1, 1024, 0]
    result = predict_supersteps("ac510x4", "bfs", 1025, 8172, messages, fpgas=4, pes=2, latency="design",
                                memory_model="layout", layout_words=words, updates_per_superstep=updates)
    assert result.combine == "sum" and result.latency == "design"
    assert result.latency_cycles == 21 + 300 + 190 + 16
    flight = in_flight_limit(2, 64, 206, F_AC510, 8172, words)   # 2 PEs x 64 requests per 206 cycles
    assert flight < result.steady.t_sys                          # the lists are short: the requests bind
    latency_s = result.latency_cycles / F_AC510
    assert result.times_s == pytest.approx(tuple(latency_s + m / flight for m in messages))
    assert result.latency_bound_supersteps == 2
    assert result.to_dict()["latency"] == "design"


def test_unknown_latency_is_refused():
    with pytest.raises(ConfigError, match="latency must be one of platform, design"):
        predict_supersteps("ac510x4", "wcc", 100, 1000, [10], latency="paper")
