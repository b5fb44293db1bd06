"""The example user algorithms (examples/) run without touching gravfm/."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from gravfm.graph.tiny import tiny_graph
from conftest import check_run, run_flow

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
