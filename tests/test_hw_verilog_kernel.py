"""Kernels written in Verilog (the paper's Listings 1-3) plug in through the paper's port names."""

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from amaranth.back import verilog

from gravfm.algorithms import WCC
from gravfm.errors import ConfigError
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import FpgaTop, KernelLayouts, SystemConfig, verilog_kernel
from gravfm.hw.verilog import (
    VerilogKernel,
    check_ports,
    expected_ports,
    parse_verilog_module,
    verilog_sources,
)
from conftest import check_run, run_flow
from gravfm.hw.unused import silence_unused

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "verilog_wcc" / "wcc_verilog.py"


def load_example():
    spec = importlib.util.spec_from_file_location("wcc_verilog_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.WCC_VERILOG


def test_instances_use_the_paper_port_names():
    algorithm = load_example()
    system = FpgaTop(SystemConfig.of(algorithm=algorithm, pes_per_fpga=2, local_bits=3, edges_per_pe=16))
    assert len(system.verilog_sources) == 3
    text = verilog.convert(system, name="gravfm_top", emit_src=False)
    for module, ports in (("wcc_gather", ["level_in", "message_in_label", "state_in_active", "state_ack"]),
                          ("wcc_apply", ["round_in", "state_barrier", "update_out_label", "update_ack"]),
                          ("wcc_scatter", ["num_neighbors_in", "message_out_label", "message_ack"])):
        assert text.count(f"{module} #(") == 2  # one per PE
        start = text.index(f"{module} #(")
        instance = text[start:text.index(");", start)]
        for port in ports + ["sys_clk"]:
            assert f".{port}(" in instance, (module, port)


def test_missing_module_or_file_is_reported(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        verilog_kernel("gather", module="g", source=tmp_path / "nope.v")
    source = tmp_path / "k.v"
    source.write_text("module other(); endmodule\n")
    with pytest.raises(ConfigError, match="defines no module 'g'"):
        verilog_kernel("gather", module="g", source=source)
    with pytest.raises(ConfigError, match="kind must be"):
        verilog_kernel("reduce", module="g", source=source)


@pytest.mark.slow
def test_verilog_wcc_runs_in_verilator(build_cache):
    """Compile the system with the Verilog kernels and check WCC on a tiny graph (through the flow)."""
    check_run(run_flow(load_example(), tiny_graph("two_components"), pes=2, backend="verilator",
                       local_bits=3, edges_per_pe=16, cache_dir=build_cache))


# --- parsing module headers and checking ports against the layouts ----------------------------

ANSI = """
// a comment with module fake(input x); inside
module k #(parameter W = 8, parameter D = W*2) (
    input  wire         sys_clk,
    input  wire [W-1:0] a, b,      /* two ports, one declaration */
    output reg  [D-1:0] y,
    output              z
);
endmodule
"""

NON_ANSI = """
module old(sys_clk, a, y);
  parameter W = 4;
  input sys_clk;
  input [W-1:0] a;
  output [$clog2(W*8):0] y;
endmodule
module other(q); output q; endmodule
"""


def test_ansi_header_with_parameters():
    module = parse_verilog_module(ANSI)
    assert module.name == "k"
    assert list(module.ports) == ["sys_clk", "a", "b", "y", "z"]
    assert module.port_widths() == {"sys_clk": ("input", 1), "a": ("input", 8), "b": ("input", 8),
                                    "y": ("output", 16), "z": ("output", 1)}
    # A parameter override changes the ports derived from it.
    assert module.port_widths({"W": 3})["y"] == ("output", 6)


def test_verilog_1995_header_and_module_choice():
    with pytest.raises(ConfigError, match="2 modules \\(old, other\\); say which one"):
        parse_verilog_module(NON_ANSI)
    module = parse_verilog_module(NON_ANSI, name="old")
    assert module.port_widths() == {"sys_clk": ("input", 1), "a": ("input", 4), "y": ("output", 6)}
    with pytest.raises(ConfigError, match="port 'q' of module 'bad' has no input/output declaration"):
        parse_verilog_module("module bad(q); wire q; endmodule")
    with pytest.raises(ConfigError, match="unknown parameter 'X'"):
        parse_verilog_module("module u(input [X-1:0] a); endmodule").port_widths()


def wcc_layouts(pes=2, local_bits=3):
    return KernelLayouts(WCC, SystemConfig.of(algorithm=WCC, pes_per_fpga=pes, local_bits=local_bits,
                                           edges_per_pe=16))


def header(name, ports):
    """A module with ``ports`` given as (direction, width, name)."""
    body = ",\n".join(f"  {d} [{w - 1}:0] {n}" if w > 1 else f"  {d} {n}" for d, w, n in ports)
    return f"module {name}(\n{body});\nendmodule\n"


def test_expected_ports_follow_the_layouts():
    layouts = wcc_layouts()  # vertex ids: 1 PE bit + 3 local bits
    gather = expected_ports("gather", layouts)
    assert gather["message_in_label"] == ("input", 4)
    assert gather["state_out_active"] == ("output", 1)
    assert gather["level_in"] == ("input", 16)
    assert gather["sys_clk"] == ("input", 1)
    apply = expected_ports("apply", layouts)
    assert apply["update_ack"] == ("input", 1) and apply["update_valid"] == ("output", 1)
    scatter = expected_ports("scatter", layouts)
    assert scatter["num_neighbors_in"] == ("input", 5)  # edges_per_pe = 16 -> 0..16
    assert not any(name.startswith("edge_in_") for name in scatter)  # WCC has no edge data


def test_edge_data_becomes_edge_in_ports():
    from gravfm.algorithms import SSSP
    layouts = KernelLayouts(SSSP, SystemConfig.of(algorithm=SSSP, pes_per_fpga=1, local_bits=3, edges_per_pe=8))
    scatter = expected_ports("scatter", layouts)
    assert scatter["edge_in_weight"] == ("input", 32)
    assert scatter["update_in_distance"] == ("input", 32)
    assert expected_ports("gather", layouts)["state_in_parent"] == ("input", 4)


def test_mismatched_ports_are_listed():
    layouts = wcc_layouts()
    ports = [(d, w, n) for n, (d, w) in expected_ports("gather", layouts).items()]
    ports = [p for p in ports if p[2] not in ("state_ack", "message_in_label")]
    ports = [("input", 5, "nodeid_in") if p[2] == "nodeid_in" else p for p in ports]
    ports = [("input", 1, "ready") if p[2] == "ready" else p for p in ports]
    ports.append(("input", 2, "debug_in"))
    module = parse_verilog_module(header("g", ports), origin="g.v")
    with pytest.raises(ConfigError) as error:
        check_ports("gather", module, layouts)
    message = str(error.value)
    assert message.startswith("g.v: Verilog gather kernel 'g' does not match the layouts: ")
    assert "missing ports: input [4] message_in_label, input [1] state_ack" in message
    assert "extra ports: debug_in" in message
    assert "nodeid_in is input [5], expected input [4]" in message
    assert "ready is input [1], expected output [1]" in message


def test_exact_ports_pass_and_system_parameters_are_set():
    layouts = wcc_layouts(pes=4, local_bits=2)  # vertex ids of 4 bits
    text = """module s #(parameter VERTEXID_BITS = 1, parameter NUM_NEIGHBORS_BITS = 1) (
      input sys_clk, input sys_rst,
      input [VERTEXID_BITS-1:0] update_in_label, sender_in, neighbor_in,
      input [15:0] round_in, input barrier_in, input [NUM_NEIGHBORS_BITS-1:0] num_neighbors_in,
      input valid_in, output ready,
      output [VERTEXID_BITS-1:0] message_out_label, neighbor_out, sender_out,
      output [15:0] round_out, output barrier_out, output valid_out, input message_ack);
    endmodule"""
    kernel = VerilogKernel(kind="scatter", verilog_module=parse_verilog_module(text), layouts=layouts)
    silence_unused(kernel)  # built to inspect, never elaborated
    assert kernel.parameters == {"VERTEXID_BITS": 4, "NUM_NEIGHBORS_BITS": 5}
    assert kernel.module == "s" and kernel.verilog_source == text


def test_unknown_parameter_is_rejected(tmp_path):
    source = Path(__file__).resolve().parents[1] / "examples" / "verilog_wcc" / "wcc_gather.v"
    factory = verilog_kernel("gather", source, module="wcc_gather", parameters={"WIDTH": 4})
    with pytest.raises(ConfigError, match="module 'wcc_gather' has no parameter 'WIDTH' \\(declared: W\\)"):
        factory(wcc_layouts())


def test_example_ports_are_checked_when_the_system_is_built():
    """With the widths parameter left out, W keeps its default 8 and the ports no longer fit."""
    example = load_example()
    source = EXAMPLE.parent / "wcc_gather.v"
    broken = dataclasses.replace(example, gather=verilog_kernel("gather", source, module="wcc_gather"))
    with pytest.raises(ConfigError, match=r"nodeid_in is input \[8\], expected input \[4\]"):
        FpgaTop(SystemConfig.of(algorithm=broken, pes_per_fpga=2, local_bits=3, edges_per_pe=16))


def test_every_output_port_is_connected_in_the_generated_verilog():
    algorithm = load_example()
    config = SystemConfig.of(algorithm=algorithm, pes_per_fpga=1, local_bits=3, edges_per_pe=16)
    system = FpgaTop(config)
    text = verilog.convert(system, name="gravfm_top", emit_src=False)
    for kind in ("gather", "apply", "scatter"):
        start = text.index(f"wcc_{kind} #(")
        instance = text[start:text.index(");", start)]
        for port in expected_ports(kind, system.layouts):
            assert f".{port}(" in instance, (kind, port)
        # The width parameter is set from the build (1 PE bit + 3 local bits).
        assert ".W(32'd4)" in instance
    assert verilog_sources(algorithm).count("endmodule") == 3


def test_simulator_sources_carry_the_kernels():
    from gravfm.sim import verilator as vl
    from gravfm.sim.shared_modules import share_modules

    algorithm = load_example()
    system = FpgaTop(SystemConfig.of(algorithm=algorithm, pes_per_fpga=1, local_bits=2, edges_per_pe=8))
    sources = vl.simulator_sources(system)
    assert system.verilog_sources
    for text in system.verilog_sources:
        assert text in sources.verilog
    # The exported top (identical modules kept once) instantiates the kernels' modules that the
    # sources now define.
    shared, _ = share_modules(vl.export_verilog(system))
    assert sources.verilog.count("endmodule") == shared.count("endmodule") + 3


SSSP_SCATTER = """
// SSSP scatter in Verilog: distance + edge weight (edge data port), saturated, one register.
module sssp_scatter #(parameter VERTEXID_BITS = 8, parameter NUM_NEIGHBORS_BITS = 8) (
    input sys_clk, input sys_rst,
    input [31:0] update_in_distance, input [VERTEXID_BITS-1:0] sender_in, input [15:0] round_in,
    input barrier_in, input [VERTEXID_BITS-1:0] neighbor_in,
    input [NUM_NEIGHBORS_BITS-1:0] num_neighbors_in, input [31:0] edge_in_weight,
    input valid_in, output ready,
    output reg [31:0] message_out_distance, output reg [VERTEXID_BITS-1:0] neighbor_out,
    output reg [VERTEXID_BITS-1:0] sender_out, output reg [15:0] round_out,
    output reg barrier_out, output reg valid_out, input message_ack);
  wire [32:0] total = update_in_distance + edge_in_weight;
  assign ready = message_ack | ~valid_out;
  always @(posedge sys_clk) begin
    if (sys_rst) valid_out <= 1'b0;
    else if (ready) begin
      message_out_distance <= total >= 33'hFFFFFFFF ? 32'hFFFFFFFF : total[31:0];
      neighbor_out <= neighbor_in; sender_out <= sender_in; round_out <= round_in;
      barrier_out <= barrier_in; valid_out <= valid_in;
    end
  end
endmodule
"""


@pytest.mark.slow
def test_verilog_scatter_with_edge_data_runs_in_verilator(build_cache):
    """A Verilog scatter reading edge weights (``edge_in_weight``) beside Amaranth gather/apply."""
    from gravfm.algorithms import SSSP
    from gravfm.graph import Graph

    algorithm = dataclasses.replace(SSSP, name="sssp_verilog_scatter",
                                    scatter=verilog_kernel("scatter", text=SSSP_SCATTER))
    far = (1 << 32) - 11
    rng = np.random.default_rng(4)
    src = np.concatenate([[0, 1, 0, 2], rng.integers(0, 12, 30)])
    dst = np.concatenate([[1, 2, 2, 3], rng.integers(0, 12, 30)])
    weights = np.concatenate([[far, 20, 100, 7], rng.integers(1, 50, 30)])
    graph = Graph.from_edges(src, dst, num_vertices=12, weights=weights)
    check_run(run_flow(algorithm, graph, pes=2, backend="verilator", local_bits=3, edges_per_pe=64,
                       cache_dir=build_cache))
