"""The architectures by name: GraVF-M and the GraVF baseline, as the model, the planner and the
command line see them.

The two differ in what crosses the network: GraVF-M broadcasts one update per active vertex to
every FPGA and scatters it where the edges are (receiver side); GraVF scatters its own updates and
sends one message per edge to the PE of its destination (sender side). Everything that depends
on that asks the :class:`ArchitectureInfo` (a property or a formula), never the name:
:func:`architecture_info` is the only place that reads a name, :data:`ARCHITECTURES` the one
list. The gateware each one builds (layouts, network, the PE's dataflow core) is
:mod:`gravfm.hw.arch`'s, built on these. No Amaranth here: ``gravfm.model`` and the CLI stay fast.
"""

from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["ArchitectureInfo", "ARCHITECTURES", "ARCH_HELP", "DEFAULT_ARCHITECTURE", "GRAVFM", "GRAVF", "architecture_info"]


@dataclass(frozen=True)
class ArchitectureInfo:
    """What an architecture is, without its gateware.

    Parameters
    ----------
    name : str
        Its name in configurations, options and results.
    title : str
        Its name in prose (``"GraVF-M"``).
    label : str
        Its name with what crosses the network, for reports.
    broadcasts : bool
        True: an item is an update, sent once per active vertex to every other FPGA and scattered
        by the receiving PEs (GraVF-M). False: an item is a message, one per edge, routed to the
        PE of its destination (GraVF).
    """

    name: str
    title: str
    label: str
    broadcasts: bool

    @property
    def filters_links(self):
        """The neighbor filter applies: it drops an update for a peer FPGA that hosts no
        neighbour of its sender (only broadcast updates can be dropped so)."""
        return self.broadcasts

    @property
    def max_update_lanes(self):
        """Update lanes a PE may have: 2 with broadcast updates (a PE sees every update of its
        FPGA), 1 otherwise (messages arrive one per cycle)."""
        return 2 if self.broadcasts else 1

    def item_bits(self, vertexid_bits, *, update_bits, message_bits):
        """Bits one item costs on a link: sender id + update (GraVF-M), or destination id +
        sender id + message (GraVF)."""
        return vertexid_bits + update_bits if self.broadcasts else 2 * vertexid_bits + message_bits

    def model_item_bits(self, *, m_update, m_message):
        """The model's item on a link: ``m_update`` (GraVF-M) or ``m_message`` (GraVF)."""
        return m_update if self.broadcasts else m_message


GRAVFM = ArchitectureInfo(name="gravfm", title="GraVF-M", label="GraVF-M (update broadcast)", broadcasts=True)
GRAVF = ArchitectureInfo(name="gravf", title="GraVF", label="GraVF (unicast messages)", broadcasts=False)

_BY_NAME = {info.name: info for info in (GRAVFM, GRAVF)}
#: The architectures' names, GraVF-M first.
ARCHITECTURES = tuple(_BY_NAME)
#: The architecture of a configuration that names none.
DEFAULT_ARCHITECTURE = GRAVFM.name
#: The help of a command-line option that names an architecture.
ARCH_HELP = "; ".join(f"{info.name}: {info.label}" for info in _BY_NAME.values()) + f" (default {DEFAULT_ARCHITECTURE})"


def architecture_info(name):
    """The :class:`ArchitectureInfo` called ``name``; :class:`~gravfm.errors.ConfigError` (a
    ``ValueError``) naming the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown architecture {name!r} (known: {', '.join(ARCHITECTURES)})") from None
