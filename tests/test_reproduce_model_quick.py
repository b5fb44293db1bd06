"""The superstep-aware model against the latency- and link-bound points of ``reproduce --quick``:
fig11's w x d graphs, the road network and BFS at degree 4 (4 x 2 PEs, edges off chip). Each
point is simulated (the generated design, its answer verified) and predicted from the graph and
its partition alone (the reference's messages and updates per superstep, the layout's memory
words, the neighbour filter's fan-out); the prediction must be within 15% of the measurement."""

import pytest

from gravfm.reproduce import EXPERIMENTS, points_of
from gravfm.reproduce.points import run_point

TOLERANCE = 0.15


#: (experiment, algorithm, a piece of the graph spec): the points, found when the test runs (the
#: quick sizes' shared capacities take seconds to probe, too long for collection).
BOUND_POINTS = [("fig11", "bfs", "w=1024,"), ("fig11", "bfs", "w=256,"), ("fig11", "bfs", "w=64,"),
                ("fig11", "bfs", "w=32,"), ("road", "wcc", ""), ("road", "bfs", ""), ("road", "pagerank", ""),
                ("fig9", "bfs", "deg=4,")]


def quick_point(experiment, algorithm, graph_part):
    """The one point of ``experiment`` that ``reproduce --quick`` runs for ``algorithm`` on the graph."""
    found = [p for p in points_of(EXPERIMENTS[experiment], "quick")
             if p.algorithm == algorithm and graph_part in p.graph]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow  # eight simulations of 4 x 2-PE systems (three Verilator builds the first time)
@pytest.mark.parametrize("experiment, algorithm, graph_part", BOUND_POINTS)
def test_quick_bound_points_are_predicted_within_15_percent(experiment, algorithm, graph_part):
    point = quick_point(experiment, algorithm, graph_part)
    result = run_point(point)
    assert result["status"] == "ok" and result["verified"], result.get("error")
    measured = result["measured"]["mteps"]
    predicted = result["model"]["supersteps"]
    assert predicted["kind"] == "prediction" and predicted["source"] == "design"
    assert predicted["mteps"] == pytest.approx(measured, rel=TOLERANCE)
    if point.graph.startswith("road") and point.algorithm != "bfs":
        # link-bound: the throughput model's link limit, with the partition's fan-out, holds too
        assert result["model"]["bottleneck"] == "L_if"
        assert result["model"]["mteps"] == pytest.approx(measured, rel=TOLERANCE)
