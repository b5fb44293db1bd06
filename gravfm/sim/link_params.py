"""The integers of the C++ link model (``link_model.h``) for one link of a system, and its ends.

:func:`link_params` turns a :class:`~gravfm.hw.link.LinkConfig`, the bits an item costs and the
link's seed (:meth:`~gravfm.hw.link.LinkConfig.link_seed`)
into the :class:`LinkParams` with which ``gravfm::LinkModel`` behaves cycle for cycle like the
Amaranth :class:`~gravfm.hw.link.LinkModel` of the same arguments
(``tests/test_link_model_cpp.py`` proves it against the exported RTL).

This module imports no Amaranth. The two constants it shares with the gateware are read from
their one place when :func:`link_params` is called: whoever holds a ``LinkConfig`` has imported
that package already.
"""

from dataclasses import astuple, dataclass, fields

__all__ = ["LinkEnds", "LinkParams", "link_params"]


@dataclass(frozen=True)
class LinkEnds:
    """Where one link of a system connects.

    The harness's ``gravfm::LinkEnds`` is generated from this (:mod:`gravfm.sim.harness_inputs`).

    Parameters
    ----------
    source, target : int
        FPGA ``source``'s link port ``port_out`` feeds FPGA ``target``'s port ``port_in``.
    port_out, port_in : int
    item_bits : int
        Bits an item costs on the link (its counters count them).
    barrier_bit : int
        Bit of a link word that marks a barrier (counted apart).
    """

    source: int
    target: int
    port_out: int
    port_in: int
    item_bits: int
    barrier_bit: int


@dataclass(frozen=True)
class LinkParams:
    """The C++ link model's parameters.

    ``gravfm::LinkParams`` of ``link_model.h`` is generated from this (:mod:`gravfm.sim.harness_inputs`).

    Parameters
    ----------
    rate_fixed : int
        Credit gained per cycle in 1/2**FRACTION_BITS bits; 0 when the bandwidth is unlimited.
    cost : int
        Credit one item costs (``item_bits << FRACTION_BITS``).
    credit_bits : int
        Width of the signed credit register (0 when unlimited).
    latency : int
        ``latency_cycles``: an item is due this many cycles after it entered.
    fifo_depth : int
        Items in flight at most.
    reorder_window : int
        Largest block that may leave reversed (1: in order).
    stall_threshold : int
        The output stalls in a cycle whose 8-bit random draw is below this.
    lfsr_seed : int
        Initial LFSR state (:func:`gravfm.hw.link.config.mixed_seed` of the link's seed).
    time_bits : int
        Width of the cycle counter and the due times.
    drop_threshold, duplicate_threshold, flip_threshold : int
        Shares of the 16-bit fault draw (:attr:`~gravfm.hw.link.LinkConfig.fault_thresholds`).
    fault_seed : int
        Initial state of the fault generator (:func:`gravfm.hw.link.config.fault_seed`).
    dead, dead_after : int
        1 and the cycles after its first item when the link dies; 0 and 0 when it never does.
    payload_bits : int
        Width of an item on the link (a flipped bit falls in it).
    """

    rate_fixed: int
    cost: int
    credit_bits: int
    latency: int
    fifo_depth: int
    reorder_window: int
    stall_threshold: int
    lfsr_seed: int
    time_bits: int
    drop_threshold: int
    duplicate_threshold: int
    flip_threshold: int
    fault_seed: int
    dead: int
    dead_after: int
    payload_bits: int

    def cpp_initializer(self):
        """C++17 aggregate initializer of ``gravfm::LinkParams``, e.g. ``{/*rate_fixed*/ 0, ...}``."""
        values = (f"/*{field.name}*/ {value}u" for field, value in zip(fields(self), astuple(self)))
        return "{" + ", ".join(values) + "}"


def link_params(config, *, item_bits, seed, payload_bits, dead_after=None, time_bits=None):
    """The :class:`LinkParams` of the link ``LinkModel(shape=payload_bits, config=config,
    item_bits=item_bits, seed=seed, dead_after=dead_after)``.

    Parameters
    ----------
    config : gravfm.hw.link.LinkConfig
    item_bits : int
        Bits an item costs on the wire (the architecture's item bits).
    seed : int
        The link's seed before mixing.
    payload_bits : int
        Width of the link's items.
    dead_after : int, optional
        The link dies this many cycles after its first item (None: never).
    time_bits : int, optional
        Width of the cycle counter; default the gateware's ``TIME_BITS`` (other values only for
        tests of the wrap-around).
    """
    # deferred: Amaranth (heavy)
    from ..hw.link.config import FRACTION_BITS, credit_bits, fault_seed, mixed_seed
    from ..hw.link.model import TIME_BITS  # deferred: Amaranth (heavy)

    if not isinstance(item_bits, int) or item_bits < 1:
        raise TypeError(f"item_bits must be a positive integer, not {item_bits!r}")
    cost = item_bits << FRACTION_BITS
    rate = config.rate_fixed
    drop, duplicate, flip = config.fault_thresholds
    return LinkParams(
        rate_fixed=rate or 0, cost=cost,
        credit_bits=0 if rate is None else credit_bits(rate, cost),
        latency=config.latency_cycles, fifo_depth=config.fifo_depth,
        reorder_window=config.reorder_window, stall_threshold=config.stall_threshold,
        lfsr_seed=mixed_seed(seed), time_bits=TIME_BITS if time_bits is None else time_bits,
        drop_threshold=drop, duplicate_threshold=duplicate, flip_threshold=flip, fault_seed=fault_seed(seed),
        dead=int(dead_after is not None), dead_after=dead_after or 0, payload_bits=payload_bits)
