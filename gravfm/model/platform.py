"""Platforms: the hardware a prediction is made for, described by a TOML data file.

A platform file holds the measured or estimated figures of the paper's model and evaluation — clock, PEs per FPGA,
memory size and bandwidth, network bandwidth per number of peers, latencies — and the PE cycles
per edge (CPE) measured for each algorithm. Built-in files live in ``gravfm/model/platforms``;
users pass a path to their own file without touching code (``--platform NAME|PATH``).
Keys carry their unit in their name (``_mhz``, ``_mib``, ``_gib_s``, ``_bits``, ``_cycles``);
the properties of the dataclasses return SI units (Hz, bits, bits per second).
"""

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ConfigError, SpecError
from ..validate import check_fields, check_number
from .clock import ClockSpec
from .memory_channels import ChannelSpec, with_channel_figures
from .network_spec import HierarchySpec, LinkSpec, NetworkSpec
from .schema import FromDict, in_si
from .units import gib_per_s_to_bits_per_s, mhz_to_hz, mib_to_bits

__all__ = [
    "FpgaSpec",
    "MemorySpec",
    "LinkSpec",
    "HierarchySpec",
    "NetworkSpec",
    "LatencySpec",
    "Platform",
    "PLATFORM_DIR",
    "builtin_platforms",
    "load_platform",
]

PLATFORM_DIR = Path(__file__).resolve().parent / "platforms"


@dataclass(frozen=True)
class FpgaSpec(FromDict):
    """One FPGA of the platform.

    Parameters
    ----------
    part : str
        Device name (for the reader; not used by the model).
    f_clk_mhz : float
        Clock of the PEs, f_clk.
    max_pes : int
        Most PEs that fit in one FPGA (gives L_PE max).
    block_ram_kib : float, optional
        On-chip block RAM of one FPGA (KiB): the vertex state must fit in it.
    message_network_efficiency : float, optional
        The on-chip message network (GraVF's, the hybrid's): the share of one message per PE port
        per cycle it sustains (0 < e <= 1). Without it the network is ideal, as in the paper.
    """

    part: str
    f_clk_mhz: float
    max_pes: int
    block_ram_kib: float | None = None
    message_network_efficiency: float | None = None

    def __post_init__(self):
        check_fields(self, "f_clk_mhz", check=check_number)
        check_fields(self, "max_pes")
        share = self.message_network_efficiency
        if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1):
            raise ConfigError(f"FpgaSpec.message_network_efficiency must be a number in (0, 1], not {share!r}")

    f_clk_hz = in_si("f_clk_mhz", mhz_to_hz, "f_clk in Hz.")


@dataclass(frozen=True)
class MemorySpec(FromDict):
    """Graph memory of one FPGA.

    Parameters
    ----------
    edge_storage : {"onchip", "offchip"}
        Where the edge lists live. With on-chip storage the memory limit L_mem does not apply
        (block RAM serves one edge per PE per cycle, which L_PE already counts).
    capacity_mib : float
        M, memory per FPGA available for the graph (MiB).
    bandwidth_gib_s : float
        BW_mem used by the model (GiB/s): the bandwidth observed for the edge-list access pattern.
    peak_bandwidth_gib_s : float
        Peak bandwidth (GiB/s), for information.
    word_bits : int
        m_memword, bits read by one memory access (the access granularity).
    requests_in_flight : int
        Outstanding memory requests per PE (the hardware's; with the round trip, the superstep
        model's limit of requests in flight, :func:`gravfm.model.limits.in_flight_limit`).
    latency_cycles : int
        Simulated memory: cycles (at f_clk) from a request to its data, without queueing.
    latency_jitter_cycles : int
        Simulated memory: up to this many cycles more per access, pseudo-random.
    banks : int
        Simulated memory: banks (the HMC's vaults), each serving its own queue, one word per cycle.
    bank_depth : int
        Simulated memory: requests each bank's queue holds.
    channels : ChannelSpec, optional
        Memory of independent pseudo-channels (HBM), each PE's edges in its own channel: the
        bandwidths, banks, bank depth and latency above then follow from it
        (:mod:`gravfm.model.memory_channels`).
    """

    edge_storage: Literal["onchip", "offchip"]
    capacity_mib: float
    bandwidth_gib_s: float
    peak_bandwidth_gib_s: float
    word_bits: int
    requests_in_flight: int = 1
    latency_cycles: int = 100
    latency_jitter_cycles: int = 0
    banks: int = 1
    bank_depth: int = 8
    channels: ChannelSpec | None = None

    #: The simulated memory's figures: a platform file states them, since a default would be a
    #: silent guess at a latency (the keyword defaults serve code that builds a spec itself).
    STATED_KEYS = ("requests_in_flight", "latency_cycles", "latency_jitter_cycles", "banks", "bank_depth")

    @classmethod
    def from_dict(cls, data, *, where=None):
        data = with_channel_figures(data, where or cls.__name__)
        if isinstance(data, dict):
            missing = [key for key in cls.STATED_KEYS if key not in data]
            if missing:
                raise ConfigError(f"{where or cls.__name__}: missing key {missing[0]!r} (the simulated off-chip "
                                  f"memory's {', '.join(cls.STATED_KEYS)} are stated in the file, never assumed)")
        return super().from_dict(data, where=where)

    def __post_init__(self):
        check_fields(self, "capacity_mib", "bandwidth_gib_s", "peak_bandwidth_gib_s", check=check_number)
        check_fields(self, "word_bits", "requests_in_flight", "latency_cycles", "banks", "bank_depth")
        check_fields(self, "latency_jitter_cycles", low=0)
        if self.bandwidth_gib_s > self.peak_bandwidth_gib_s:
            raise ConfigError(f"MemorySpec.bandwidth_gib_s ({self.bandwidth_gib_s}) exceeds "
                              f"peak_bandwidth_gib_s ({self.peak_bandwidth_gib_s})")

    @property
    def round_trip_cycles(self):
        """Mean cycles from a request to its data without queueing: the latency and half the
        jitter (uniform in 0 .. jitter)."""
        return self.latency_cycles + self.latency_jitter_cycles / 2

    capacity_bits = in_si("capacity_mib", mib_to_bits, "M in bits.")
    bandwidth_bits_per_s = in_si("bandwidth_gib_s", gib_per_s_to_bits_per_s, "BW_mem in bits per second.")


@dataclass(frozen=True)
class LatencySpec(FromDict):
    """Fixed latencies that make up the synchronization time of one superstep.

    Parameters
    ----------
    pipeline_depth_cycles : int
        Cycles from an update leaving apply to its last message being gathered, excluding the
        algorithm's own kernel latency and the inter-FPGA link.
    barrier_local_cycles : int
        Cycles for a barrier to cross the on-chip network and be counted by every PE.
    """

    pipeline_depth_cycles: int
    barrier_local_cycles: int

    def __post_init__(self):
        check_fields(self, "pipeline_depth_cycles", "barrier_local_cycles", low=0)


@dataclass(frozen=True)
class Platform(FromDict):
    """A platform of one or more FPGAs, as the performance model sees it.

    Parameters
    ----------
    name : str
        Short name (the file's stem for built-in platforms).
    description : str
        One line for humans.
    sources : str
        Where the figures come from.
    fpga, memory, network, latency
        See :class:`FpgaSpec`, :class:`MemorySpec`, :class:`NetworkSpec`, :class:`LatencySpec`.
    cpe : dict of str to float
        PE cycles per edge per algorithm name; must include ``default`` (used for algorithms
        not listed, and reported as such).
    estimated : list of str, optional
        Keys (``table.key``) whose values are estimates rather than measurements or datasheet
        figures; printed beside every prediction for this platform.
    clock : ClockSpec, optional
        Whether ``fpga.f_clk_mhz`` was met by place-and-route (and by which design) or is assumed
        (the default); see :mod:`gravfm.model.clock`.
    """

    name: str
    description: str
    sources: str
    fpga: FpgaSpec
    memory: MemorySpec
    network: NetworkSpec
    latency: LatencySpec
    cpe: dict[str, float]
    estimated: tuple[str, ...] = ()
    clock: ClockSpec = ClockSpec()
    #: The TOML file the platform was read from ("" when built in code), for error messages;
    #: not a field (no key of the file), set by :func:`load_platform`.
    origin = ""

    def __post_init__(self):
        if "default" not in self.cpe:
            raise ConfigError(f"platform {self.name!r}: [cpe] must have a 'default' entry")
        for algorithm, value in self.cpe.items():
            if not value >= 1.0 or not math.isfinite(value):
                raise ConfigError(f"platform {self.name!r}: cpe.{algorithm} must be a number >= 1 "
                                  f"(a PE handles at most one edge per cycle), not {value!r}")
        if self.clock.met is not None and self.fpga.f_clk_mhz > self.clock.met.fmax_mhz:
            raise ConfigError(f"platform {self.name!r}: fpga.f_clk_mhz {self.fpga.f_clk_mhz:g} is above the Fmax of "
                              f"the row it is met by (clock.met.fmax_mhz {self.clock.met.fmax_mhz:g})")

    def check_system(self, fpgas, pes):
        """Raise ConfigError unless the platform holds ``fpgas`` FPGAs of ``pes`` PEs each.

        The message names the platform, the limiting key and the file it was read from.
        """
        where = f" in {self.origin}" if self.origin else ""
        if fpgas > self.network.max_fpgas:
            raise ConfigError(f"platform {self.name!r} has {self.network.max_fpgas} FPGAs, {fpgas} asked "
                              f"(network.max_fpgas{where})")
        if pes > self.fpga.max_pes:
            raise ConfigError(f"platform {self.name!r} holds at most {self.fpga.max_pes} PEs per FPGA, "
                              f"{pes} asked (fpga.max_pes{where})")

    def cpe_for(self, algorithm):
        """CPE for ``algorithm`` and whether it was measured for it (False: the default was used)."""
        if algorithm in self.cpe:
            return self.cpe[algorithm], True
        return self.cpe["default"], False


def builtin_platforms():
    """Names of the platform files shipped with gravfm, sorted."""
    return sorted(path.stem for path in PLATFORM_DIR.glob("*.toml"))


def load_platform(name_or_path):
    """Load a platform by built-in name or from a TOML file.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A built-in name (see :func:`builtin_platforms`) or the path of a TOML file.

    Raises
    ------
    SpecError
        Neither a built-in name nor an existing file.
    ConfigError
        The file is not valid TOML or does not match the schema (the message names the key).
    """
    if isinstance(name_or_path, Platform):
        return name_or_path
    text = str(name_or_path)
    path = Path(text)
    if not path.is_file():
        builtin = PLATFORM_DIR / f"{text}.toml"
        if path.suffix or not builtin.is_file():
            raise SpecError(f"unknown platform {text!r}: not a file and not one of "
                            f"{', '.join(builtin_platforms())}")
        path = builtin
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    platform = Platform.from_dict(data, where=str(path))
    object.__setattr__(platform, "origin", str(path))  # frozen; not a key of the file
    return platform
