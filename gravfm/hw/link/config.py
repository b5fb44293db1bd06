"""Parameters of the simulated inter-FPGA link, and how to derive them from a platform file."""

from dataclasses import dataclass

from ...errors import ConfigError

__all__ = ["LinkConfig", "FRACTION_BITS", "mixed_seed", "credit_bits"]

#: Fixed-point fraction bits of the bandwidth credit counter (bandwidth resolution 1/256 bit/cycle).
FRACTION_BITS = 8


def mixed_seed(seed):
    """Initial state of a link's 16-bit LFSR for ``seed`` (never 0)."""
    return (seed * 0x9E37 + 1) & 0xFFFF or 1


def credit_bits(rate_fixed, cost):
    """Width of a link's signed bandwidth-credit register: room for a refill and a cost."""
    return max(rate_fixed, cost).bit_length() + 2


@dataclass(frozen=True)
class LinkConfig:
    """One direction of one FPGA-to-FPGA link, as simulated between the FPGA tops.

    Parameters
    ----------
    word_bits : int
        Width of the physical stream (bits); the ``words`` figure is the carried bits packed
        into such words.
    bits_per_cycle : float or None
        Bandwidth in bits per system-clock cycle (fractional allowed); None = one item per cycle.
    latency_cycles : int
        Cycles an item spends in flight (at least the FIFO's own two cycles).
    fifo_depth : int
        Items in flight at most (the link's buffering; backpressure beyond).
    reorder_window : int
        1 keeps order; W > 1 lets an item overtake up to W-1 others (blocks of up to W items
        leave in an order drawn from the seed).
    stall_probability : float
        Chance in [0, 1) that the link's output is stalled in a cycle (drawn from the seed).
    seed : int
        Seed of the link's pseudo-random generator (each link adds its own index).
    """

    word_bits: int = 128
    bits_per_cycle: float | None = None
    latency_cycles: int = 2
    fifo_depth: int = 16
    reorder_window: int = 1
    stall_probability: float = 0.0
    seed: int = 1

    def __post_init__(self):
        for name in ("word_bits", "fifo_depth", "reorder_window"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"LinkConfig.{name} must be a positive integer, not {value!r}")
        if not isinstance(self.latency_cycles, int) or not 0 <= self.latency_cycles < 1 << 14:
            raise ConfigError(f"LinkConfig.latency_cycles must be an integer in 0..16383, "
                              f"not {self.latency_cycles!r}")
        if self.bits_per_cycle is not None and not self.bits_per_cycle >= 1 / (1 << FRACTION_BITS):
            raise ConfigError(f"LinkConfig.bits_per_cycle must be positive (or None), "
                              f"not {self.bits_per_cycle!r}")
        if not 0.0 <= self.stall_probability < 1.0:
            raise ConfigError(f"LinkConfig.stall_probability must be in [0, 1), "
                              f"not {self.stall_probability!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"LinkConfig.seed must be a non-negative integer, not {self.seed!r}")

    @property
    def rate_fixed(self):
        """Bandwidth in 1/2**FRACTION_BITS bits per cycle (None when unlimited)."""
        if self.bits_per_cycle is None:
            return None
        return max(1, round(self.bits_per_cycle * (1 << FRACTION_BITS)))

    def link_seed(self, sender, receiver, fpgas):
        """Seed of the link from FPGA ``sender`` to ``receiver`` of ``fpgas`` (before mixing)."""
        return self.seed * 64 + sender * fpgas + receiver

    @property
    def stall_threshold(self):
        """Stall when an 8-bit random draw is below this."""
        return round(self.stall_probability * 256)

    @classmethod
    def from_platform(cls, platform, fpgas, **overrides):
        """The link of ``platform`` when ``fpgas`` FPGAs all talk to each other.

        One FPGA sends ``send_gib_s_by_peers[fpgas-2]`` in total, shared by its ``fpgas-1``
        outgoing links; each link gets an equal share, converted to bits per ``f_clk`` cycle.

        Raises
        ------
        gravfm.errors.ConfigError
            If the platform has fewer FPGAs than asked.
        """
        from ...model import load_platform
        from ...model.units import mhz_to_hz

        if not hasattr(platform, "network"):
            platform = load_platform(platform)
        network = platform.network
        if not isinstance(fpgas, int) or fpgas < 1:
            raise ConfigError(f"fpgas must be a positive integer, not {fpgas!r}")
        if fpgas > network.max_fpgas:
            raise ConfigError(f"platform {platform.name!r} has {network.max_fpgas} FPGAs, "
                              f"{fpgas} asked")
        # Enough buffering to keep one item per cycle in flight over the whole latency.
        options = {"word_bits": network.link.word_bits, "latency_cycles": network.link.latency_cycles,
                   "fifo_depth": network.link.latency_cycles + 16}
        if fpgas > 1:
            peers = fpgas - 1
            per_fpga = network.interface_bits_per_s(peers)
            options["bits_per_cycle"] = per_fpga / peers / mhz_to_hz(platform.fpga.f_clk_mhz)
        options.update(overrides)
        return cls(**options)
