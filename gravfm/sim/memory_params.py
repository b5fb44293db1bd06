"""Parameters of the simulated off-chip edge memory, and what a run hands the simulators.

:class:`MemoryParams` describes one FPGA's memory (the paper's HMC, or an HBM of independent
pseudo-channels): beat width, bandwidth, latency and its jitter, channels and their banks, and two
fault modes. Both models of that memory read it: the
Python reference (:mod:`gravfm.sim.memory_model`, used by the Amaranth back-end) and the C++ one
(``memory_model.h``, used by the compiled simulator's harness), which behave identically cycle
for cycle (``tests/test_memory_model_cpp.py``).

:class:`MemoryLoad` is what a run gives a back-end: the parameters, one byte image per memory and
the ports each memory serves. Port ``i`` of top instance ``t`` (a top with ``mem_ports`` ports)
is served by memory :func:`memory_of_port` ``= t * (mem_ports // P) + i // P``. The harness learns
all of it from the text :func:`memory_file` writes (its ``--memory SPEC`` option).

This module imports no Amaranth.
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from ..validate import check_fields, check_flag, check_integer, check_number
from .named_fields import named_line

__all__ = ["FRACTION_BITS", "MemoryParams", "MemoryModelParams", "MemoryLoad", "memory_file", "memory_of_port"]

#: Fraction bits of the bandwidth credit (bytes per cycle in fixed point).
FRACTION_BITS = 16
_U64 = (1 << 64) - 1
_WIDE = {"ctype": "uint64_t"}   # a field of the C++ struct wider than uint32_t


@dataclass(frozen=True)
class MemoryModelParams:
    """The integers of the memory model: :meth:`MemoryParams.model_params`.

    The harness's ``gravfm::MemoryModelParams`` is generated from this (:mod:`gravfm.sim.harness_inputs`);
    the fields' meaning: :class:`MemoryParams` and ``memory_model.h``.
    """

    word_bytes: int
    rate_fixed: int = field(metadata=_WIDE)
    latency: int
    jitter: int
    banks: int
    bank_depth: int
    seed: int = field(metadata=_WIDE)
    reorder: int
    stuck: int
    channels: int
    channel_bytes: int = field(metadata=_WIDE)


@dataclass(frozen=True)
class MemoryParams:
    """One FPGA's simulated edge memory (semantics: the header of ``memory_model.h``).

    Parameters
    ----------
    word_bytes : int
        Bytes per beat (``rdata`` is ``8 * word_bytes`` bits); a power of two up to 128.
    bytes_per_cycle : float
        Bandwidth of one channel at the FPGA's clock (of the whole memory when it has one channel),
        shared by its banks and by the ports reading it; held as fixed point with
        :data:`FRACTION_BITS` fraction bits (:attr:`rate_fixed`). A busy channel delivers exactly
        this in the long run; an idle one banks less than one word.
    latency : int
        Cycles from a beat's service to its earliest ``rvalid`` (>= 1); unloaded, a request
        accepted in cycle c shows its first beat in cycle c + 2 + latency.
    jitter : int
        Extra cycles per beat, uniform in ``0 .. jitter``.
    banks : int
        Independent banks of each channel; a word's bank is its word address modulo ``banks``.
    bank_depth : int
        Beats each bank's queue holds.
    seed : int
        Seed of the splitmix64 stream (jitter, reorder), 0 .. 2**64 - 1.
    reorder : bool
        Fault mode: return a random ready beat instead of the oldest (one ID's order is kept).
    stuck : bool
        Fault mode: accept and queue requests, never answer.
    channels : int
        Independent pseudo-channels (HBM), each with its own bandwidth credit, banks and queues
        and the same latency; 1 is one memory (the paper's HMC).
    channel_bytes : int
        Bytes of address space per channel (a multiple of ``word_bytes``; read only when
        ``channels > 1``): byte address A lives in channel :meth:`channel_of` (A).
    """

    word_bytes: int = 16
    bytes_per_cycle: float = 16.0
    latency: int = 20
    jitter: int = 0
    banks: int = 8
    bank_depth: int = 4
    seed: int = 1
    reorder: bool = False
    stuck: bool = False
    channels: int = 1
    channel_bytes: int = 0

    def __post_init__(self):
        check_fields(self, "word_bytes", high=128)
        if self.word_bytes & (self.word_bytes - 1):
            raise ConfigError(f"MemoryParams.word_bytes must be a power of two, not {self.word_bytes}")
        check_fields(self, "bytes_per_cycle", check=check_number, below=1 << 32)
        check_fields(self, "latency", high=(1 << 32) - 1)
        check_fields(self, "jitter", low=0, high=(1 << 32) - 2)
        check_fields(self, "banks", "bank_depth", high=1 << 16)
        check_fields(self, "seed", low=0, high=_U64)
        check_fields(self, "reorder", "stuck", check=check_flag)
        check_fields(self, "channels", high=1 << 16)
        check_fields(self, "channel_bytes", low=0, high=_U64)
        if self.channels > 1 and (not self.channel_bytes or self.channel_bytes % self.word_bytes):
            raise ConfigError(f"MemoryParams.channel_bytes must be a positive multiple of word_bytes="
                              f"{self.word_bytes} with {self.channels} channels, not {self.channel_bytes}")

    def channel_of(self, address):
        """The channel of byte ``address``: ``address // channel_bytes``, the last channel beyond."""
        return 0 if self.channels == 1 else min(address // self.channel_bytes, self.channels - 1)

    @property
    def rate_fixed(self):
        """Credit gained per cycle: ``bytes_per_cycle * 2**16``, rounded, at least 1."""
        return max(1, round(self.bytes_per_cycle * (1 << FRACTION_BITS)))

    @property
    def word_bits(self):
        """Width of ``rdata``."""
        return 8 * self.word_bytes

    def model_params(self):
        """The :class:`MemoryModelParams` of these parameters (what the C++ model reads)."""
        return MemoryModelParams(word_bytes=self.word_bytes, rate_fixed=self.rate_fixed, latency=self.latency,
                                 jitter=self.jitter, banks=self.banks, bank_depth=self.bank_depth, seed=self.seed,
                                 reorder=int(self.reorder), stuck=int(self.stuck), channels=self.channels,
                                 channel_bytes=self.channel_bytes)

    def describe(self):
        """One line for reports, e.g. ``16 B words, 16 B/cycle, latency 20 cycles, 8 banks x 4``
        (with channels: ``32 channels of 4096 B, 16 B words, 28.7 B/cycle each, ...``)."""
        latency = f"{self.latency}+0..{self.jitter}" if self.jitter else f"{self.latency}"
        faults = [name for name in ("reorder", "stuck") if getattr(self, name)]
        channels = f"{self.channels} channels of {self.channel_bytes} B, " if self.channels > 1 else ""
        each = " each" if self.channels > 1 else ""
        return (f"{channels}{self.word_bytes} B words, {self.bytes_per_cycle:g} B/cycle{each}, latency {latency} "
                f"cycles, {self.banks} banks x {self.bank_depth}{each}, seed {self.seed}"
                + "".join(f", {fault}" for fault in faults))


def memory_of_port(instance, port, *, mem_ports, ports_per_memory):
    """Index of the memory serving port ``port`` of top instance ``instance``."""
    return instance * (mem_ports // ports_per_memory) + port // ports_per_memory


def memory_file(params, ports_per_memory, image_paths):
    """The harness's memory SPEC text (its ``--memory`` option).

    Lines: ``params`` and the fields of :meth:`MemoryParams.model_params` by name, ``ports P`` (ports per memory), then
    ``image INDEX PATH`` for memory ``INDEX`` (the path runs to the end of the line).
    """
    check_integer("memory_file", "ports_per_memory", ports_per_memory)
    lines = [named_line("params", params.model_params()), f"ports {ports_per_memory}"]
    for index, path in enumerate(image_paths):
        path = str(path)
        if "\n" in path or path != path.strip():
            raise ConfigError(f"memory image path {path!r}: no newlines or surrounding blanks")
        lines.append(f"image {index} {path}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class MemoryLoad:
    """The edge memories of a run: parameters, one image per memory, ports per memory.

    Parameters
    ----------
    params : MemoryParams
    images : tuple of numpy.ndarray
        Memory ``m``'s contents (1-D ``uint8``, a whole number of words); byte address A of a
        port served by memory m reads ``images[m][A : A + word_bytes]``, little-endian.
    ports_per_memory : int
        P: PEs (AXI ports) per FPGA.
    """

    params: MemoryParams
    images: tuple
    ports_per_memory: int

    def __post_init__(self):
        if not isinstance(self.params, MemoryParams):
            raise ConfigError(f"MemoryLoad needs MemoryParams, not {type(self.params).__name__}")
        check_fields(self, "ports_per_memory")
        object.__setattr__(self, "images", tuple(self.images))
        if not self.images:
            raise ConfigError("MemoryLoad needs at least one image")
        for m, image in enumerate(self.images):
            if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 1:
                raise ConfigError(f"memory image {m} must be a 1-D numpy uint8 array")
            if image.size % self.params.word_bytes:
                raise ConfigError(f"memory image {m} has {image.size} bytes, not a multiple of "
                                  f"word_bytes={self.params.word_bytes}")

    def write(self, folder):
        """Write every image (``memory{m}.bin``) and the SPEC (``memory.txt``) into ``folder``;
        return the SPEC's path."""
        folder = Path(folder)
        paths = []
        for m, image in enumerate(self.images):
            paths.append(folder / f"memory{m}.bin")
            image.tofile(paths[-1])
        spec = folder / "memory.txt"
        spec.write_text(memory_file(self.params, self.ports_per_memory, [p.resolve() for p in paths]))
        return spec
