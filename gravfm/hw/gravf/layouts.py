"""Payload layouts of the GraVF baseline: the GraVF-M ones plus a routed network message.

Two differences from :class:`gravfm.hw.layouts.KernelLayouts`: an edge word's ``dst`` is a full
hardware vertex id (a PE stores its own vertices' complete out-edge lists, whose destinations
may live on any PE), and the network carries *messages* (``net_message``), not updates.
"""

from amaranth.hdl import unsigned
from amaranth.lib import data

from ..layouts import KernelLayouts

__all__ = ["GravfLayouts", "gravf_count_bits"]


def gravf_count_bits(config):
    """Width of a per-round message count from one source PE to one destination.

    One PE scatters at most ``edges_per_pe`` messages per round (each stored edge once); with
    several FPGAs, a link's barrier counts the messages of all ``pes_per_fpga`` PEs of an FPGA
    (and a link must never wrap the count: its receiver waits until the counted messages are in).
    """
    if config.fpgas > 1:
        return max(config.count_bits, (config.pes_per_fpga * config.pe.edges_per_pe).bit_length())
    return max(config.count_bits, config.pe.edge_len_bits)


class GravfLayouts(KernelLayouts):
    """:class:`~gravfm.hw.layouts.KernelLayouts` for the GraVF architecture (:data:`gravfm.architectures.GRAVF`).

    Attributes
    ----------
    edge_word : StructLayout
        ``{dst: vertexid_bits, edge}`` (destination = hardware id).
    net_message : StructLayout
        A message on the network: the scatter kernel's output fields plus, on a barrier, ``count``
        (messages this source sent to this destination in the round) and ``sent_any`` (the
        source's apply emitted an update in the round).
    count_bits : int
        Width of ``count``.
    """

    def __init__(self, algorithm, config):
        super().__init__(algorithm, config)
        self.count_bits = gravf_count_bits(config)
        self.edge_word = data.StructLayout({"dst": unsigned(config.vertexid_bits), "edge": self.edge})
        fields = dict(self.scatter_out.members)
        fields.update({"count": unsigned(self.count_bits), "sent_any": unsigned(1)})
        self.net_message = data.StructLayout(fields)
