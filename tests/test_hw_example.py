"""The example user algorithms (examples/) run without touching gravfm/."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gravfm.graph.tiny import tiny_graph
from conftest import check_run, random_graph, run_flow

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "hop_distance.py"


def load_example(path=EXAMPLE, name="HOP_DISTANCE"):
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.mark.parametrize("name, pes, root", [("grid", 3, 0), ("binary_tree", 2, 3), ("two_components", 1, 6)])
def test_user_algorithm_matches_its_reference(name, pes, root):
    algorithm = load_example()
    check_run(run_flow(algorithm, tiny_graph(name), pes=pes, params={"root": root}))


def test_example_script_runs():
    completed = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "verified: True" in completed.stdout


# --- widest path: edge data, a pipelined gather, the reference engine ----------------------------------

WIDEST = EXAMPLE.with_name("widest_path.py")


def widest_by_relaxation(graph, root, capacity):
    """Widest path widths by plain relaxation until nothing changes (no supersteps, no numpy)."""
    width = [0] * graph.num_vertices
    width[root] = 255
    sources = graph.sources()
    changed = True
    while changed:
        changed = False
        for e, (u, v) in enumerate(zip(sources, graph.targets)):
            through = min(width[u], int(capacity[e]))
            if through > width[v]:
                width[v], changed = through, True
    return width


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_widest_path_reference_is_right(seed):
    algorithm = load_example(WIDEST, "WIDEST_PATH")
    graph = random_graph(30, 70, seed)
    root = int(np.argmax(graph.out_degree()))
    result = algorithm.reference(graph, {"root": root})
    capacity = algorithm.edge_data(graph)["capacity"]
    assert result.state.width.tolist() == widest_by_relaxation(graph, root, capacity)
    assert result.updates_per_superstep[0] == 1 and result.supersteps > 2


@pytest.mark.parametrize("fpgas, pes, graph", [(1, 1, "tiny:grid"), (1, 2, "random"), (2, 2, "random")])
def test_widest_path_verifies_on_several_systems(fpgas, pes, graph):
    algorithm = load_example(WIDEST, "WIDEST_PATH")
    graph = random_graph(30, 70, 2, name="random") if graph == "random" else graph
    report = check_run(run_flow(algorithm, graph, fpgas=fpgas, pes=pes, params={"root": 1}))
    assert len(set(report.readback.state["width"].tolist())) > 2  # not a trivial answer


def test_widest_path_declares_its_gathers_measured_latency():
    from gravfm.flow import plan, prepare
    from gravfm.flow.elaboration import check_kernels

    verdicts = check_kernels(plan(prepare(load_example(WIDEST, "WIDEST_PATH"), "tiny:grid"), pes=2).config)
    gather = verdicts["gather"]
    assert (gather.declared, gather.latency, gather.warnings) == (2, 2, ())
