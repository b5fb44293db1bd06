"""What ``gravfm run`` prints (issue 22 item 7): one result line with --quiet, unwrapped piped
output, per-superstep cycles aligned with their messages, --plot; ``gravfm model --plot``'s axes."""

import json
import math
import subprocess
import sys

from gravfm.cli import main
from gravfm.flow.reporting import SUPERSTEP_CYCLES_NOTE, superstep_cycles
from gravfm.model.plot import TOP_FACTOR, y_top
from gravfm.sim.readback import SuperstepRow

FAST = ["run", "wcc", "--graph", "tiny:grid", "--backend", "amaranth", "--edge-memory", "onchip"]
PNG = b"\x89PNG\r\n\x1a\n"


def test_superstep_cycles_are_those_of_the_rounds_messages():
    # Applies end at 20, 90, 150 (the log's cycles are end minus previous end); the run ends at 160.
    rounds = (SuperstepRow(0, 16, 48, 20), SuperstepRow(1, 15, 40, 70), SuperstepRow(2, 0, 0, 60))
    first_apply, cycles = superstep_cycles(rounds, 160)
    assert first_apply == 20 and cycles == (70, 60, 10)
    assert first_apply + sum(cycles) == 160
    assert superstep_cycles((SuperstepRow(0, 1, 1, None),), 9) == (None, (None,))


def test_quiet_prints_only_the_result_line_and_still_writes_json_and_plot(tmp_path, capsys):
    figures, plot = tmp_path / "run.json", tmp_path / "run.png"
    assert main([*FAST, "--quiet", "--json", str(figures), "--plot", str(plot)]) == 0
    out, err = capsys.readouterr()
    data = json.loads(figures.read_text())
    assert out.splitlines() == [f"wcc on tiny:grid: done, verified, {data['cycles']:,} cycles, "
                                f"{data['messages']:,} messages, {data['mteps']:,.1f} MTEPS at the assumed 187.5 MHz "
                                f"(simulated)"]
    assert err == ""
    assert plot.read_bytes().startswith(PNG)


def test_piped_output_never_wraps_a_sentence(tmp_path):
    code = "import sys; from gravfm.cli import main; sys.exit(main())"
    completed = subprocess.run([sys.executable, "-c", code, *FAST], capture_output=True, text=True,
                               timeout=300, env={"COLUMNS": "60", "PATH": "/usr/bin:/bin"})
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    # Sentences longer than any terminal's 80 columns each stay on one line.
    whole = [next(line for line in lines if line.startswith(start)) for start in
             ("configuration:", "model prediction:", "simulator:", "cycles of round r:")]
    assert whole[0].endswith("MHz") and "measured" in whole[1] and whole[2].endswith("edges/s")
    assert whole[3].startswith(SUPERSTEP_CYCLES_NOTE) and whole[3].endswith("cycles")
    assert len(whole[0]) > 80 and len(whole[3]) > 80


def test_model_plot_axis_keeps_every_limit_and_ignores_the_unbounded():
    t_sys = [1600.0, 2100.0, 3150.0]
    curves = [[1600.0, 3200.0, 4800.0], [math.inf, 90_000.0, 40_000.0], [math.nan, 2100.0, 3150.0]]
    top = y_top(t_sys, curves)
    assert math.isfinite(top) and top < 90_000.0
    assert all(min(v for v in values if math.isfinite(v)) < top for values in curves)  # each curve shows
    assert y_top([100.0], [[120.0]]) == 1.05 * 120.0  # nothing high: no empty space above
    assert y_top([100.0], [[100.0, 1e9]]) == TOP_FACTOR * 100.0
