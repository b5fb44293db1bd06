"""The simulated off-chip edge memory of one FPGA: the Python reference model.

:class:`MemoryModel` serves P AXI4 read ports (:func:`gravfm.hw.axi.axi_read_signature`) from a
read-only byte image, one memory or several independent pseudo-channels (HBM: each channel its
own bandwidth credit, banks and queues, a beat's channel chosen by its address,
:meth:`MemoryParams.channel_of <gravfm.sim.memory_params.MemoryParams.channel_of>`), cycle for
cycle as the C++ ``gravfm::MemoryModel`` of ``memory_model.h``,
whose header defines the semantics (the order of one cycle's steps, both round-robins, the
random stream); ``tests/test_memory_model_cpp.py`` proves the two identical. The Amaranth
back-end serves a top's ``mem`` ports with it.

Typical use, once per cycle::

    outputs = model.outputs()          # registered: drive arready, rvalid, rdata, ... from these
    ...                                # let the design settle, sample its port outputs
    model.clock(inputs)                # one PortInputs per port, as sampled before the edge
"""

from collections import deque
from typing import NamedTuple

import numpy as np

from ..errors import ConfigError
from .memory_params import FRACTION_BITS, MemoryParams

__all__ = ["PortInputs", "PortOutputs", "MemoryModel", "SplitMix64", "RESP_OKAY", "RESP_SLVERR", "RESP_DECERR"]

RESP_OKAY, RESP_SLVERR, RESP_DECERR = 0, 2, 3
_MASK = (1 << 64) - 1
#: Added to the seed per memory index, so that the memories of a system draw different streams.
INDEX_STRIDE = 0xD1B54A32D192ED03


class SplitMix64:
    """splitmix64 (Steele, Lea, Flood 2014), as ``MemoryModel::random`` in ``memory_model.h``."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state & _MASK

    def next(self):
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)


class PortInputs(NamedTuple):
    """One port's inputs to the memory, sampled before the clock edge."""

    arvalid: int
    araddr: int
    arid: int
    arlen: int
    arsize: int
    arburst: int
    rready: int


class PortOutputs(NamedTuple):
    """One port's registered outputs; ``rdata``, ``rid``, ``rresp``, ``rlast`` are 0 while ``rvalid`` is."""

    arready: int
    rvalid: int
    rdata: int
    rid: int
    rresp: int
    rlast: int


class _Beat:
    __slots__ = ("address", "seq", "due", "id", "resp", "last")

    def __init__(self, address, seq, arid, resp, last):
        self.address, self.seq, self.id, self.resp, self.last = address, seq, arid, resp, last
        self.due = None   # set when a bank services it


class _Channel:
    """One channel's bandwidth credit, its banks' queues and their service round-robin."""

    __slots__ = ("credit", "queues", "queued", "service_next")

    def __init__(self, credit, banks):
        self.credit, self.queues, self.queued, self.service_next = credit, [deque() for _ in range(banks)], 0, 0


class _Slot:  # a port's staged request
    __slots__ = ("address", "beats_left", "id", "resp")

    def __init__(self, address, beats, arid, resp):
        self.address, self.beats_left, self.id, self.resp = address, beats, arid, resp


_IDLE = PortOutputs(1, 0, 0, 0, 0, 0)


class MemoryModel:
    """One memory with ``ports`` AXI read ports (semantics: ``memory_model.h``).

    Every port reaches every channel (an HBM's switch); a channel's bandwidth is shared by the
    ports reading it, so ports reading channels of their own each get a channel's bandwidth.

    Parameters
    ----------
    params : MemoryParams
    image : numpy.ndarray
        The memory's bytes (1-D ``uint8``, a whole number of words); not copied, not written.
    ports : int
        AXI read ports served.
    index : int
        The memory's index in the system (mixed into the random stream).

    Attributes
    ----------
    now : int
        Clock edges so far.
    requests, beats : int
        AR and R handshakes so far.
    outstanding : list of int
        Per port: beats requested and not yet delivered.
    errors : int
        Beats dispatched with ``rresp`` SLVERR or DECERR.
    first_error : tuple or None
        ``(cycle, port, byte address)`` of the first of them.
    """

    def __init__(self, params, image, ports, *, index=0):
        if not isinstance(params, MemoryParams):
            raise ConfigError(f"MemoryModel needs MemoryParams, not {type(params).__name__}")
        image = np.asarray(image)
        if image.dtype != np.uint8 or image.ndim != 1 or image.size % params.word_bytes:
            raise ConfigError("a memory image is a 1-D uint8 array of whole words")
        if isinstance(ports, bool) or not isinstance(ports, int) or ports < 1:
            raise ConfigError(f"a memory serves at least one port, not {ports!r}")
        self.params, self.ports = params, ports
        self._bytes = memoryview(np.ascontiguousarray(image))
        self._word = params.word_bytes
        self._log2_word = params.word_bytes.bit_length() - 1
        self._image_words = image.size // params.word_bytes
        self._rate, self._cost = params.rate_fixed, params.word_bytes << FRACTION_BITS
        self._cap = self._rate + self._cost - 1   # the most a busy channel holds: none of it is lost
        # An idle channel has its full allowance.
        self._channels = [_Channel(self._cap, params.banks) for _ in range(params.channels)]
        self._random = SplitMix64(params.seed + index * INDEX_STRIDE)
        self._slots = [None] * ports
        self._pending = [{} for _ in range(ports)]   # per port: ID -> deque of beats, request order
        self._shown = [None] * ports                 # the presented beat
        self._shown_outputs = [_IDLE] * ports
        self._dispatch_next = 0
        self._seq = 0
        self.now = 0
        self.requests = self.beats = self.errors = 0
        self.outstanding = [0] * ports
        self.first_error = None

    def outputs(self):
        """Every port's :class:`PortOutputs` for the current cycle."""
        return [out if self._slots[k] is None else out._replace(arready=0)
                for k, out in enumerate(self._shown_outputs)]

    def clock(self, inputs):
        """The clock edge, given every port's :class:`PortInputs` (or 7-tuples in its order)."""
        ar_ready = [slot is None for slot in self._slots]
        for k, port in enumerate(inputs):
            if self._shown[k] is not None and port[6]:
                self._deliver(k)
        if not self.params.stuck:
            self._service()
        self._dispatch()
        for k, port in enumerate(inputs):
            if ar_ready[k] and port[0]:
                self._accept(k, port)
        self.now += 1
        for k in range(self.ports):
            if self._shown[k] is None and self._pending[k]:
                self._present(k)

    def stats(self):
        """The harness's RESULT entry of this memory: ``requests``, ``beats``, ``outstanding``."""
        return {"requests": self.requests, "beats": self.beats, "outstanding": list(self.outstanding)}

    def _deliver(self, k):
        beat, pending = self._shown[k], self._pending[k]
        same_id = pending[beat.id]
        same_id.popleft()   # the presented beat is the head of its ID
        if not same_id:
            del pending[beat.id]
        self._shown[k] = None
        self._shown_outputs[k] = _IDLE
        self.beats += 1
        self.outstanding[k] -= 1

    def _service(self):
        for channel in self._channels:   # in channel order: the order of the jitter draws
            channel.credit = min(channel.credit + self._rate, self._cap)
            if channel.queued:
                self._service_channel(channel)

    def _service_channel(self, channel):
        banks, queues, jitter = self.params.banks, channel.queues, self.params.jitter
        first = None
        for i in range(banks):
            b = (channel.service_next + i) % banks
            if not queues[b]:
                continue
            if channel.credit < self._cost:
                break
            channel.credit -= self._cost
            beat = queues[b].popleft()
            channel.queued -= 1
            beat.due = self.now + self.params.latency + (self._random.next() % (jitter + 1) if jitter else 0)
            if first is None:
                first = b
        if first is not None:
            channel.service_next = (first + 1) % banks

    def _dispatch(self):
        banks, depth = self.params.banks, self.params.bank_depth
        taken = set()   # (channel, bank) that took a beat in this step
        first = None
        for i in range(self.ports):
            k = (self._dispatch_next + i) % self.ports
            slot = self._slots[k]
            if slot is None:
                continue
            word = slot.address >> self._log2_word
            c, b = self.params.channel_of(slot.address), word % banks
            channel = self._channels[c]
            if (c, b) in taken or len(channel.queues[b]) >= depth:
                continue
            taken.add((c, b))
            resp = slot.resp
            if resp == RESP_OKAY and word >= self._image_words:
                resp = RESP_DECERR
            if resp != RESP_OKAY:
                self._note_error(k, slot.address)
            slot.beats_left -= 1
            beat = _Beat(slot.address, self._seq, slot.id, resp, slot.beats_left == 0)
            self._seq += 1
            self._pending[k].setdefault(slot.id, deque()).append(beat)
            channel.queues[b].append(beat)
            channel.queued += 1
            slot.address = (slot.address + self._word) & _MASK
            if not slot.beats_left:
                self._slots[k] = None
            if first is None:
                first = k
        if first is not None:
            self._dispatch_next = (first + 1) % self.ports

    def _note_error(self, k, address):
        if not self.errors:
            self.first_error = (self.now, k, address)
        self.errors += 1

    def _accept(self, k, port):
        _, araddr, arid, arlen, arsize, arburst, _ = port
        bad = araddr % self._word or arsize != self._log2_word or arburst != 1
        beats = (arlen & 0xFF) + 1
        self._slots[k] = _Slot(araddr & _MASK, beats, arid, RESP_SLVERR if bad else RESP_OKAY)
        self.requests += 1
        self.outstanding[k] += beats

    def _present(self, k):
        now = self.now
        candidates = [head for head in (same_id[0] for same_id in self._pending[k].values())
                      if head.due is not None and head.due <= now]
        if not candidates:
            return
        if not self.params.reorder:
            pick = min(candidates, key=lambda beat: (beat.due, beat.seq))
        elif len(candidates) > 1:
            candidates.sort(key=lambda beat: beat.seq)
            pick = candidates[self._random.next() % len(candidates)]
        else:
            pick = candidates[0]
        data = 0
        if pick.resp == RESP_OKAY:
            start = (pick.address >> self._log2_word) * self._word
            data = int.from_bytes(self._bytes[start:start + self._word], "little")
        self._shown[k] = pick
        self._shown_outputs[k] = PortOutputs(1, 1, data, pick.id, pick.resp, int(pick.last))
