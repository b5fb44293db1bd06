"""The Fmax table of README.md and docs/results.md (issue 38 item 3): what the results file gives
for the checkout's RTL, never a hand-edited figure, a row of older RTL marked so."""

import pytest

from gravfm.errors import ConfigError
from gravfm.synth.fingerprint import rtl_fingerprint
from gravfm.synth.fmax_table import BEGIN, END, PAGES, fmax_table, table_in, with_table
from gravfm.synth.netlists import today_netlists
from gravfm.synth.results import MATRIX, RESULTS_FILE, load_rows

from test_synth_results import a_row  # the rows' factory (tests/ is on sys.path)


def test_the_netlists_file_is_of_this_rtl():
    assert set(today_netlists(rtl_fingerprint())) == {top.name for top in MATRIX}, (
        "benchmarks/results/synth_netlists.json was not written for this checkout's RTL: run "
        "`python scripts/synth_table.py`")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_page_holds_the_table_the_results_give(page):
    fingerprint = rtl_fingerprint()
    expected = fmax_table(load_rows(RESULTS_FILE), fingerprint, today_netlists(fingerprint))
    assert table_in(page.read_text(), page) == expected, (
        f"{page.name}'s Fmax table is not what benchmarks/results/synth_matrix.json gives for this checkout's RTL: "
        f"run `python scripts/synth_table.py` (never edit it by hand)")


def line_of(table, name):
    return next(line for line in table.splitlines() if line.startswith(f"| `{name}`"))


def test_a_line_per_top_with_its_median_goal_path_and_rtl():
    rows = [a_row(1, 156.6, commit="a" * 40), a_row(2, 149.1, commit="a" * 40), a_row(3, 161.3, commit="a" * 40)]
    table = fmax_table(rows, "aaaaaaaaaaaa")
    assert len(table.splitlines()) == 2 + len(MATRIX)
    assert line_of(table, "wcc-4pe") == (
        "| `wcc-4pe`: 1 FPGA, 4 WCC PEs | 156.6 MHz (median of seeds 1-3: 149.1-161.3) | 150 MHz: reached | "
        "`a1` -> `b` (6.00 ns) | 101 LUTs, 50 FFs, 4 BRAM | today's RTL (commit aaaaaaa) |")
    assert line_of(table, "bfs-4pe") == "| `bfs-4pe`: 1 FPGA, 4 BFS PEs | not measured | 150 MHz | - | - | - |"


def test_older_rtl_other_routers_and_missing_seeds_are_said():
    rows = [a_row(1, 89.3, router="router2", commit="b" * 40), a_row(2, None, router="router2", commit="b" * 40),
            a_row(3, 101.0, router="router2", commit="b" * 40, critical_path={
                "from": "design.pe2.apply.last_addr_TRELLIS_FF_Q", "to": "design.pe2.apply.busy_TRELLIS_FF_Q_12",
                "delay_ns": 11.242})]
    line = line_of(fmax_table(rows, "cccccccccccc"), "wcc-4pe")
    assert "89.3 MHz (median of seeds 1, 3: 89.3-101.0; no figure from seed 2, router2)" in line
    assert "150 MHz: missed" in line and line.endswith("| measured on older RTL (commit bbbbbbb) |")
    line = line_of(fmax_table(rows[2:], "cccccccccccc"), "wcc-4pe")
    assert "`pe2.apply.last_addr` -> `pe2.apply.busy` (11.24 ns)" in line and "(seed 3, router2)" in line


def test_the_table_goes_between_the_markers_only():
    page = f"# Title\n\nintro\n\n{BEGIN}\nold table\n{END}\n\nafter\n"
    written = with_table(page, "| new |\n", "page.md")
    assert written == f"# Title\n\nintro\n\n{BEGIN}\n| new |\n{END}\n\nafter\n"
    assert table_in(written, "page.md") == "| new |\n"
    with pytest.raises(ConfigError, match="page.md: needs one .* line and one .* line after it"):
        table_in("no markers", "page.md")
    with pytest.raises(ConfigError, match="page.md: needs one"):
        with_table(f"{END}\n{BEGIN}\n", "x", "page.md")
