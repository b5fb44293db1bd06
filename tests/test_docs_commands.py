"""Every command in README.md and docs/*.md runs as written.

The commands are the lines of the pages' plain code blocks (a fence with no language, or ``sh``,
``bash``, ``console``; ``text`` blocks hold output). Each is classified by what it costs: cheap
ones (graph, partition and model on small graphs, ``run --backend amaranth``, ``reproduce
--dry-run``) run in the default suite, runs that build a Verilator model of a small system under
``-m slow``, and the rest (benchmarks, synthesis, large graphs, a Dask cluster) are reported as
skipped with the reason. A line that fits no rule fails, so no command is left out silently.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_FENCES = {"", "sh", "bash", "console", "shell"}

# Graphs small enough for a Verilator run of a small system within the slow suite.
SMALL_FILES = {"s7e16.graph", "4x4.graph"}
SMALL_SYSTEM_PES = 8


def page_commands(page):
    """(line number, command) of each command line in ``page``'s shell code blocks."""
    fence, commands = None, []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = stripped[3:].strip() if fence is None else None
            continue
        if fence in SHELL_FENCES and stripped and not stripped.startswith("#"):
            commands.append((number, stripped.removeprefix("$ ")))
    return commands


def without_comment(command):
    return shlex.split(command, comments=True)


def option(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


def graph_of(argv):
    """The graph a gravfm command names (``--graph``, or the positional spec graph and partition
    still take: the test then fails on its deprecation line)."""
    if option(argv, "--graph"):
        return option(argv, "--graph")
    positional = [a for a in argv[2:] if not a.startswith("-") and a != "info"]
    return positional[0] if argv[1] in ("graph", "partition") and positional else None


def small_graph(spec):
    if spec is None or spec.startswith("tiny:") or spec in SMALL_FILES:
        return True
    scale = re.search(r"scale=(\d+)", spec)
    vertices = re.search(r"\bn=(\d+)", spec)
    return (scale is not None and int(scale.group(1)) <= 12) or (vertices is not None and int(vertices.group(1)) <= 4096)


def cost(argv):
    """``("run", None)``, ``("slow", why)`` or ``("skip", why)`` for one command line."""
    tool = argv[0]
    if tool == "make":
        return "skip", "a set-up command: `make test` is this suite, `make run` the demo (slow below as `gravfm demo`)"
    if tool == "python" and argv[1].startswith("benchmarks/"):
        return "skip", "a benchmark (minutes to hours); its figures are in benchmarks/results/"
    if tool == "dask" or "--scheduler" in argv:
        return "skip", "needs a running Dask cluster"
    if tool != "gravfm":
        return None, None
    command, graph = argv[1], graph_of(argv)
    if command in ("graph", "partition", "model"):
        scale = re.search(r"scale=(\d+)", graph or "")
        if scale and int(scale.group(1)) > 14:
            return "slow", f"generates a large graph ({graph})"
        return "run", None
    if command == "reproduce":
        return ("run", None) if "--dry-run" in argv else ("skip", "the paper's experiments: hours")
    if command == "synth":
        return "skip", "Yosys + nextpnr: ten minutes to an hour"
    if command == "board":
        return ("run", None) if argv[2:3] == ["list"] else ("skip", "LiteX, BIOS and place and route: minutes to an hour")
    if option(argv, "--backend") in ("litex", "board"):
        return "skip", "the board extra: the whole-SoC simulation runs in make test-board; a real board is not here"
    if command in ("run", "demo"):
        if option(argv, "--backend") == "amaranth" and small_graph(graph):
            return "run", None
        pes = int(option(argv, "--fpgas") or 1) * int(option(argv, "--pes") or 1)  # run's defaults
        if command == "demo" or (small_graph(graph) and pes <= SMALL_SYSTEM_PES):
            return "slow", "builds a Verilator model (about a minute)"
        return "skip", f"{pes} PE(s) on {graph}: a large system or graph, minutes to hours"
    return None, None


def cases():
    for page in PAGES:
        for number, command in page_commands(page):
            argv = without_comment(command)
            kind, why = cost(argv)
            marks = {"slow": [pytest.mark.slow], "skip": [pytest.mark.skip(reason=why)]}.get(kind, [])
            yield pytest.param(argv, kind, marks=marks, id=f"{page.relative_to(ROOT)}:{number}")


@pytest.mark.parametrize(("argv", "kind"), list(cases()))
def test_command_runs_as_written(argv, kind, tmp_path):
    assert kind is not None, f"no rule says what `{shlex.join(argv)}` costs: add one to cost()"
    # A scratch folder as the working directory (files the command writes land there), with the
    # repository's examples/ where the pages' relative paths expect them.
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "gravfm", *argv[1:]], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"`{shlex.join(argv)}` exited {result.returncode}:\n{result.stderr[-2000:]}"
    deprecations = [line for line in result.stderr.splitlines() if "is deprecated; write" in line]
    assert not deprecations, f"`{shlex.join(argv)}` uses an old spelling: {deprecations}"


def test_the_pages_have_commands():
    """The extraction finds the README's examples (a broken fence rule would skip them all)."""
    readme = [command for _, command in page_commands(ROOT / "README.md")]
    assert "make run     # installs into .venv and runs the default demo end to end" in readme
    assert any(command.startswith("gravfm graph info") for command in readme)
    assert not any(command.startswith("┏") for command in readme), "output blocks are not commands"
