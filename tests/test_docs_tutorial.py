"""The tutorial (docs/tutorial.md, "Your own algorithm") is enough: its code, as printed, verifies
on hardware, and it is the algorithm of examples/widest_path.py."""

import re
from pathlib import Path

import numpy as np

from conftest import check_run, random_graph, run_flow

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def python_blocks():
    """The page's Python blocks in order, as a user would paste them into one file."""
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), flags=re.S)
    assert len(blocks) == 4, "host side, kernels, reference and Algorithm, the run"
    return blocks


def tutorial_namespace(blocks):
    namespace = {}
    exec(compile("\n".join(blocks), f"{TUTORIAL}", "exec"), namespace)
    return namespace


def tutorial_algorithm():
    return tutorial_namespace(python_blocks()[:-1])["WIDEST_PATH"]


def test_the_tutorial_algorithm_matches_the_example_file():
    from test_hw_example import WIDEST, load_example

    ours, example = tutorial_algorithm(), load_example(WIDEST, "WIDEST_PATH")
    graph = random_graph(30, 70, 3)
    mine, theirs = ours.reference(graph, {"root": 1}), example.reference(graph, {"root": 1})
    np.testing.assert_array_equal(mine.state.width, theirs.state.width)
    assert mine.messages_per_superstep == theirs.messages_per_superstep


def test_the_tutorial_algorithm_verifies_on_hardware():
    report = check_run(run_flow(tutorial_algorithm(), random_graph(30, 70, 2), pes=2, params={"root": 1}))
    assert report.readback.state["width"].max() == 255  # the root, unbounded


def test_the_tutorial_runs_as_written(capsys):
    """The page's last block runs the algorithm in Amaranth's simulator and prints its verdict."""
    report = tutorial_namespace(python_blocks())["report"]
    assert report.verified, report.check_detail
    assert capsys.readouterr().out.startswith("True ")


README = TUTORIAL.parents[1] / "README.md"


def readme_algorithm():
    """The README's short version: its one Python block, as printed."""
    section = README.read_text().split("## Your own algorithm", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return tutorial_namespace([block])["WIDEST_PATH"]


def test_the_readme_algorithm_is_the_tutorials():
    graph = random_graph(30, 70, 4)
    mine, tutorial = readme_algorithm().reference(graph, {"root": 2}), tutorial_algorithm().reference(graph, {"root": 2})
    np.testing.assert_array_equal(mine.state.width, tutorial.state.width)
    assert mine.messages_per_superstep == tutorial.messages_per_superstep


def test_the_readme_algorithm_verifies_on_hardware():
    report = check_run(run_flow(readme_algorithm(), random_graph(30, 70, 2), pes=2, params={"root": 1}))
    assert report.readback.state["width"].max() == 255
