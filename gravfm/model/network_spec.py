"""The network of a platform file: its links as the hardware sees them, the bandwidth per number of
peers, and the node hierarchy of a multi-node system (``[network]``, ``[network.link]``,
``[network.hierarchy]``); :class:`~gravfm.model.platform.Platform` holds them."""

from dataclasses import dataclass

from ..errors import ConfigError
from ..validate import check_fields, check_number
from .schema import FromDict, in_si
from .units import gib_per_s_to_bits_per_s, mhz_to_hz

__all__ = ["LinkSpec", "HierarchySpec", "NetworkSpec"]


@dataclass(frozen=True)
class LinkSpec(FromDict):
    """One inter-FPGA link (stream) as the hardware sees it.

    Parameters
    ----------
    word_bits : int
        Width of one link word (bits).
    clock_mhz : float
        Clock of the link's stream interface (MHz).
    latency_cycles : int
        One-way latency of the link, in f_clk cycles.
    """

    word_bits: int
    clock_mhz: float
    latency_cycles: int

    def __post_init__(self):
        check_fields(self, "word_bits", "latency_cycles")
        check_fields(self, "clock_mhz", check=check_number)

    @property
    def stream_bits_per_s(self):
        """Most one stream can carry: one word per link clock cycle."""
        return self.word_bits * mhz_to_hz(self.clock_mhz)


@dataclass(frozen=True)
class HierarchySpec(FromDict):
    """Nodes of several FPGAs joined by a slower network (paper §5, "Other network topologies").

    Parameters
    ----------
    fpgas_per_node : int
        k, FPGAs in one node; they talk over the platform's FPGA-to-FPGA network.
    node_interface_gib_s : float
        Bandwidth with which one node sends to the other nodes (GiB/s).
    node_network_gib_s : float
        Total bandwidth of the network between nodes (GiB/s).
    node_latency_cycles : int
        One-way latency between nodes, in f_clk cycles.
    """

    fpgas_per_node: int
    node_interface_gib_s: float
    node_network_gib_s: float
    node_latency_cycles: int

    def __post_init__(self):
        check_fields(self, "fpgas_per_node", "node_latency_cycles")
        check_fields(self, "node_interface_gib_s", "node_network_gib_s", check=check_number)


@dataclass(frozen=True)
class NetworkSpec(FromDict):
    """The network between FPGAs.

    Parameters
    ----------
    max_fpgas : int
        FPGAs the platform has (the model chooses n_FPGA in 1..max_fpgas).
    send_gib_s_by_peers, receive_gib_s_by_peers : list of float
        BW_if: the bandwidth one FPGA sends (receives) in total when talking to 1, 2, 3, ...
        peers at once (GiB/s). Beyond the last entry the last value is used (a saturated
        interface), and the prediction says it extrapolated.
    total_bandwidth_gib_s : float
        BW_net, total bandwidth of the network (GiB/s).
    total_bandwidth_is_lower_bound : bool
        True when BW_net was only bounded from below (the paper's ``> 23.4 GiB/s``).
    link : LinkSpec
        The FPGA-to-FPGA link.
    hierarchy : HierarchySpec, optional
        Present when FPGAs are grouped in nodes with a slower network between nodes.
    """

    max_fpgas: int
    send_gib_s_by_peers: tuple[float, ...]
    receive_gib_s_by_peers: tuple[float, ...]
    total_bandwidth_gib_s: float
    link: LinkSpec
    total_bandwidth_is_lower_bound: bool = False
    hierarchy: HierarchySpec | None = None

    def __post_init__(self):
        check_fields(self, "max_fpgas")
        check_fields(self, "total_bandwidth_gib_s", check=check_number)
        for name in ("send_gib_s_by_peers", "receive_gib_s_by_peers"):
            values = getattr(self, name)
            if not values or not all(value > 0 for value in values):
                raise ConfigError(f"NetworkSpec.{name} must be a non-empty list of positive numbers, "
                                  f"not {list(values)!r}")

    def interface_gib_s(self, peers):
        """BW_if when sending to ``peers`` others, and whether the table had to be extrapolated.

        Returns
        -------
        (float, bool)
            min(send, receive) bandwidth in GiB/s; True if ``peers`` lies beyond the table.
        """
        if peers < 1:
            raise ValueError(f"peers must be at least 1, not {peers!r}")

        def lookup(table):
            return table[min(peers, len(table)) - 1]

        extrapolated = peers > min(len(self.send_gib_s_by_peers), len(self.receive_gib_s_by_peers))
        return min(lookup(self.send_gib_s_by_peers), lookup(self.receive_gib_s_by_peers)), extrapolated

    def interface_bits_per_s(self, peers):
        """BW_if in bits per second for ``peers`` peers (see :meth:`interface_gib_s`)."""
        gib_s, _ = self.interface_gib_s(peers)
        return gib_per_s_to_bits_per_s(gib_s)

    total_bits_per_s = in_si("total_bandwidth_gib_s", gib_per_s_to_bits_per_s, "BW_net in bits per second.")
