"""README.md's table of the paper's Table 3 and road figures beside the full reproduction's
(issue 34 item 4): what results/paper/results.json gives, never a hand-edited figure."""

import json

import pytest

from gravfm.errors import ConfigError
from gravfm.reproduce.experiments import EXPERIMENTS
from gravfm.reproduce.headline import PAGE, RESULTS, SECTION, headline_table, load_document


def test_the_readme_holds_the_table_the_results_give():
    expected = headline_table(load_document(RESULTS))
    assert SECTION.found_in(PAGE.read_text(), PAGE) == expected, (
        "README.md's paper table is not what results/paper/results.json gives: run `python scripts/paper_table.py`")


def _document(mteps):
    points, keys = [], {"table3": [], "road": []}
    for experiment in keys:
        for algorithm in ("wcc", "bfs", "pagerank"):
            key = f"{experiment}-{algorithm}"
            keys[experiment].append(key)
            points.append({"key": key, "status": "ok", "verified": algorithm != "bfs",
                           "point": {"algorithm": algorithm, "graph": "rmat:scale=18,ef=32,seed=1", "fpgas": 4,
                                     "pes": 9, "edge_memory": "offchip", "platform": "ac510x4"},
                           "measured": {"mteps": mteps, "messages": 3000, "cycles": 100},
                           "model": {"mteps": 2 * mteps}})
    return {"mode": "full", "summary": {"git_revisions": ["abcdef0123"]}, "points": points,
            "experiments": {name: {"points": k} for name, k in keys.items()}}


def test_the_table_sets_the_papers_figures_beside_the_measured_ones():
    table = headline_table(_document(5000.0))
    wcc = next(line for line in table.splitlines() if line.startswith("| WCC"))
    gravfm, foregraph = EXPERIMENTS["table3"].paper["wcc"]
    assert wcc == (f"| WCC | {gravfm:,} | {foregraph:,} | 5,000 at 187.5 MHz ASSUMED (30.0 edges per cycle, "
                   "50% of the model's limit) |")
    # An unverified point is not shown: it says so instead.
    assert "| BFS | 5,493 | 1,458 | not measured |" in table
    assert "RTL abcdef0" in table and "results/paper/REPORT.md" in table


def test_a_results_file_that_cannot_give_the_table_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="cannot read it"):
        load_document(tmp_path / "missing.json")
    quick = tmp_path / "quick.json"
    quick.write_text(json.dumps({"mode": "quick"}))
    with pytest.raises(ConfigError, match="from a --full run"):
        load_document(quick)
