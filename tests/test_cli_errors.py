"""Errors that are exact (issue 35 item 6): each names the option the user typed and tells the
truth in figures that agree; a user's reference is checked against the layouts as it returns."""

import subprocess
import sys
from pathlib import Path

from conftest import cli_error

EXAMPLES = Path(__file__).parent.parent / "examples"
ONCHIP = ["--backend", "amaranth", "--edge-memory", "onchip"]


def test_vertices_per_pe_too_small_names_the_option_and_its_minimum(capsys):
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--vertices-per-pe", "4", *ONCHIP)
    assert line.endswith("--vertices-per-pe 4 (local_bits=2) is too small: a PE holds up to 16 vertices; "
                         "use at least --vertices-per-pe 16")


def test_edges_per_pe_too_small_names_the_option_not_the_internal_key(capsys):
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--edges-per-pe", "1", *ONCHIP)
    assert line.endswith("--edges-per-pe 1 (edges_per_pe) is too small: a PE holds up to 48 edges; "
                         "use at least --edges-per-pe 48")
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--edges-per-pe", "1", "--backend", "amaranth",
                     "--edge-memory", "offchip")
    assert "with edges off chip it bounds one edge list, and the longest holds 4 edges" in line
    assert line.endswith("use at least --edges-per-pe 4")


def test_an_initial_state_too_wide_is_one_line_and_nothing_after(tmp_path):
    source = (EXAMPLES / "hop_distance.py").read_text()
    wide = source.replace('"distance": np.zeros(n, dtype=np.int64)', '"distance": np.full(n, 300, dtype=np.int64)')
    assert wide != source
    path = tmp_path / "wide.py"
    path.write_text(wide)
    completed = subprocess.run([sys.executable, "-m", "gravfm", "run", f"{path}:HOP_DISTANCE", "--graph", "tiny:grid",
                                *ONCHIP, "--quiet"], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 2
    assert completed.stderr.splitlines() == ["gravfm: error: algorithm 'hop_distance': initial state field "
                                             "'distance': value 300 (vertex 0) does not fit in its 8 bits"]


def test_a_platform_without_the_memory_latency_is_refused_naming_the_key(tmp_path, capsys):
    from gravfm.model.platform import PLATFORM_DIR

    text = (PLATFORM_DIR / "ac510x4.toml").read_text()
    path = tmp_path / "nolatency.toml"
    path.write_text(text.replace("latency_cycles = 190\n", "", 1))
    line = cli_error(capsys, "model", "--platform", path, "--vertices", "100", "--edges", "1000")
    assert f"{path}" in line and "[memory]" in line and "missing key 'latency_cycles'" in line


def test_a_reference_update_with_a_misspelt_field_is_refused_where_it_is_returned(tmp_path, capsys):
    source = (EXAMPLES / "widest_path.py").read_text()
    old = '{"width": i.state.width}'
    assert source.count(old) == 1
    path = tmp_path / "misspelt.py"
    path.write_text(source.replace(old, '{"widthh": i.state.width}'))
    line = cli_error(capsys, "run", f"{path}:WIDEST_PATH", "--graph", "tiny:grid", *ONCHIP)
    assert f"{path}:" in line and "apply (reference_apply) update names 'widthh', which is not a field " \
                                  "(fields: width)" in line
    # A field left out is refused the same way, naming the layout's field.
    path.write_text(source.replace(old, "{}"))
    line = cli_error(capsys, "run", f"{path}:WIDEST_PATH", "--graph", "tiny:grid", *ONCHIP)
    assert "apply (reference_apply) update lacks field 'width' of the update layout" in line
