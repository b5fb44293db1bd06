"""The architectures' gateware: what differs between GraVF-M, the GraVF baseline and the hybrid, one object each.

An :class:`Architecture` gives the payload layouts, the on-chip network, the PE's dataflow core
and what an item on a link costs. Everything else (the FPGA top, the PE shell, the link ends,
the host interface) is the same for all three, so they compare one micro-architecture for one.
``SystemConfig.arch`` names one; each is built on its :class:`~gravfm.architectures.ArchitectureInfo`
(name, traits, formulas: no Amaranth, for the model and the CLI), and :func:`architecture` finds
it by that name.
"""

from ..architectures import GRAVF, GRAVFM, HYBRID, ArchitectureInfo, built_architecture_info
from .gravf import GravfLayouts, GravfNetwork
from .hybrid import HybridLayouts, HybridNetwork, HybridScatter
from .layouts import KernelLayouts
from .network import Network
from .pe.cores import ReceiverScatter, SenderScatter

__all__ = ["Architecture", "GravfmArchitecture", "GravfArchitecture", "HybridArchitecture", "architecture"]


class Architecture:
    """Interface of an architecture's gateware (see the two below); ``info`` is what it is."""

    info: ArchitectureInfo

    @property
    def name(self):
        return self.info.name

    @property
    def filters_links(self):
        """The neighbor filter drops an update for a peer FPGA that hosts no neighbour of its sender."""
        return self.info.filters_links

    def layouts(self, algorithm, config):
        """Payload layouts of ``algorithm`` under ``config``."""
        raise NotImplementedError

    def network_item(self, layouts):
        """Layout of what the on-chip network and the links carry."""
        raise NotImplementedError

    def item_bits(self, config, layouts):
        """Bits one item costs on a link (the model's m_update or m_message); with several link
        lanes, one per lane (a link word holds a slot per lane, full or not)."""
        return config.network.link_lanes * self.info.item_bits(config.vertexid_bits, update_bits=layouts.update.size,
                                                                message_bits=layouts.message.size)

    def network(self, *, config, layouts, fpga_index):
        """The on-chip network of an FPGA (with one remote port per peer FPGA); ``fpga_index``
        is the FPGA's index (a host-loaded register)."""
        raise NotImplementedError

    def pe_core(self, *, config, layouts, pe_index, kernel):
        """The dataflow core of PE ``pe_index`` around its scatter ``kernel``."""
        raise NotImplementedError


class GravfmArchitecture(Architecture):
    """GraVF-M: PEs broadcast updates; each PE scatters the updates it receives (receiver side)."""

    info = GRAVFM

    def layouts(self, algorithm, config):
        return KernelLayouts(algorithm, config)

    def network_item(self, layouts):
        return layouts.net_update

    def network(self, *, config, layouts, fpga_index):
        return Network(layout=layouts.net_update, pes=config.pes_per_fpga, remotes=config.fpgas - 1,
                       fifo_depth=config.network.fifo_depth, link_fifo_depth=config.network.link_fifo_depth,
                       count_bits=config.count_bits, lanes=config.pe.update_lanes)

    def pe_core(self, *, config, layouts, pe_index, kernel):
        return ReceiverScatter(layouts=layouts, config=config, pe_index=pe_index, kernel=kernel)


class GravfArchitecture(Architecture):
    """The GraVF baseline: each PE scatters its own updates; messages are routed to their PE."""

    info = GRAVF

    def layouts(self, algorithm, config):
        return GravfLayouts(algorithm, config)

    def network_item(self, layouts):
        return layouts.net_message

    def network(self, *, config, layouts, fpga_index):
        return GravfNetwork(layout=layouts.net_message, pes=config.pes_per_fpga, local_bits=config.pe.local_bits,
                            fifo_depth=config.network.fifo_depth, link_fifo_depth=config.network.link_fifo_depth,
                            fpga_index=fpga_index, fpgas=config.fpgas)

    def pe_core(self, *, config, layouts, pe_index, kernel):
        return SenderScatter(layouts=layouts, config=config, pe_index=pe_index, kernel=kernel)


class HybridArchitecture(Architecture):
    """The hybrid: GraVF-M between FPGAs; inside, each update to one scatter unit (chosen by its
    sender) whose messages cross a multistage network to their PEs (:mod:`gravfm.hw.hybrid`)."""

    info = HYBRID

    def layouts(self, algorithm, config):
        return HybridLayouts(algorithm, config)

    def network_item(self, layouts):
        return layouts.net_update

    def network(self, *, config, layouts, fpga_index):
        net = config.network
        return HybridNetwork(update_layout=layouts.net_update, message_layout=layouts.net_message,
                             pes=config.pes_per_fpga, local_bits=config.pe.local_bits, remotes=config.fpgas - 1,
                             link_lanes=net.link_lanes, fifo_depth=net.fifo_depth, link_fifo_depth=net.link_fifo_depth,
                             count_bits=config.count_bits, switch_depth=max(2, net.fifo_depth),
                             hub_path=net.hub_path)

    def pe_core(self, *, config, layouts, pe_index, kernel):
        return HybridScatter(layouts=layouts, config=config, pe_index=pe_index, kernel=kernel)


_GATEWARE = {arch.info: arch for arch in (GravfmArchitecture(), GravfArchitecture(), HybridArchitecture())}


def architecture(name):
    """The :class:`Architecture` called ``name`` (``SystemConfig.arch``); an unknown name is a
    :class:`~gravfm.errors.ConfigError` naming the known ones (or saying its hardware is not built yet)."""
    return _GATEWARE[built_architecture_info(name)]
