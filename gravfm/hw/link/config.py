"""Parameters of the simulated inter-FPGA link, and how to derive them from a platform file."""

from dataclasses import dataclass

from ...errors import ConfigError
from ...model import load_platform
from ...model.units import mhz_to_hz
from ..link_check import MODES, LinkCheck

__all__ = ["LinkConfig", "FRACTION_BITS", "RATE_BITS", "mixed_seed", "fault_seed", "credit_bits"]

#: Fixed-point fraction bits of the bandwidth credit counter (bandwidth resolution 1/256 bit/cycle).
FRACTION_BITS = 8
#: Fault rates are drawn as 16-bit numbers: resolution 1/65536 per item.
RATE_BITS = 16


def mixed_seed(seed):
    """Initial state of a link's 16-bit LFSR for ``seed`` (never 0)."""
    return (seed * 0x9E37 + 1) & 0xFFFF or 1


def fault_seed(seed):
    """Initial state of a link's 32-bit fault generator (xorshift32) for ``seed`` (never 0)."""
    return ((seed * 0x9E3779B1) ^ 0x5BD1E995) & 0xFFFFFFFF or 1


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
        Seed of the link's pseudo-random generators (each link adds its own index).
    drop_rate, duplicate_rate, flip_rate : float
        Faults per item leaving the link (drawn from the seed, resolution 1/65536): the item is
        lost, delivered twice, or delivered with one bit flipped (at a random position of the word).
    dead : tuple of (int, int, int)
        Dead links ``(sender, receiver, after)``: the link from FPGA ``sender`` to ``receiver``
        delivers nothing once ``after`` cycles have passed since it took its first item (0: it
        never delivers anything); it still takes items, as a cut cable would.
    check : {"off", "detect", "retransmit"}
        The link check in the FPGAs' link ends (:mod:`gravfm.hw.link_check`).
    replay_depth : int, optional
        Retransmit: frames the sender keeps for replay (default: a round trip's worth).
    """

    word_bits: int = 128
    bits_per_cycle: float | None = None
    latency_cycles: int = 2
    fifo_depth: int = 16
    reorder_window: int = 1
    stall_probability: float = 0.0
    seed: int = 1
    drop_rate: float = 0.0
    duplicate_rate: float = 0.0
    flip_rate: float = 0.0
    dead: tuple = ()
    check: str = "off"
    replay_depth: int | None = None

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
        self._check_faults()
        if self.check not in MODES:
            raise ConfigError(f"unknown link check {self.check!r} (known: {', '.join(MODES)})")
        if self.check != "off" and self.reorder_window > 1:
            raise ConfigError(f"the {self.check} link check needs an in-order link (reorder window 1, "
                              f"not {self.reorder_window}): its sequence numbers take a reordered "
                              f"frame for a lost one")
        self.link_check(item_bits=1)   # the replay depth, checked now

    def _check_faults(self):
        rates = {"drop_rate": self.drop_rate, "duplicate_rate": self.duplicate_rate, "flip_rate": self.flip_rate}
        for name, rate in rates.items():
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not (
                    rate == 0 or 1 / (1 << RATE_BITS) <= rate < 1):
                raise ConfigError(f"LinkConfig.{name} must be 0 or in [1/65536, 1), not {rate!r}")
        if sum(rates.values()) >= 1:
            raise ConfigError(f"the link's fault rates add up to {sum(rates.values()):g}: they must stay below 1")
        if not isinstance(self.dead, tuple):
            raise ConfigError(f"LinkConfig.dead must be a tuple of (sender, receiver, after), not {self.dead!r}")
        for entry in self.dead:
            if (not isinstance(entry, tuple) or len(entry) != 3 or
                    any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in entry)
                    or entry[0] == entry[1] or entry[2] >= 1 << 32):
                raise ConfigError(f"a dead link is (sender, receiver, after cycles) with two different FPGAs "
                                  f"and 0 <= after < 2**32, not {entry!r}")

    @property
    def fault_thresholds(self):
        """``(drop, duplicate, flip)``: a fault when the 16-bit draw falls in its share (cumulative order)."""
        return tuple(round(rate * (1 << RATE_BITS)) for rate in (self.drop_rate, self.duplicate_rate,
                                                                 self.flip_rate))

    @property
    def faulty(self):
        """Whether the link injects faults (a fault rate or a dead link)."""
        return any(self.fault_thresholds) or bool(self.dead)

    def dead_after(self, sender, receiver):
        """Cycles after its first item at which link ``sender -> receiver`` dies (None: never)."""
        times = [after for a, b, after in self.dead if (a, b) == (sender, receiver)]
        return min(times) if times else None

    def check_fpgas(self, fpgas):
        """Raise :class:`~gravfm.errors.ConfigError` for a dead link outside ``fpgas`` FPGAs."""
        for sender, receiver, _ in self.dead:
            if max(sender, receiver) >= fpgas:
                raise ConfigError(f"dead link {sender}-{receiver}: the system has FPGAs 0..{fpgas - 1}")

    def link_check(self, *, item_bits):
        """The :class:`~gravfm.hw.link_check.LinkCheck` of this link for items of ``item_bits``."""
        return LinkCheck.plan(self.check, latency_cycles=self.latency_cycles, bits_per_cycle=self.bits_per_cycle,
                              fifo_depth=self.fifo_depth, stall_probability=self.stall_probability,
                              item_bits=item_bits, replay_depth=self.replay_depth)

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
        outgoing links; each link gets an equal share, converted to bits per ``f_clk`` cycle. The
        FIFO holds the latency's items plus 16 (``overrides`` replace any field; the FIFO follows
        an overridden latency unless given too).

        Raises
        ------
        gravfm.errors.ConfigError
            If the platform has fewer FPGAs than asked.
        """
        if not hasattr(platform, "network"):
            platform = load_platform(platform)
        network = platform.network
        if not isinstance(fpgas, int) or fpgas < 1:
            raise ConfigError(f"fpgas must be a positive integer, not {fpgas!r}")
        if fpgas > network.max_fpgas:
            raise ConfigError(f"platform {platform.name!r} has {network.max_fpgas} FPGAs, "
                              f"{fpgas} asked")
        # Enough buffering to keep one item per cycle in flight over the whole latency.
        latency = overrides.get("latency_cycles", network.link.latency_cycles)
        options = {"word_bits": network.link.word_bits, "latency_cycles": latency, "fifo_depth": latency + 16}
        if fpgas > 1:
            peers = fpgas - 1
            per_fpga = network.interface_bits_per_s(peers)
            options["bits_per_cycle"] = per_fpga / peers / mhz_to_hz(platform.fpga.f_clk_mhz)
        options.update(overrides)
        return cls(**options)
