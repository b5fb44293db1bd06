"""The build recipe of large FPGA models: identical modules kept once (gravfm.sim.shared_modules),
the build's parallelism outside its key."""

import os
import re

import pytest
from amaranth.back import verilog

from gravfm.algorithms import WCC
from gravfm.errors import SimulatorError
from gravfm.hw import FpgaTop, SystemConfig
from gravfm.hw.unused import silence_unused
from gravfm.sim import verilator_build
from gravfm.sim.shared_modules import NO_INLINE, module_names, share_modules
from gravfm.sim.verilator_build import BUILD_RECIPE, build_jobs, simulator_sources
from gravfm.synth.wrapper import PinLimitedWrapper

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


# Amaranth names a port that carries part of a parent's value ``port$<cell>$<bit>``, numbered over
# the design; Yosys sorts declarations and an instance's connections by name.
SLICED = """module \\top.{name} (clk, \\port$5${a} , \\port$9${b} );
  input clk;
  {first}
  {second}
  reg [3:0] r = 0;
  always @(posedge clk) r <= \\port$5${a} [3:0] + \\port$9${b} ;
endmodule
"""
SLICED_TOP = """module top(clk, w);
  input clk;
  input [7:0] w;
  \\top.pe0  pe0 (
    .clk(clk),
    .\\port$5$10 (w),
    .\\port$9$20 (w[3:0])
  );
  \\top.pe1  pe1 (
    .\\port$5$120 (w),
    .\\port$9$30 (w[7:4]),
    .clk(clk)
  );
endmodule
"""


def sliced(name, a, b):
    first, second = f"input [7:0] \\port$5${a} ;", f"input [3:0] \\port$9${b} ;"
    if f"port$5${a}" > f"port$9${b}":   # as Yosys sorts them
        first, second = second, first
    return SLICED.format(name=name, a=a, b=b, first=first, second=second)


def test_copies_whose_ports_amaranth_numbered_apart_are_kept_once():
    text, shared = share_modules(SLICED_TOP + sliced("pe0", 10, 20) + sliced("pe1", 120, 30))
    assert module_names(text) == ["top", "\\top.pe0"] and shared == {"\\top.pe0": 2}
    # pe1's instance now connects the kept module's ports, each to what it connected before.
    pe1 = text[text.index("pe1 ("):]
    assert ".\\port$5$10 (w)," in pe1 and ".\\port$9$20 (w[7:4])" in pe1 and "120" not in pe1
    # Ports in another place of the header are another module.
    text, shared = share_modules(SLICED_TOP.replace("$120", "$1") + sliced("pe0", 10, 20) +
                                 sliced("pe1", 1, 30).replace("(clk, \\port$5$1 , \\port$9$30 )",
                                                              "(clk, \\port$9$30 , \\port$5$1 )"))
    assert shared == {}


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


def test_a_synthesis_top_keeps_one_module_per_kind_of_pe():
    """Behind the synthesis pin wrapper the PEs take slices of its registers (Amaranth's ``port$``
    ports, numbered apart in each PE): they are still one module, so a hierarchical target (the
    U280) synthesises one PE, not 64."""
    wrapper = PinLimitedWrapper(FpgaTop(CONFIG))
    text, _ = share_modules(verilog.convert(wrapper, name="fpga_top", ports=wrapper.ports()))
    assert [name for name in module_names(text) if re.fullmatch(r"\\fpga_top\.design\.pe\d+", name)] == [
        "\\fpga_top.design.pe0"]
    assert sum(name.endswith(".scatter") for name in module_names(text)) == 1


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
