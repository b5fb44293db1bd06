"""The harness's SYSTEM file: a system of several FPGAs as one FPGA model instantiated per FPGA.

Every FPGA of a system carries the same top (:class:`gravfm.hw.FpgaTop`), so the compiled
simulator is built once for that top and the harness (``harness.cpp``) runs one instance per
FPGA, moving items between their link ports through C++ link models (``link_model.h``) with the
parameters and seeds :class:`~gravfm.hw.multi.MultiFpgaSystem` gives its Amaranth link models.
Nothing here depends on the graph: the build key is the FPGA design's alone.

Lines: ``fpgas N``, ``pes P`` (PEs per FPGA), then one ``link`` line per link with the fields of
:class:`~gravfm.sim.link_params.LinkEnds` and :class:`~gravfm.sim.link_params.LinkParams` by
name (:func:`~gravfm.sim.named_fields.named_line`; the harness reads them into the structs
generated from those dataclasses, :mod:`gravfm.sim.harness_inputs`).
"""

from amaranth.hdl import Shape

from ..hw.link.frame import barrier_bit
from ..hw.protocol import peers_of
from .link_params import LinkEnds, link_params
from .named_fields import named_line

__all__ = ["system_file"]


def system_file(system):
    """Text of the SYSTEM file of ``system`` (a :class:`~gravfm.hw.multi.MultiFpgaSystem`)."""
    config, top, link = system.config, system.tops[0], system.link_config
    n = config.fpgas
    word = top.link_out[0].payload.shape()   # a link word {item, parity}, or its frame
    barrier = barrier_bit(word)
    lines = [f"fpgas {n}", f"pes {config.pes_per_fpga}"]
    for a in range(n):
        for k, b in enumerate(peers_of(a, n)):
            params = link_params(link, item_bits=system.item_bits, seed=link.link_seed(a, b, n),
                                 payload_bits=Shape.cast(word).width, dead_after=link.dead_after(a, b))
            ends = LinkEnds(source=a, target=b, port_out=k, port_in=peers_of(b, n).index(a),
                            item_bits=system.item_bits, barrier_bit=barrier)
            lines.append(named_line("link", ends, params))
    return "\n".join(lines) + "\n"
