"""The architectures by name: GraVF-M, the GraVF baseline and the hybrid, as the model, the planner
and the command line see them.

They differ in what crosses the network and where an update is scattered. GraVF-M broadcasts one
update per active vertex to every FPGA and to every PE there, and each PE scatters it for the
edges whose destinations it hosts (receiver side). GraVF scatters its own updates and sends one
message per edge to the PE of its destination (sender side). The hybrid is GraVF-M between FPGAs
(update broadcast, neighbor filter, floating barrier, the same links), but inside an FPGA an
update goes to ONE scatter unit, chosen by its sender, which streams the sender's edges local to
the FPGA and sends each message through an on-chip multi-stage message network to the PE that
owns its destination. Everything that depends on that asks the :class:`ArchitectureInfo` (a
property or a formula), never the name: :func:`architecture_info` is the only place that reads a
name, :data:`ARCHITECTURES` the one list (:data:`BUILT_ARCHITECTURES`: those with gateware). The
gateware each built one has (layouts, network, the PE's dataflow core) is :mod:`gravfm.hw.arch`'s,
built on these. No Amaranth here: ``gravfm.model`` and the CLI stay fast.
"""

from dataclasses import dataclass
from typing import Literal

from .errors import ConfigError

__all__ = ["ArchitectureInfo", "ARCHITECTURES", "ARCH_HELP", "ARCH_NAMES_HELP", "BUILT_ARCHITECTURES",
           "DEFAULT_ARCHITECTURE", "GRAVFM", "GRAVF", "HYBRID", "LARGE_SYSTEM_PES", "TWO_LINK_LANES_PES",
           "architecture_info", "built_architecture_info"]

#: From this many PEs in the system on, a PE that receives every update gets a second update lane.
LARGE_SYSTEM_PES = 8
#: From this many PEs per FPGA on, a hybrid link carries two update lanes to each peer.
TWO_LINK_LANES_PES = 32


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
        True: an item on a link is an update, sent once per active vertex to every other FPGA
        (GraVF-M, hybrid). False: an item is a message, one per edge, routed to the PE of its
        destination (GraVF).
    scatter_at : {"receivers", "one_receiver", "sender"}
        Who scatters an update: every PE of each FPGA it reaches, each for the edges to its own
        vertices (GraVF-M); one scatter unit per FPGA it reaches, chosen by the sender, for all
        the sender's edges into that FPGA (hybrid); the sender's own PE, for all its edges (GraVF).
    built : bool
        Whether its gateware exists (``gravfm run`` and synthesis refuse the others in one line;
        the model predicts every architecture).
    default_partition : str
        The partitioning method a run uses unless told (:data:`gravfm.partition.METHODS`).
    """

    name: str
    title: str
    label: str
    broadcasts: bool
    scatter_at: Literal["receivers", "one_receiver", "sender"]
    built: bool = True
    default_partition: str = "greedy"

    @property
    def filters_links(self):
        """The neighbor filter applies: it drops an update for a peer FPGA that hosts no
        neighbour of its sender (only broadcast updates can be dropped so)."""
        return self.broadcasts

    @property
    def max_update_lanes(self):
        """Update lanes a PE may have: 2 when every PE takes every update of its FPGA (GraVF-M),
        1 otherwise (a scatter unit takes its share of the updates, or its own)."""
        return 2 if self.scatter_at == "receivers" else 1

    def default_update_lanes(self, total_pes, *, offchip=False):
        """Update lanes a PE gets unless told: a second one from :data:`LARGE_SYSTEM_PES` PEs in
        the system on where the architecture allows it, and one with edges off chip (the
        off-chip PE reads one presence bit per cycle).

        A PE that sees every update of its FPGA holds edges for about |E| / (|V| n p) of them:
        once n p nears the average degree, one update per cycle, not one edge per cycle, limits
        it. (A structural rule, so that the build does not depend on the graph.)
        """
        if offchip:
            return 1
        return min(self.max_update_lanes, 2 if total_pes >= LARGE_SYSTEM_PES else 1)

    def intake_pes(self, pes):
        """PEs of an FPGA that take each update reaching it: all ``pes`` (GraVF-M), one scatter
        unit (hybrid), or None (GraVF: no update reaches another PE)."""
        return {"receivers": pes, "one_receiver": 1}.get(self.scatter_at)

    @property
    def max_link_lanes(self):
        """Update lanes a link to one peer may carry: 2 where one scatter unit per FPGA takes each
        update (hybrid: lane ``l`` carries the updates of the PEs ``l`` mod 2 and ends only at
        the scatter units that own them, so each endpoint still has one source per peer), else 1."""
        return 2 if self.scatter_at == "one_receiver" else 1

    def default_link_lanes(self, fpgas, pes_per_fpga):
        """Link lanes unless told: :attr:`max_link_lanes` from :data:`TWO_LINK_LANES_PES` PEs per
        FPGA on (several FPGAs), else 1.

        A link end takes one update per cycle and an update brings about ``degree / n`` edges to
        the FPGA, while its PEs can take ``p (n - 1) / n`` remote edges per cycle: past the
        average degree (16-32 in the paper's graphs) one lane per peer bounds the FPGA. (A
        structural rule, so that the build does not depend on the graph.)
        """
        return self.max_link_lanes if fpgas > 1 and pes_per_fpga >= TWO_LINK_LANES_PES else 1

    def edge_lists_per_vertex(self, fpgas, pes):
        """Lists a vertex's out-edges are split into: one per PE of the system (GraVF-M), one per
        FPGA (hybrid: its scatter unit there), or one (GraVF)."""
        return {"receivers": fpgas * pes, "one_receiver": fpgas, "sender": 1}[self.scatter_at]

    @property
    def power_of_two_pes(self):
        """PEs per FPGA must be a power of two: the hybrid's multistage message network routes by
        the destination's PE bits, and its scatter units are chosen by the sender's."""
        return self.scatter_at == "one_receiver"

    @property
    def has_hub_path(self):
        """Hub senders may have their updates taken by every scatter unit of their FPGA and their
        edges dealt over them (the hybrid's, ``--hub-degree``): only where ONE unit per FPGA
        scatters an update does a hub's whole list otherwise fall on one unit."""
        return self.scatter_at == "one_receiver"

    @property
    def message_network(self):
        """Every traversed edge is a message crossing an on-chip network to its destination's PE
        (GraVF's router, the hybrid's multi-stage network); GraVF-M scatters where the edges'
        destinations live, so its messages stay inside a PE."""
        return self.scatter_at != "receivers"

    def item_bits(self, vertexid_bits, *, update_bits, message_bits):
        """Bits one item costs on a link: sender id + update (broadcast), or destination id +
        sender id + message (GraVF)."""
        return vertexid_bits + update_bits if self.broadcasts else 2 * vertexid_bits + message_bits

    def model_item_bits(self, *, m_update, m_message):
        """The model's item on a link: ``m_update`` (broadcast) or ``m_message`` (GraVF)."""
        return m_update if self.broadcasts else m_message


GRAVFM = ArchitectureInfo(name="gravfm", title="GraVF-M", label="GraVF-M (update broadcast)", broadcasts=True,
                          scatter_at="receivers")
GRAVF = ArchitectureInfo(name="gravf", title="GraVF", label="GraVF (unicast messages)", broadcasts=False,
                         scatter_at="sender")
# A hybrid round lasts as long as its busiest scatter unit's active out-edges (a sender's edges
# into an FPGA are all one unit's), so its partition spreads the hubs first: on RMAT scale 18 and
# 64 PEs the per-round bound falls from 1.10 to 1.02 cycles per edge (WCC), 1.41 to 1.22 (BFS).
HYBRID = ArchitectureInfo(name="hybrid", title="hybrid",
                          label="hybrid (update broadcast between FPGAs, one scatter unit and a message "
                                "network inside)",
                          broadcasts=True, scatter_at="one_receiver", default_partition="sorted_greedy")

_BY_NAME = {info.name: info for info in (GRAVFM, GRAVF, HYBRID)}
#: The architectures' names, GraVF-M first.
ARCHITECTURES = tuple(_BY_NAME)
#: The architectures whose gateware exists (what ``gravfm run`` builds).
BUILT_ARCHITECTURES = tuple(info.name for info in _BY_NAME.values() if info.built)
#: The architecture of a configuration that names none.
DEFAULT_ARCHITECTURE = GRAVFM.name
#: What each architecture is, for the help of a command-line option that names one.
ARCH_NAMES_HELP = "; ".join(f"{info.name}: {info.label}" + ("" if info.built else ", model only: hardware not built")
                            for info in _BY_NAME.values())
#: The help of a command-line option that names an architecture, with its default.
ARCH_HELP = f"{ARCH_NAMES_HELP} (default {DEFAULT_ARCHITECTURE})"


def architecture_info(name):
    """The :class:`ArchitectureInfo` called ``name``; :class:`~gravfm.errors.ConfigError` (a
    ``ValueError``) naming the known ones otherwise."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown architecture {name!r} (known: {', '.join(ARCHITECTURES)})") from None


def built_architecture_info(name):
    """:func:`architecture_info` of an architecture whose hardware exists; one line saying it is
    not built yet (a :class:`~gravfm.errors.ConfigError`) for one the model only describes."""
    info = architecture_info(name)
    if not info.built:
        raise ConfigError(f"the {info.title} architecture's hardware is not built yet: gravfm model --arch "
                          f"{info.name} predicts it (built: {', '.join(BUILT_ARCHITECTURES)})")
    return info
