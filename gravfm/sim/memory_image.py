"""The off-chip memory image of each FPGA: its PEs' edge indexes and edge lists, built by numpy.

Layout (what :mod:`gravfm.hw.pe.offchip_scatter` reads, arithmetic in
:class:`gravfm.model.offchip_layout.OffchipLayout`), per FPGA, its PEs one after another::

    PE i: [index: one entry per index entry, padded to a word]
          [lists: each starts on a word boundary, W / slot edges per word]

A memory of C pseudo-channels (HBM) is split into C contiguous ranges of ``channel_bytes`` each
(:meth:`gravfm.sim.memory_params.MemoryParams.channel_of`): PE i of an FPGA lives in channel
i % C (:func:`gravfm.model.offchip_layout.pe_channel`), a channel's PEs one after another from
its start, so that a PE reads only its own channel when p <= C. ``channel_bytes`` is the largest
channel's data over all FPGAs; the image holds the channels that have PEs (min(p, C)), each
padded to it. One channel is the layout above, unpadded.

Index entry ``e``: u32 first word of the list (relative to the PE's ``edge_base``), u32 edge
count, then K = (W - 64) // slot inline slots holding the list's first min(count, K) edges (the
entry is then one whole word; K = 0: bare 64-bit entries, W / 64 per word); the list in memory
holds the other count - K edges. An edge is its ``edge_word`` (destination, then the edge data)
in a power-of-two slot. All little-endian. The host tells each PE where its two parts start (``PeRegister.INDEX_BASE``
and ``EDGE_BASE``, in words) and which entries hold a list (``HostMem.EDGE_PRESENT``).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..model.offchip_layout import OffchipLayout, channel_range_bytes, pe_channel
from ..hw.protocol import PRESENT_WORD_BITS, HostMem, PeRegister

__all__ = ["MemoryImages", "memory_images"]


@dataclass(frozen=True, eq=False)
class MemoryImages:
    """Every FPGA's memory image and the host writes that point the PEs at their parts.

    Attributes
    ----------
    images : tuple of np.ndarray of uint8
        One per FPGA, a whole number of words.
    parts : list
        Host writes ``(pe, mem, addresses, words)``: base registers and presence bits.
    channels : int
        Pseudo-channels of each FPGA's memory the image is split into (1: one memory).
    channel_bytes : int
        Bytes of each channel's range (0 with one channel).
    """

    images: tuple
    parts: list
    channels: int = 1
    channel_bytes: int = 0

    @property
    def bytes_per_fpga(self):
        """Bytes of every FPGA's image."""
        return [image.size for image in self.images]


def memory_images(stores, edge_words, config, *, edge_bits, channels=1):
    """Images and host writes for the PEs' edge stores.

    Parameters
    ----------
    stores : gravfm.partition.EdgeStores
        One store per global PE (GraVF-M: index by sender hw id; GraVF: by local index).
    edge_words : list of np.ndarray of uint64
        Per PE, its packed edge words in store order (``destination`` order).
    config : gravfm.hw.SystemConfig
    edge_bits : int
        Width of one edge word.
    channels : int
        Pseudo-channels of each FPGA's memory (module docstring); 1 for one memory.

    Raises
    ------
    gravfm.errors.ConfigError
        An edge word wider than a memory word or 64 bits, or an image beyond the address space.
    """
    pe = config.pe
    word_bytes = pe.memory_word_bytes
    layout = OffchipLayout.of(pe.memory_word_bits, edge_bits)
    if layout.slot_bits > min(64, pe.memory_word_bits):
        raise ConfigError(f"an edge of {edge_bits} bits does not fit the off-chip layout "
                          f"(at most {min(64, pe.memory_word_bits)} bits)")
    p = config.pes_per_fpga
    regions = [_pe_region(stores[g], edge_words[g], layout, word_bytes) for g in range(config.total_pes)]
    used = min(p, channels)   # channels holding PEs
    fills = [[sum(index.size + lists.size for g, (index, lists) in enumerate(regions[f * p:(f + 1) * p])
                  if pe_channel(g, channels) == c) for c in range(used)] for f in range(config.fpgas)]
    channel_bytes = channel_range_bytes(fills, word_bytes) if channels > 1 else 0
    images, parts = [], []
    for f in range(config.fpgas):
        chunks, ends = [[] for _ in range(used)], [c * channel_bytes for c in range(used)]
        for g in range(f * p, (f + 1) * p):
            c = pe_channel(g - f * p, channels)
            index, lists = regions[g]
            index_base = ends[c] // word_bytes
            chunks[c] += [index, lists]
            ends[c] += index.size + lists.size
            parts.append((g, HostMem.REGISTERS, np.array([PeRegister.INDEX_BASE, PeRegister.EDGE_BASE]),
                          np.array([index_base, index_base + index.size // word_bytes], dtype=np.uint64)))
            parts.extend(_presence_writes(g, stores[g].length))
        if channels > 1:   # each channel padded to its range
            chunks = [chunk + [np.zeros(channel_bytes - fill, dtype=np.uint8)] for chunk, fill in zip(chunks, fills[f])]
        image = np.concatenate([region for chunk in chunks for region in chunk] or [np.zeros(0, dtype=np.uint8)])
        if image.size > 1 << pe.memory_addr_bits:
            raise ConfigError(f"FPGA {f}: the edge image needs {image.size:,} bytes, beyond the "
                              f"{pe.memory_addr_bits}-bit memory address (memory_addr_bits)")
        images.append(image)
    return MemoryImages(images=tuple(images), parts=parts, channels=channels, channel_bytes=channel_bytes)


def _pe_region(store, words, layout, word_bytes):
    """(index bytes, list bytes) of one PE, each a whole number of memory words."""
    length = np.asarray(store.length, dtype=np.int64)
    slot_type = np.dtype(f"<u{layout.slot_bits // 8}")
    list_words = layout.list_words(length)
    first_word = np.zeros(length.size, dtype=np.int64)
    np.cumsum(list_words[:-1], out=first_word[1:])
    headers = (first_word.astype(np.uint64) & np.uint64(0xFFFFFFFF)) | (length.astype(np.uint64) << np.uint64(32))
    # Every edge: its list (owner), its place in the list (within), its edge word.
    listed = np.flatnonzero(length)
    owners = np.repeat(listed, length[listed])
    list_starts = np.zeros(listed.size, dtype=np.int64)
    np.cumsum(length[listed][:-1], out=list_starts[1:])
    within = np.arange(owners.size) - np.repeat(list_starts, length[listed])
    edges = np.asarray(words, dtype=np.uint64)[np.asarray(store.start, dtype=np.int64)[owners] + within]
    k = layout.inline
    inline = np.zeros((length.size, k), dtype=slot_type)
    first = within < k
    inline[owners[first], within[first]] = edges[first]
    stride = word_bytes // layout.entries_per_word   # an entry with inline edges fills a word
    entries = np.zeros((length.size, stride), dtype=np.uint8)
    entries[:, :8] = headers.astype("<u8").view(np.uint8).reshape(-1, 8)
    entries[:, 8:8 + inline.itemsize * k] = inline.view(np.uint8).reshape(length.size, inline.itemsize * k)
    slots = np.zeros(int(list_words.sum()) * layout.per_word, dtype=slot_type)
    rest = ~first
    slots[first_word[owners[rest]] * layout.per_word + within[rest] - k] = edges[rest]
    return _pad(entries.reshape(-1), word_bytes), slots.view(np.uint8)


def _pad(data, word_bytes):
    """``data`` (bytes) zero-padded to a whole number of words."""
    extra = -data.size % word_bytes
    return np.concatenate([data, np.zeros(extra, dtype=np.uint8)]) if extra else data


def _presence_writes(g, length):
    """Host writes of PE ``g``'s presence bits (entry has a list), only the non-zero words."""
    present = np.asarray(length) > 0
    present = np.concatenate([present, np.zeros(-present.size % PRESENT_WORD_BITS, dtype=bool)])
    words = np.packbits(present, bitorder="little").view("<u4").astype(np.uint64)
    nonzero = np.flatnonzero(words)
    return [(g, HostMem.EDGE_PRESENT, nonzero, words[nonzero])] if nonzero.size else []
