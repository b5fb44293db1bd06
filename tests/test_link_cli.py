"""``gravfm run --link-*``: every link parameter, the faults and the link check from the command
line; bad values refused with one line before any work; a link error is exit 1 with its diagnosis."""

import json

import pytest

from gravfm.cli import build_parser, main
from gravfm.cli.link_options import link_options_from_args
from gravfm.model import algorithm_params, predict

from conftest import cli_error

SMALL = "rmat:scale=7,ef=8,seed=2"
#: The ideal link of LinkConfig() spelled as options on top of the platform's (the same build).
IDEAL = ["--link-latency", "2", "--link-bandwidth", "unlimited", "--link-fifo-depth", "16"]


def parsed(*options):
    return link_options_from_args(build_parser().parse_args(["run", "wcc", "--graph", "tiny:grid", *options]))


def test_every_link_parameter_has_an_option():
    options = parsed("--link-bandwidth", "12.5", "--link-latency", "40", "--link-fifo-depth", "48",
                     "--link-reorder", "3", "--link-stall", "0.25", "--link-seed", "7", "--link-drop", "1e-3",
                     "--link-duplicate", "0.002", "--link-flip", "0.5", "--link-dead", "0-2", "--link-dead", "2-1@5000",
                     "--link-check", "retransmit", "--link-replay-depth", "64")
    assert options == {"bits_per_cycle": 12.5, "latency_cycles": 40, "fifo_depth": 48, "reorder_window": 3,
                       "stall_probability": 0.25, "seed": 7, "drop_rate": 1e-3, "duplicate_rate": 0.002,
                       "flip_rate": 0.5, "check": "retransmit", "replay_depth": 64,
                       "dead": ((0, 2, 0), (2, 1, 5000))}
    assert parsed() == {}
    assert parsed("--link-bandwidth", "unlimited") == {"bits_per_cycle": None}


@pytest.mark.parametrize("options, message", [
    (["--link-drop", "1.5"], r"argument --link-drop: expected a value in \[0, 1\), not 1.5"),
    (["--link-bandwidth", "0"], "argument --link-bandwidth: expected a value > 0, not 0"),
    (["--link-fifo-depth", "0"], "argument --link-fifo-depth: expected a value >= 1, not 0"),
    (["--link-dead", "1-1"], r"argument --link-dead: expected SENDER-RECEIVER\[@CYCLES\] with two different FPGAs, e.g. 0-1"),
    (["--link-check", "maybe"], "argument --link-check: invalid choice: 'maybe'"),
    (["--link-drop", "0.1"], r"link options \(drop_rate\) need several FPGAs \(--fpgas 2 or more\)"),
    (["--fpgas", "2", "--link-dead", "0-2"], "dead link 0-2: the system has FPGAs 0..1"),
    (["--fpgas", "2", "--link-check", "detect", "--link-reorder", "3"], "the detect link check needs an in-order link"),
    (["--fpgas", "2", "--link-check", "retransmit", "--link-replay-depth", "48"], "a power of two in 4..32768"),
    (["--fpgas", "2", "--link-drop", "0.6", "--link-flip", "0.5"], "the link's fault rates add up to 1.1"),
    (["--fpgas", "2", "--link-flip", "1e-6"], r"LinkConfig.flip_rate must be 0 or in \[1/65536, 1\)"),
])
def test_bad_link_options_are_one_line(capsys, tmp_path, options, message):
    import re

    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--cache", tmp_path, *options)
    assert re.search(message, line), line


def run_cli(capsys, *argv):
    """``gravfm run`` in-process: (exit status, stdout)."""
    capsys.readouterr()
    status = main(["run", *map(str, argv)])
    return status, capsys.readouterr().out


def test_a_link_error_is_exit_1_with_the_diagnosis(capsys, tmp_path, build_cache):
    out = tmp_path / "run.json"
    status, text = run_cli(capsys, "wcc", "--graph", SMALL, "--fpgas", "2", *IDEAL, "--link-check", "detect",
                           "--link-flip", "0.01", "--cache", build_cache, "--json", out)
    figures = json.loads(out.read_text())
    assert status == 1 and figures["status"] == "link_error" and not figures["verified"]
    assert figures["links"]["flipped"] > 0 and figures["links"]["check"] == "detect"
    line = figures["diagnosis"][0]
    assert line.startswith("link ") and ": corrupt: corrupt frame (CRC mismatch) where item " in line
    assert f"link error: {line}" in " ".join(text.split())


def test_retransmission_from_the_command_line(capsys, tmp_path, build_cache):
    out = tmp_path / "run.json"
    status, text = run_cli(capsys, "wcc", "--graph", SMALL, "--fpgas", "2", *IDEAL, "--link-check", "retransmit",
                           "--link-drop", "0.01", "--link-duplicate", "0.01", "--link-flip", "0.01",
                           "--cache", build_cache, "--json", out)
    figures = json.loads(out.read_text())
    assert status == 0 and figures["verified"] and figures["status"] == "done"
    links = figures["links"]
    assert links["retransmissions"] > 0 and links["dropped"] > 0 and links["discarded"] > 0
    text = " ".join(text.split())
    total = f"{links['dropped']}/{links['duplicated']}/{links['flipped']}"   # lost/twice/flipped
    assert "link check retransmit" in text and total in text
    # The frame's bits count on the link: sender id + label + 2 x 8 sequence bits, 2 flags, a CRC-8.
    assert links["item_bits"] == 8 + 8 + 26
    # ... and in the model's m_update: the interface limit falls by 64 / (64 + 26) (the same
    # partition's update fan-out in both).
    model = figures["model"]["detail"]
    plain = predict("ac510x4", algorithm_params("wcc"), model["vertices"], model["edges"], fpgas=2, pes=1,
                    update_fanout=model["details"]["update_fanout"])
    assert model["limits_mteps"]["L_if"] == pytest.approx(plain.limits["L_if"] / 1e6 * 64 / (64 + 26))


@pytest.mark.parametrize("mode, added", [("off", 0), ("detect", 17), ("retransmit", 32)])
def test_the_model_counts_the_frame_bits(capsys, mode, added):
    """``gravfm model --link-check``: m_update + the frame's bits on the platform's links (4 FPGAs:
    a 1024-frame window, so 11 sequence bits, with retransmission)."""
    capsys.readouterr()
    assert main(["model", "--algorithm", "wcc", "--vertices", "65536", "--edges", "2097152", "--fpgas", "4",
                 "--pes", "9", "--link-check", mode]) == 0
    assert f"m_update {64 + added}, m_message {96 + added}," in capsys.readouterr().out
