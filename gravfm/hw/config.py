"""Build-time configuration of the generated hardware, one frozen dataclass per concern.

* :class:`PeConfig` — one PE: its capacities (vertices, edges, rounds logged) and queues, its
  update lanes and gather forwarding;
* :class:`NetworkConfig` — the on-chip network's FIFOs (per destination, per link);
* :class:`SystemConfig` — the algorithm, the architecture, FPGAs and PEs, and the two above.

The links between FPGAs are a :class:`gravfm.hw.link.LinkConfig`, given to
:func:`gravfm.hw.multi.build_system` beside the system configuration. The graph itself is *not*
part of the configuration: it is loaded through the host interface before ``start`` (see
:mod:`gravfm.sim.loader`), so one build serves every graph that fits. The sizing rules that
choose these numbers for a graph live in the plan stage of the run pipeline (:mod:`gravfm.flow`).

Derived widths (all in bits):

* ``pe_bits``       = max(1, ceil(log2(total PEs)))  — width of a global PE index;
* ``vertexid_bits`` = ``pe_bits + local_bits``        — hardware vertex id
  ``hw_id = (global_pe << local_bits) | local_index`` (docs/interfaces.md §4);
* ``edge_addr_bits`` = ceil(log2(edges_per_pe)), ``count_bits`` = ``local_bits + 1`` (one FPGA).
"""

from dataclasses import dataclass, field, fields

from ..architectures import ARCHITECTURES, DEFAULT_ARCHITECTURE, architecture_info, built_architecture_info
from ..errors import ConfigError
from ..model.offchip_layout import INDEX_ENTRY_BITS
from ..validate import check_fields, check_flag

__all__ = ["PeConfig", "NetworkConfig", "SystemConfig", "ARCHITECTURES", "EDGE_MEMORIES"]

UPDATE_LANES = (1, 2)
#: Where a PE keeps its edge index and edge lists (:class:`PeConfig`).
EDGE_MEMORIES = ("onchip", "offchip")
#: Off-chip: the longest read burst, 8 words of 128 bits (the HMC's largest request, 128 bytes).
MAX_BURST_WORDS = 8
#: Names of :class:`NetworkConfig`'s fields in :meth:`SystemConfig.of`.
_NETWORK_NAMES = {"network_fifo_depth": "fifo_depth", "link_fifo_depth": "link_fifo_depth",
                  "link_lanes": "link_lanes", "hub_path": "hub_path"}


def _bits_for(count):
    """Number of bits needed to address ``count`` items (at least 1)."""
    return max(1, (count - 1).bit_length())


@dataclass(frozen=True)
class PeConfig:
    """What the RTL of one PE depends on.

    Parameters
    ----------
    local_bits : int
        log2 of the vertex capacity of one PE (vertices per PE = ``2**local_bits``).
    edges_per_pe : int
        Capacity of one PE's edge array.
    message_fifo_depth : int
        Buffer between a PE's scatter and gather stages.
    hazard_slots : int
        Vertices that may be in flight in the gather pipeline (size of the hazard CAM); bounds
        the gather kernel latency that can be sustained at one message per cycle.
    round_bits : int
        Width of the round (superstep) number seen by the kernels.
    max_rounds : int
        Depth of the per-round log memory (rounds beyond it are not logged).
    update_lanes : int
        Updates a GraVF-M PE takes from the network per cycle (1 or 2). Each PE sees every
        update that reaches its FPGA, but holds edges for only about ``|E| / (|V| n p)`` of
        them: with more PEs in the system than the average degree, most updates carry no edge
        for a PE and one update per cycle, not one edge per cycle, limits it. Two lanes cost a
        second edge-index read port per PE and a wider endpoint arbiter.
    gather_forwarding : bool
        With a combinational gather kernel (``combinational = True``), a message to a vertex
        whose earlier message is still in the gather pipeline takes that message's result
        instead of waiting for its write-back (:mod:`gravfm.hw.pe.gather_forward`): one message
        per cycle even on a power-law graph's hub vertices. Off: every kernel waits in the
        hazard unit (the paper's behaviour).
    edge_memory : {"onchip", "offchip"}
        Where the edge index and the edge lists live: block RAM filled by host writes, or
        off-chip memory read through an AXI4 port (:mod:`gravfm.hw.pe.offchip_scatter`), which
        the host fills as a memory image. Off-chip, ``edges_per_pe`` bounds one edge list only.
    memory_word_bits : int
        Off-chip memory access word (the HMC's 128 bits): one AXI beat.
    requests_in_flight : int
        Off-chip: memory requests one PE may have outstanding (the paper's 64).
    memory_addr_bits : int
        Off-chip: width of a byte address (32: 4 GiB per FPGA).
    """

    local_bits: int = 5
    edges_per_pe: int = 256
    message_fifo_depth: int = 4
    hazard_slots: int = 4
    round_bits: int = 16
    max_rounds: int = 64
    update_lanes: int = 1
    gather_forwarding: bool = True
    edge_memory: str = "onchip"
    memory_word_bits: int = 128
    requests_in_flight: int = 64
    memory_addr_bits: int = 32

    def __post_init__(self):
        check_fields(self, "local_bits", "edges_per_pe", "message_fifo_depth", "hazard_slots", "round_bits",
                     "max_rounds", "memory_word_bits", "requests_in_flight", "memory_addr_bits")
        if self.edge_memory not in EDGE_MEMORIES:
            raise ConfigError(f"PeConfig.edge_memory must be one of {', '.join(EDGE_MEMORIES)}, "
                              f"not {self.edge_memory!r}")
        if self.offchip:
            word = self.memory_word_bits
            if word < INDEX_ENTRY_BITS or word & (word - 1):
                raise ConfigError(f"PeConfig.memory_word_bits = {word}: a power of two of at least "
                                  f"{INDEX_ENTRY_BITS} (one edge-index entry) is needed")
            if self.update_lanes != 1:
                raise ConfigError("PeConfig.update_lanes = 2 needs on-chip edges (edge_memory = 'onchip'): "
                                  "an off-chip PE reads one edge index per cycle")
            if not 16 <= self.memory_addr_bits <= 48:
                raise ConfigError(f"PeConfig.memory_addr_bits = {self.memory_addr_bits}: 16 to 48 bits")
        if self.update_lanes not in UPDATE_LANES:
            raise ConfigError(f"PeConfig.update_lanes must be one of {UPDATE_LANES}, not {self.update_lanes!r}")
        check_flag("PeConfig", "gather_forwarding", self.gather_forwarding)
        if self.local_bits > 24:
            raise ConfigError(f"PeConfig.local_bits = {self.local_bits} exceeds 24 (16M vertices per PE)")
        if self.round_bits > 32:
            raise ConfigError(f"PeConfig.round_bits = {self.round_bits} exceeds 32")
        if self.max_rounds > 2 ** self.round_bits:
            raise ConfigError(f"PeConfig.max_rounds = {self.max_rounds} exceeds 2**round_bits")

    @property
    def offchip(self):
        """The edges live in off-chip memory."""
        return self.edge_memory == "offchip"

    @property
    def memory_word_bytes(self):
        """Bytes of one off-chip memory word."""
        return self.memory_word_bits // 8

    @property
    def edge_word_slots(self):
        """Off-chip: words the edge reorder buffer holds, room for ``requests_in_flight``
        requests of two words each and at least one longest burst (a power of two)."""
        return max(MAX_BURST_WORDS, 1 << (2 * self.requests_in_flight - 1).bit_length())

    @property
    def memory_id_bits(self):
        """Width of an AXI id: a request's first slot in its reorder buffer, and which buffer."""
        return _bits_for(max(self.requests_in_flight, self.edge_word_slots)) + 1

    @property
    def vertices_per_pe(self):
        """Vertex capacity of one PE."""
        return 2 ** self.local_bits

    @property
    def edge_addr_bits(self):
        """Width of an edge-array address (and of an edge list's start)."""
        return _bits_for(self.edges_per_pe)

    @property
    def edge_len_bits(self):
        """Width of an edge list's length (0 .. edges_per_pe)."""
        return self.edges_per_pe.bit_length()

    @property
    def update_queue_depth(self):
        """Depth of a PE's update queue: one update per local vertex, the barrier, and room for
        the previous round's barrier.

        This is what makes the floating barrier deadlock-free: an apply pass can always finish
        even when nothing drains. When round r+1's apply begins, this PE's own endpoint has
        taken its round-r barrier, so the queue holds at most that barrier (still waiting for
        slower destinations) and nothing of round r+1 yet.
        """
        return self.vertices_per_pe + 2


@dataclass(frozen=True)
class NetworkConfig:
    """The on-chip network's FIFOs.

    Parameters
    ----------
    fifo_depth : int
        Depth of each per-source input FIFO of a destination endpoint.
    link_fifo_depth : int
        Depth of each local PE's FIFO towards each outgoing link (several FPGAs). A link takes
        one update per cycle from the whole FPGA, and a local update leaves its PE only when
        every local PE and every link FIFO has taken it: deep link FIFOs let the local PEs run
        ahead of the link instead of at its pace.
    link_lanes : int
        Update lanes of each link to a peer (hybrid, several FPGAs): each lane its own merger,
        link sender and receiver, both in one link word (:func:`gravfm.hw.link.link_word_layout`).
    hub_path : bool
        Hybrid: every scatter unit of an FPGA also takes the updates of its hub senders, whose
        edges into the FPGA are dealt over all units (:mod:`gravfm.hw.hybrid.network`): a hub's
        edges are then not one unit's work. Which senders are hubs is loaded with the graph
        (each PE's count, its local indices below it), so the build does not depend on it.
    """

    fifo_depth: int = 4
    link_fifo_depth: int = 4
    link_lanes: int = 1
    hub_path: bool = False

    def __post_init__(self):
        check_fields(self, "fifo_depth", "link_fifo_depth", "link_lanes")
        check_flag("NetworkConfig", "hub_path", self.hub_path)
        if self.link_lanes not in (1, 2):
            raise ConfigError(f"NetworkConfig.link_lanes must be 1 or 2, not {self.link_lanes!r}")


@dataclass(frozen=True)
class SystemConfig:
    """Configuration of one generated system; :meth:`of` builds one from the fields of all
    three by name.

    Parameters
    ----------
    algorithm : gravfm.algorithms.Algorithm
        The algorithm whose kernels the PEs run.
    arch : str
        One of :data:`gravfm.architectures.ARCHITECTURES`: GraVF-M (broadcast updates,
        receiver-side scatter) or the GraVF baseline (unicast messages, sender-side scatter).
    fpgas : int
        Number of FPGAs.
    pes_per_fpga : int
        Processing elements per FPGA.
    pe : PeConfig
        Each PE's capacities, queues, update lanes and gather forwarding.
    network : NetworkConfig
        The on-chip network's FIFOs.
    """

    algorithm: object
    arch: str = DEFAULT_ARCHITECTURE
    fpgas: int = 1
    pes_per_fpga: int = 1
    pe: PeConfig = field(default_factory=PeConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)

    def __post_init__(self):
        check_fields(self, "fpgas", "pes_per_fpga")
        if self.arch not in ARCHITECTURES:
            raise ConfigError(f"SystemConfig.arch must be one of {', '.join(ARCHITECTURES)}, not {self.arch!r}")
        built_architecture_info(self.arch)   # one the model only describes: one line, no build
        for name, kind in (("pe", PeConfig), ("network", NetworkConfig)):
            if not isinstance(getattr(self, name), kind):
                raise ConfigError(f"SystemConfig.{name} must be a {kind.__name__}, not {getattr(self, name)!r}")
        if self.pe.update_lanes > architecture_info(self.arch).max_update_lanes:
            raise ConfigError(f"PeConfig.update_lanes = {self.pe.update_lanes}: the {self.arch} architecture "
                              f"has at most {architecture_info(self.arch).max_update_lanes} (messages arrive one "
                              f"per cycle)")
        pes = self.pes_per_fpga
        self._check_link_lanes()
        if self.network.hub_path and not architecture_info(self.arch).has_hub_path:
            raise ConfigError(f"hub_path: the {self.arch} architecture has no hub path (the hybrid's: one scatter "
                              f"unit per update)")
        if architecture_info(self.arch).power_of_two_pes and pes & (pes - 1):
            raise ConfigError(f"pes_per_fpga = {pes}: the {self.arch} architecture needs a power of two "
                              f"(its message network routes by the PE bits)")
        for name in ("vertex", "update", "message", "edge", "name", "gather", "apply", "scatter"):
            if not hasattr(self.algorithm, name):
                raise ConfigError(f"SystemConfig.algorithm has no attribute {name!r}; "
                                  f"pass a gravfm.algorithms.Algorithm")

    def _check_link_lanes(self):
        lanes, info = self.network.link_lanes, architecture_info(self.arch)
        if lanes == 1:
            return
        if lanes > info.max_link_lanes:
            raise ConfigError(f"link_lanes = {lanes}: the {self.arch} architecture has one lane per link "
                              f"(its links carry every update to every PE, or messages)")
        if self.fpgas == 1 or self.pes_per_fpga % lanes:
            raise ConfigError(f"link_lanes = {lanes} needs several FPGAs and a multiple of {lanes} PEs per FPGA, "
                              f"not {self.fpgas} x {self.pes_per_fpga}")

    @classmethod
    def of(cls, algorithm, **values):
        """A configuration from fields by name: this class's, :class:`PeConfig`'s, and
        :class:`NetworkConfig`'s as ``network_fifo_depth`` and ``link_fifo_depth``; an unknown
        name raises ConfigError naming it."""
        own = {f.name for f in fields(cls)} - {"algorithm", "pe", "network"}
        pe_names = {f.name for f in fields(PeConfig)}
        known = own | pe_names | set(_NETWORK_NAMES)
        for key in values:
            if key not in known:
                raise ConfigError(f"unknown hardware configuration key {key!r} (known: {', '.join(sorted(known))})")
        return cls(algorithm=algorithm, **{k: v for k, v in values.items() if k in own},
                   pe=PeConfig(**{k: v for k, v in values.items() if k in pe_names}),
                   network=NetworkConfig(**{_NETWORK_NAMES[k]: v for k, v in values.items() if k in _NETWORK_NAMES}))

    @classmethod
    def from_dict(cls, values, *, algorithm):
        """Build from a mapping (e.g. a TOML table) of the names :meth:`of` takes."""
        return cls.of(algorithm, **values)

    @property
    def total_pes(self):
        """Number of PEs in the whole system."""
        return self.fpgas * self.pes_per_fpga

    @property
    def pe_bits(self):
        """Width of a global PE index."""
        return _bits_for(self.total_pes)

    @property
    def vertexid_bits(self):
        """Width of a hardware vertex id."""
        return self.pe_bits + self.pe.local_bits

    @property
    def count_bits(self):
        """Width of a per-round update count (0 .. vertices_per_pe; with several FPGAs, a remote
        FPGA's barrier counts all its PEs' updates, and the hub path's all the FPGA's hubs':
        0 .. pes_per_fpga * vertices_per_pe)."""
        if self.fpgas > 1 or self.network.hub_path:
            return self.pe.local_bits + self.pes_per_fpga.bit_length() + 1
        return self.pe.local_bits + 1
