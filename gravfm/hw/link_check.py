"""The link check: a thin reliability layer on every inter-FPGA link, in plain Python.

What the gateware (:mod:`gravfm.hw.link.reliable`), the simulators, the flow and the model agree
on, without Amaranth: the modes, the frame's fields and the bits they add, the CRC, the timers
and the error word the receiver latches.

Modes (``LinkConfig.check``, ``gravfm run --link-check``):

* ``off`` — the link words go on the link as they are (the default: today's hardware, cycle for
  cycle; the platform's PCIe links have their own data-link layer below the streams).
* ``detect`` — every frame carries a sequence number and a CRC; the receiver stops the run at the
  first corrupt, lost or duplicated frame, or when the link has been silent for longer than the
  sender's heartbeat allows (a dead link), and latches what it saw (:func:`decode_error`).
* ``retransmit`` — go-back-N: the sender keeps its unacknowledged frames in a replay buffer,
  every frame carries the acknowledgement (items consumed) of the opposite direction, and a
  receiver that sees a corrupt or out-of-sequence frame asks for a replay (NAK) from the oldest
  unacknowledged frame. Only a dead link stops the run.

A frame is ``{body, seq, control, crc}`` in detect mode and ``{body, seq, control, ack, nak, crc}``
with retransmission; ``body`` is the link word (:func:`gravfm.hw.link.link_word_layout`), zero in
a control frame (heartbeat, acknowledgement, NAK). In detect mode a control frame takes the next
sequence number like a data frame (losing a heartbeat is a fault too); with retransmission it
shows the sender's next sequence number without taking it (it is never replayed), so a lost last
frame shows as a gap either way.

A receiver whose FPGA has detected termination latches no more errors: nothing it receives can
change that FPGA's result, and the run's other receivers judge what their FPGAs still need.
"""

import functools
import math
from dataclasses import dataclass

from ..errors import ConfigError
from ..model.units import mhz_to_hz

__all__ = ["MODES", "LinkCheck", "link_overhead_bits", "ERROR_KINDS", "crc_polynomial", "crc_masks", "crc",
           "decode_error", "error_word"]

MODES = ("off", "detect", "retransmit")
CRC_BITS = 8
#: Sequence bits in detect mode: a gap of up to 127 frames reads as a loss, not as a duplicate.
DETECT_SEQ_BITS = 8
#: Error kinds of the receiver's error word (0: no error).
ERROR_KINDS = {1: "corrupt", 2: "lost", 3: "duplicate", 4: "dead", 5: "count", 6: "overflow"}
#: Error word: kind in bits 0-3, expected sequence number 4-19, received 20-35, items received 36-63.
ERROR_FIELDS = {"kind": (0, 4), "expected": (4, 16), "received": (20, 16), "ordinal": (36, 28)}


def crc_polynomial(data_bits):
    """CRC-8 generator polynomial (normal form, x^8 implied) for ``data_bits`` covered bits.

    0x07 (x^8+x^2+x+1, CRC-8/ATM) has Hamming distance 4 up to 119 bits: every frame with one,
    two or three flipped bits is caught. Longer frames take 0x1D (primitive, HD 3 up to 247 bits).
    """
    if data_bits <= 119:
        return 0x07
    if data_bits <= 247:
        return 0x1D
    raise ConfigError(f"a {data_bits}-bit link frame is too long for the link check's CRC-8 (at most 247 bits)")


@functools.cache
def crc_masks(data_bits):
    """For each CRC bit, the mask of the data bits XORed into it (MSB-first CRC, initial value 0)."""
    poly = crc_polynomial(data_bits)
    syndromes = []
    for bit in range(data_bits):
        register = 0
        for position in reversed(range(data_bits)):   # the MSB enters first
            feedback = (register >> (CRC_BITS - 1) & 1) ^ (position == bit)
            register = (register << 1) & 0xFF ^ (poly if feedback else 0)
        syndromes.append(register)
    return tuple(sum(1 << bit for bit in range(data_bits) if syndromes[bit] >> j & 1) for j in range(CRC_BITS))


#: The CRC is inverted, so that an all-zero frame (a stuck link) never passes.
CRC_XOR_OUT = 0xFF


def crc(value, data_bits):
    """CRC-8 of the ``data_bits``-bit integer ``value`` (the reference of the gateware's)."""
    result = sum(1 << j for j, mask in enumerate(crc_masks(data_bits)) if (value & mask).bit_count() & 1)
    return result ^ CRC_XOR_OUT


def _next_power_of_two(value):
    return 1 << max(0, math.ceil(math.log2(max(1, value))))


@dataclass(frozen=True)
class LinkCheck:
    """The link check of one link: mode, field widths and timers (:meth:`plan` derives them).

    Attributes
    ----------
    mode : str
        ``off``, ``detect`` or ``retransmit``.
    seq_bits : int
        Width of the sequence and acknowledgement numbers.
    replay_depth : int
        Frames the sender keeps for replay, and the receiver buffers (retransmit; 0 otherwise):
        the sender's window.
    heartbeat_cycles : int
        A sender that sent nothing for this long sends a control frame.
    silence_cycles : int
        A receiver offered nothing for this long declares the link dead.
    nak_retry_cycles : int
        A receiver still missing a frame asks again after this long without a replay arriving.
    ack_quiet_cycles : int
        A pending acknowledgement goes out in a control frame after this many idle cycles.
    """

    mode: str = "off"
    seq_bits: int = 0
    replay_depth: int = 0
    heartbeat_cycles: int = 0
    silence_cycles: int = 0
    nak_retry_cycles: int = 0
    ack_quiet_cycles: int = 0

    @property
    def enabled(self):
        return self.mode != "off"

    @property
    def retransmit(self):
        return self.mode == "retransmit"

    @property
    def overhead_bits(self):
        """Bits a frame adds to a link word: sequence, control flag, CRC (and ack, NAK flag)."""
        if not self.enabled:
            return 0
        return self.seq_bits + 1 + CRC_BITS + (self.seq_bits + 1 if self.retransmit else 0)

    @classmethod
    def plan(cls, mode, *, latency_cycles, bits_per_cycle, fifo_depth, stall_probability, item_bits,
             replay_depth=None):
        """The link check for a link of these parameters (those of a :class:`~gravfm.hw.link.LinkConfig`).

        ``item_bits`` is what a link word costs without the check. The timers allow for the
        slowest the link can be: a frame every ``ceil(frame bits / bits_per_cycle)`` cycles, a
        full FIFO ahead of it, stalls. The replay depth covers a round trip at full rate.
        """
        if mode not in MODES:
            raise ConfigError(f"unknown link check {mode!r} (known: {', '.join(MODES)})")
        if mode == "off":
            return cls()
        if replay_depth is not None and (mode != "retransmit" or not isinstance(replay_depth, int)
                                         or replay_depth < 4 or replay_depth > 1 << 15
                                         or replay_depth & (replay_depth - 1)):
            raise ConfigError(f"the replay depth must be a power of two in 4..32768, with the retransmit "
                              f"link check, not {replay_depth!r}")

        def frames_per_cycle(seq_bits):
            frame = item_bits + seq_bits + 1 + CRC_BITS + (seq_bits + 1 if mode == "retransmit" else 0)
            return 1 if bits_per_cycle is None else min(1, bits_per_cycle / frame)

        def cycles_per_frame(seq_bits):   # the slowest a frame can go: credit comes in whole cycles
            return math.ceil(1 / frames_per_cycle(seq_bits))

        slow = 1 / (1 - stall_probability)
        depth, seq_bits = 0, DETECT_SEQ_BITS
        if mode == "retransmit":
            depth = replay_depth
            if depth is None:   # a round trip's frames at full rate (the frame's size from a first guess)
                round_trip = 2 * (latency_cycles + 8) + 32
                depth = max(16, _next_power_of_two(round_trip * frames_per_cycle(11) + 16))
            seq_bits = depth.bit_length()   # 2 * depth sequence numbers: ahead and behind tell apart
        per_frame = cycles_per_frame(seq_bits)
        heartbeat = max(32, 4 * per_frame)
        silence = math.ceil(latency_cycles + 4 * (heartbeat + per_frame) * slow) + 64
        if mode == "detect":
            return cls(mode=mode, seq_bits=seq_bits, heartbeat_cycles=heartbeat, silence_cycles=silence)
        # A replay arrives behind what is queued on the link: at most the window (and some control).
        one_way = latency_cycles + (min(fifo_depth, depth + 4) + 2) * per_frame
        return cls(mode=mode, seq_bits=seq_bits, replay_depth=depth, heartbeat_cycles=heartbeat,
                   silence_cycles=silence, nak_retry_cycles=math.ceil(2 * one_way * slow) + 4 * heartbeat,
                   ack_quiet_cycles=8)


def error_word(kind, expected=0, received=0, ordinal=0):
    """The receiver's error word (the reference of the gateware's latch)."""
    values = {"kind": kind, "expected": expected, "received": received, "ordinal": ordinal}
    return sum((values[name] & ((1 << width) - 1)) << offset for name, (offset, width) in ERROR_FIELDS.items())


def decode_error(word):
    """``{kind, expected, received, ordinal}`` of an error word (``kind`` a name; None: no error)."""
    fields = {name: int(word) >> offset & ((1 << width) - 1) for name, (offset, width) in ERROR_FIELDS.items()}
    fields["kind"] = ERROR_KINDS.get(fields["kind"], f"kind {fields['kind']}") if fields["kind"] else None
    return fields


def link_overhead_bits(platform, fpgas, mode, *, item_bits):
    """Bits the link check in ``mode`` adds to an item of ``item_bits`` on ``platform``'s links
    between ``fpgas`` FPGAs (as ``gravfm run`` builds them: :meth:`LinkConfig.from_platform`); the
    model adds them to its item sizes (:func:`gravfm.model.algorithm_params.with_link_overhead`)."""
    link = platform.network.link
    bits_per_cycle = None
    if fpgas > 1:
        peers = fpgas - 1
        bits_per_cycle = platform.network.interface_bits_per_s(peers) / peers / mhz_to_hz(platform.fpga.f_clk_mhz)
    check = LinkCheck.plan(mode, latency_cycles=link.latency_cycles, bits_per_cycle=bits_per_cycle,
                           fifo_depth=link.latency_cycles + 16, stall_probability=0.0, item_bits=item_bits)
    return check.overhead_bits
