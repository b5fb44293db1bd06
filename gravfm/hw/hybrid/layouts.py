"""Payload layouts of the hybrid architecture: GraVF-M's updates, GraVF's edge words, a message.

Three differences from :class:`gravfm.hw.layouts.KernelLayouts`: an edge word's ``dst`` is a
full hardware vertex id (a scatter unit stores its senders' edges into every PE of its FPGA), and
beside the update network's ``net_update`` there is ``net_message``, what the on-chip message
network carries from the scatter units to the PEs.
"""

from amaranth.hdl import unsigned
from amaranth.lib import data

from ..layouts import KernelLayouts

__all__ = ["HybridLayouts"]


class HybridLayouts(KernelLayouts):
    """:class:`~gravfm.hw.layouts.KernelLayouts` for :data:`gravfm.architectures.HYBRID`.

    Attributes
    ----------
    edge_word : StructLayout
        ``{dst: vertexid_bits, edge}`` (destination = hardware id, on this FPGA).
    net_message : StructLayout
        A message on the message network: the scatter kernel's output fields plus ``sent_any``
        (on a barrier: the round had an update somewhere in the system). No ``count``: the
        :class:`~gravfm.hw.network.MultistageNetwork` combines barriers instead of counting.
    """

    def __init__(self, algorithm, config):
        super().__init__(algorithm, config)
        self.edge_word = data.StructLayout({"dst": unsigned(config.vertexid_bits), "edge": self.edge})
        fields = dict(self.scatter_out.members)
        fields["sent_any"] = unsigned(1)
        self.net_message = data.StructLayout(fields)
