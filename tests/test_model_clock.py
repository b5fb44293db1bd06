"""A platform's clock basis (issue 38 item 4): met, with the place-and-route row it comes from, or
assumed; the loader refuses a bad ``[clock]`` by file and field, and the built-in rows are real."""

import json
import math

import pytest

from conftest import cli_error
from gravfm.errors import ConfigError
from gravfm.model import builtin_platforms, load_platform
from gravfm.model.clock import platform_at
from gravfm.model.platform import PLATFORM_DIR
from gravfm.provenance import PACKAGE_PARENT

AC510 = PLATFORM_DIR / "ac510x4.toml"
MET = """[clock]
basis = "met"

[clock.met]
source = "synth_matrix.json"
target = "ecp5-85"
top = "the 4-PE WCC top"
commit = "0123456"
fmax_mhz = 190.0
"""


def _variant(tmp_path, clock):
    """ac510x4 with ``clock`` in place of its ``[clock]`` table."""
    text = AC510.read_text()
    start = text.index("[clock]")
    path = tmp_path / "variant.toml"
    path.write_text(text[:start] + clock + "\n" + text[text.index("[memory]"):])
    return path


def test_builtin_clocks_say_what_they_rest_on():
    assert {name: load_platform(name).clock.basis for name in builtin_platforms()} == {
        "ac510x16": "assumed", "ac510x4": "assumed", "ac510x8-2nodes": "assumed", "ecpix5x2": "met",
        "ecpix5x2-sata": "met", "ecpix5x4": "assumed", "kcu105x2": "assumed", "u280": "assumed",
        "u280x2": "assumed", "u280x4": "assumed", "ulx3s85": "met"}
    assert load_platform("ulx3s85").clock.synth_target == "ecp5-85-6"
    assert load_platform("ecpix5x2").clock.synth_target == "ecp5-85"


def _numbers(value):
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


@pytest.mark.parametrize("name", ["ecpix5x2", "ulx3s85"])
def test_a_met_clock_names_a_row_that_exists(name):
    platform = load_platform(name)
    met = platform.clock.met
    document = json.loads((PACKAGE_PARENT / "benchmarks" / "results" / met.source).read_text())
    assert met.commit in json.dumps(document)
    assert any(math.isclose(number, met.fmax_mhz, abs_tol=0.005) for number in _numbers(document))
    assert platform.fpga.f_clk_mhz <= met.fmax_mhz


def test_a_file_without_a_clock_table_is_assumed(tmp_path):
    assert load_platform(_variant(tmp_path, "")).clock.basis == "assumed"
    platform = load_platform(_variant(tmp_path, MET))
    assert platform.clock.basis == "met" and platform.clock.met.fmax_mhz == 190.0


@pytest.mark.parametrize("clock, message", [
    ('[clock]\nbasis = "measured"\n', r"variant.toml \[clock.basis\]: 'measured' is not one of 'assumed', 'met'"),
    ('[clock]\nbasis = "met"\n', r"variant.toml \[clock\]: clock.basis is 'met': clock.met must name"),
    (MET.replace('"met"', '"assumed"', 1), r"\[clock\]: clock.met names a row, but clock.basis is 'assumed'"),
    (MET.replace("fmax_mhz = 190.0", "fmax_mhz = 150.0"),
     r"variant.toml: platform 'ac510x4': fpga.f_clk_mhz 187.5 is above the Fmax .*clock.met.fmax_mhz 150"),
    (MET.replace("commit", "comit"), r"\[clock.met\]: unknown key 'comit'"),
    (MET.replace('top = "the 4-PE WCC top"\n', ""), r"\[clock.met\]: missing key 'top'"),
    ('[clock]\nsynth_target = 8\n', r"\[clock.synth_target\]: expected a string"),
])
def test_a_bad_clock_is_refused_by_file_and_field(tmp_path, clock, message):
    with pytest.raises(ConfigError, match=message):
        load_platform(_variant(tmp_path, clock))


def test_the_cli_refuses_a_bad_basis_in_one_line(tmp_path, capsys):
    path = _variant(tmp_path, '[clock]\nbasis = "guessed"\n')
    line = cli_error(capsys, "model", "--platform", path, "--vertices", "100", "--edges", "1000")
    assert line.endswith("variant.toml [clock.basis]: 'guessed' is not one of 'assumed', 'met'")


def test_the_cli_refuses_an_unknown_synth_target_in_one_line(tmp_path, capsys):
    path = _variant(tmp_path, '[clock]\nsynth_target = "ecp5-25"\n')
    line = cli_error(capsys, "model", "--platform", path, "--vertices", "100", "--edges", "1000")
    assert line.endswith("variant.toml: clock.synth_target 'ecp5-25' is not a gravfm synth target "
                         "(one of ecp5-85, ecp5-85-6, xcu, u280)")
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--platform", path, "--backend", "amaranth")
    assert "clock.synth_target 'ecp5-25'" in line


def test_a_platform_at_another_clock_is_an_assumption_of_its_caller():
    platform = load_platform("ulx3s85")
    faster = platform_at(platform, 150.0)
    assert faster.fpga.f_clk_mhz == 150.0 and faster.clock.basis == "assumed" and faster.clock.met is None
    assert faster.clock.synth_target == "ecp5-85-6" and faster.memory == platform.memory
