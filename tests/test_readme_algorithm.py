"""The README's "Your own algorithm" section is enough: its code, as printed, verifies on hardware."""

import re
from pathlib import Path

import numpy as np

from conftest import check_run, random_graph, run_flow

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_algorithm():
    """Execute the section's Python blocks in order, as a user would paste them into one file."""
    text = README.read_text()
    section = text.split("## Your own algorithm", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 3, "host side, kernels, reference and Algorithm"
    namespace = {}
    exec(compile("\n".join(blocks), f"{README}:Your own algorithm", "exec"), namespace)
    return namespace["WIDEST_PATH"]


def test_the_readme_algorithm_matches_the_example_file():
    from test_hw_example import WIDEST, load_example

    ours, example = readme_algorithm(), load_example(WIDEST, "WIDEST_PATH")
    graph = random_graph(30, 70, 3)
    mine, theirs = ours.reference(graph, {"root": 1}), example.reference(graph, {"root": 1})
    np.testing.assert_array_equal(mine.state.width, theirs.state.width)
    assert mine.messages_per_superstep == theirs.messages_per_superstep


def test_the_readme_algorithm_verifies_on_hardware():
    report = check_run(run_flow(readme_algorithm(), random_graph(30, 70, 2), pes=2, params={"root": 1}))
    assert report.readback.state["width"].max() == 255  # the root, unbounded
