"""Kernels written in Verilog, instantiated in the PE through an Amaranth ``Instance``.

A user writes a gather, apply or scatter module with the port names of the paper's Listings 1-3
(docs/kernels.md); a layout field ``f`` becomes one port per field with the suffix ``_f``:

=========  ====================================================================================
kernel     Verilog ports (``->`` outputs of the module)
=========  ====================================================================================
gather     ``level_in nodeid_in sender_in message_in_<f> state_in_<f> valid_in state_ack``
           -> ``ready nodeid_out state_out_<f> state_valid``
apply      ``nodeid_in state_in_<f> round_in barrier_in valid_in update_ack``
           -> ``ready nodeid_out state_out_<f> state_barrier state_valid update_out_<f>
           update_sender update_round barrier_out update_valid``
scatter    ``update_in_<f> sender_in round_in barrier_in neighbor_in num_neighbors_in
           edge_in_<f> valid_in message_ack``
           -> ``ready message_out_<f> neighbor_out sender_out round_out barrier_out valid_out``
=========  ====================================================================================

plus the clock input ``sys_clk`` and, optionally, an active-high synchronous reset ``sys_rst``.
``edge_in_<f>`` (edge data, e.g. a weight) is gravfm's name; the paper's listing has none.
The handshakes map onto the Amaranth streams of :mod:`gravfm.hw.kernels`: ``valid_in``/``ready``
is the input stream, ``state_valid``/``state_ack`` (gather), ``update_valid``/``update_ack``
(apply) and ``valid_out``/``message_ack`` (scatter) the output streams; apply's ``state_valid``
has no acknowledge (the write-back is always accepted). The rules of
:mod:`gravfm.hw.layouts` hold as for any kernel (apply passes the barrier on ``update_valid``).

Port widths depend on the build (a ``vertexid`` field is as wide as a hardware vertex id), so
a module may declare any of the parameters :data:`SYSTEM_PARAMETERS`; gravfm sets them on the
instance and evaluates the port ranges with them. The module header is parsed in Python
(ANSI or Verilog-1995 port declarations, ranges with integer arithmetic on parameters) and
checked against the layouts before anything is built: a mismatch raises
:class:`~gravfm.errors.ConfigError` listing the missing, extra and wrongly sized ports.

Amaranth's simulator cannot run an ``Instance``; the compiled simulator can, given the module's
source: :attr:`gravfm.hw.FpgaTop.verilog_sources` collects it and
:func:`gravfm.sim.verilator.simulator_sources` compiles it beside the exported system.
"""

from .kernel import (
    CLOCK_PORT, RESET_PORT, SYSTEM_PARAMETERS, VerilogKernel, VerilogKernelFactory, check_ports, expected_ports,
    instance_parameters, system_parameters, verilog_kernel, verilog_sources,
)
from .parse import VerilogModule, parse_verilog_module

__all__ = ["VerilogModule", "VerilogKernel", "VerilogKernelFactory", "verilog_kernel",
           "parse_verilog_module", "expected_ports", "check_ports", "verilog_sources",
           "instance_parameters", "system_parameters", "SYSTEM_PARAMETERS", "CLOCK_PORT", "RESET_PORT"]
