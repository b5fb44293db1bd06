"""The build recipe of large FPGA models: identical modules kept once (gravfm.sim.shared_modules),
the build's parallelism outside its key."""

import os
import re

import pytest

from gravfm.algorithms import WCC
from gravfm.errors import SimulatorError
from gravfm.hw import FpgaTop, SystemConfig
from gravfm.hw.unused import silence_unused
from gravfm.sim import verilator_build
from gravfm.sim.shared_modules import NO_INLINE, module_names, share_modules
from gravfm.sim.verilator_build import BUILD_RECIPE, build_jobs, simulator_sources

# Yosys write_verilog style: escaped names end in a space; helper registers numbered over the file.
LEAF = """module \\top.{name} (clk, o);
  reg \\$auto$verilog_backend.cc:2355:dump_module${auto}  = 0;
  input clk;
  output [{width}:0] o;
  reg [{width}:0] o = 0;
  always @(posedge clk) o <= o + 1'h1;
endmodule
"""
PARENT = """module \\top.{name} (clk, o);
  input clk;
  output [3:0] o;
  \\top.{child}  leaf (
    .clk(clk),
    .o(o)
  );
endmodule
"""
TOP = """module top(clk, a, b, c);
  input clk;
  output [3:0] a;
  output [3:0] b;
  output [7:0] c;
  \\top.pe0  pe0 (
    .clk(clk),
    .o(a)
  );
  \\top.pe1  pe1 (
    .clk(clk),
    .o(b)
  );
  \\top.odd  odd (
    .clk(clk),
    .o(c)
  );
endmodule
"""


def design(*, second_width=3):
    """Two PEs equal but for names (their leaves too), and a leaf that differs in its text."""
    return "".join([TOP, PARENT.format(name="pe0", child="pe0.leaf"), PARENT.format(name="pe1", child="pe1.leaf"),
                    LEAF.format(name="pe0.leaf", auto=3, width=3),
                    LEAF.format(name="pe1.leaf", auto=7, width=second_width), LEAF.format(name="odd", auto=9, width=7)])


def test_modules_equal_but_for_names_are_kept_once():
    text, shared = share_modules(design())
    assert module_names(text) == ["top", "\\top.pe0", "\\top.pe0.leaf", "\\top.odd"]
    assert shared == {"\\top.pe0": 2, "\\top.pe0.leaf": 2}
    # Both instances now name the kept module; their instance names stay.
    assert re.findall(r"^  (\S+)  (\w+) \($", text, re.M)[:3] == [
        ("\\top.pe0", "pe0"), ("\\top.pe0", "pe1"), ("\\top.odd", "odd")]
    assert "\\top.pe1" not in text
    # The PE stays a class of its own in Verilator's model; its leaf is Verilator's to inline.
    assert text.count(NO_INLINE) == 1
    assert "module \\top.pe0 (clk, o);\n" + NO_INLINE in text


def test_a_dropped_module_takes_its_attributes_along():
    # Amaranth writes attributes before every module; a copy at the end of the file left its own
    # standing before nothing (a syntax error for Yosys).
    attributed = "".join(f'(* generator = "Amaranth" *)\n{module}' for module in [
        TOP, PARENT.format(name="pe0", child="pe0.leaf"), LEAF.format(name="pe0.leaf", auto=3, width=3),
        LEAF.format(name="odd", auto=9, width=7), PARENT.format(name="pe1", child="pe1.leaf"),
        LEAF.format(name="pe1.leaf", auto=7, width=3)])
    text, shared = share_modules(attributed)
    assert shared == {"\\top.pe0": 2, "\\top.pe0.leaf": 2}
    assert text.count('(* generator = "Amaranth" *)\n') == 4 == len(module_names(text))
    assert text.endswith("endmodule\n")


def test_modules_that_differ_stay_apart():
    # A leaf one bit wider is another module, and so is the PE holding it.
    text, shared = share_modules(design(second_width=4))
    assert shared == {}
    assert text == design(second_width=4)


WIDE = """module \\top.{name} (clk, o{more});
  input clk;
  output [3:0] o;{declared}
  reg [3:0] o = 0;
  wire [3:0] {extra};
  assign {extra} = o + 1'h1;
  always @(posedge clk) o <= {extra};
endmodule
"""


def outputs(name, *extra):
    """A leaf whose wires ``p`` and ``q`` exist whatever it is, ``extra`` of them also outputs."""
    return WIDE.format(name=name, more="".join(f", {e}" for e in extra), extra="p",
                       declared="".join(f"\n  output [3:0] {e};" for e in extra)).replace(
        "  wire [3:0] p;", "  wire [3:0] p;\n  wire [3:0] q;\n  assign q = p;")


def test_a_module_with_more_outputs_stands_for_the_others():
    top = TOP.replace("odd (", "pe2 (").replace("\\top.odd ", "\\top.pe2 ")
    text, shared = share_modules(top + outputs("pe0") + outputs("pe1", "p") + outputs("pe2"))
    assert module_names(text) == ["top", "\\top.pe1"] and shared == {"\\top.pe1": 3}
    # No member has both outputs of a group: outputs tell those apart again.
    text, shared = share_modules(top + outputs("pe0", "q") + outputs("pe1", "p") + outputs("pe2", "q"))
    assert module_names(text) == ["top", "\\top.pe0", "\\top.pe1"] and shared == {"\\top.pe0": 2}


def test_a_text_without_copies_is_unchanged():
    text = TOP.replace("\\top.pe1 ", "\\top.pe0 ") + PARENT.format(name="pe0", child="odd") + LEAF.format(
        name="odd", auto=1, width=7)
    assert share_modules(text) == (text, {})


CONFIG = SystemConfig.of(algorithm=WCC, pes_per_fpga=4, local_bits=2, edges_per_pe=8, arch="hybrid")


@pytest.fixture(scope="module")
def hybrid_sources():
    """The sources of a 4-PE hybrid FPGA's build (exported once: seconds)."""
    return simulator_sources(FpgaTop(CONFIG))


def test_an_fpga_top_keeps_one_module_per_kind_of_pe(hybrid_sources):
    """All PEs and all their parts are one module each in the Verilog the build compiles (PE 0's,
    which also drives the top's superstep), and the PE is a C++ class of its own."""
    verilog = hybrid_sources.verilog
    names = module_names(verilog)
    assert [name for name in names if re.fullmatch(r"\\gravfm_top\.pe\d+", name)] == ["\\gravfm_top.pe0"]
    assert not [name for name in names if re.match(r"\\gravfm_top\.pe[123]", name)]
    assert sum(name.endswith(".gather") for name in names) == 1
    assert len(re.findall(r"^  \\gravfm_top\.pe0  pe\d ", verilog, re.M)) == 4
    kept_apart = re.findall(r"^module (\S+) \([^;]*\);\n" + re.escape(NO_INLINE), verilog, re.M)
    assert "\\gravfm_top.pe0" in kept_apart and not [name for name in kept_apart if ".pe0." in name]


def test_build_jobs_use_the_cores_and_stay_out_of_the_key(hybrid_sources, monkeypatch, tmp_path):
    jobs = build_jobs()
    assert jobs[:2] == ("-j", str(len(os.sched_getaffinity(0))))
    assert "-j" not in hybrid_sources.flags
    commands = []

    def run(command, **_):
        commands.append(command)
        raise SimulatorError("stopped by the test")

    monkeypatch.setattr(verilator_build, "run_build_command", run)
    with pytest.raises(SimulatorError, match="stopped by the test"):
        verilator_build.build_simulator(hybrid_sources, cache_dir=tmp_path)
    assert commands and commands[0][1:1 + len(jobs)] == list(jobs)


def test_the_recipe_is_part_of_the_key(hybrid_sources, monkeypatch):
    monkeypatch.setattr(verilator_build, "export_verilog", lambda top: hybrid_sources.verilog)
    assert simulator_sources(silence_unused(FpgaTop(CONFIG))).key == hybrid_sources.key
    monkeypatch.setattr(verilator_build, "BUILD_RECIPE", BUILD_RECIPE + "-other")
    assert simulator_sources(silence_unused(FpgaTop(CONFIG))).key != hybrid_sources.key
