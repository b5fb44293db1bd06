"""The off-chip edge layout's arithmetic, without Amaranth: what the memory image
(:mod:`gravfm.sim.memory_image`), the scatter unit (:mod:`gravfm.hw.pe.offchip_scatter`), the
plan's size checks (:mod:`gravfm.flow.memory`) and the model agree on.

An index entry is a 64-bit header ``{u32 first list word relative to EDGE_BASE, u32 edge count}``
followed by ``inline`` edge slots holding the list's first edges, so that the whole entry fills
one memory word; the list in memory holds only the edges after them. The index word is read
whole anyway, so the inline edges cost no bytes, and a list of at most ``inline`` edges costs no
second (dependent) request. When no slot fits beside the header (``inline`` 0), entries are the
bare 64-bit headers, several to a word.

It lives with the model, the lowest layer that reads it (docs/architecture.md: the model imports
no hardware); the gateware, the memory image and the plan import it from here.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["INDEX_START_BITS", "INDEX_LENGTH_BITS", "INDEX_ENTRY_BITS", "edge_slot_bits", "inline_edges",
           "pe_channel", "channel_range_bytes", "OffchipLayout"]

#: An edge-index entry's fields in off-chip memory: u32 first word of the list, u32 edge count.
INDEX_START_BITS = 32
INDEX_LENGTH_BITS = 32
#: Bits of one edge-index entry's header.
INDEX_ENTRY_BITS = INDEX_START_BITS + INDEX_LENGTH_BITS


def edge_slot_bits(edge_bits):
    """Bits one edge takes in a memory word (its edge word rounded up to a power of two, >= 8)."""
    return max(8, 1 << (edge_bits - 1).bit_length())


def inline_edges(word_bits, slot_bits):
    """Edge slots an index entry holds beside its header: (m_memword - 64) // slot, at least 0."""
    return max(0, (word_bits - INDEX_ENTRY_BITS) // slot_bits)


def pe_channel(pe, channels):
    """The pseudo-channel holding the edges of an FPGA's PE (or scatter unit) ``pe`` (its local
    index) in a memory of ``channels`` channels: ``pe % channels``, each PE its own channel while
    there are enough, several sharing one beyond."""
    return pe % channels


def channel_range_bytes(fills, word_bytes):
    """Bytes of each channel's address range, from every channel's data in bytes (``fills``, of
    every FPGA): the largest, at least one word, so that one range fits every channel."""
    return max(word_bytes, int(np.max(fills)))


@dataclass(frozen=True)
class OffchipLayout:
    """The layout for memory words of ``word_bits`` and edges in slots of ``slot_bits``."""

    word_bits: int
    slot_bits: int

    @classmethod
    def of(cls, word_bits, edge_bits):
        """The layout of edges of ``edge_bits`` bits (their slot rounded up to a power of two)."""
        return cls(word_bits, edge_slot_bits(edge_bits))

    @property
    def per_word(self):
        """Edges one list word holds."""
        return self.word_bits // self.slot_bits

    @property
    def inline(self):
        """Edges an index entry holds after its header (K)."""
        return inline_edges(self.word_bits, self.slot_bits)

    @property
    def entry_bits(self):
        """Bits of one index entry: the header and its inline slots (a whole word when K > 0)."""
        return INDEX_ENTRY_BITS + self.inline * self.slot_bits

    @property
    def entries_per_word(self):
        """Index entries one memory word holds (1 when K > 0; a power of two)."""
        return self.word_bits // self.entry_bits

    def index_words(self, entries):
        """Memory words an index of ``entries`` entries takes."""
        return -(-entries // self.entries_per_word)

    def list_words(self, length):
        """Memory words each list of ``length`` edges (an array) takes beyond its index entry."""
        rest = np.maximum(np.asarray(length, dtype=np.int64) - self.inline, 0)
        return -(-rest // self.per_word)
