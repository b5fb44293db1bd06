"""Units of the performance model, converted in one place.

Every quantity inside the model is in SI base units: bits, bits per second, hertz, seconds,
edges per second. Data files state their units in the key name (``_gib_s``, ``_mhz``, ``_mib``)
and are converted here, so a GiB (2**30 bytes) is never confused with a GB (10**9 bytes).
"""

__all__ = [
    "BITS_PER_BYTE",
    "GIB",
    "MIB",
    "gib_per_s_to_bits_per_s",
    "bits_per_s_to_gib_per_s",
    "mib_to_bits",
    "mhz_to_hz",
    "to_mteps",
]

BITS_PER_BYTE = 8
GIB = 2**30  # bytes in a gibibyte (the paper's GiB/s figures are binary)
MIB = 2**20  # bytes in a mebibyte


def gib_per_s_to_bits_per_s(gib_per_s):
    """GiB/s (2**30 bytes per second) -> bits per second."""
    return gib_per_s * GIB * BITS_PER_BYTE


def bits_per_s_to_gib_per_s(bits_per_s):
    """Bits per second -> GiB/s."""
    return bits_per_s / (GIB * BITS_PER_BYTE)


def mib_to_bits(mib):
    """MiB (2**20 bytes) -> bits."""
    return mib * MIB * BITS_PER_BYTE


def mhz_to_hz(mhz):
    """MHz -> Hz."""
    return mhz * 1e6


def to_mteps(edges_per_s):
    """Edges per second -> MTEPS (10**6 traversed edges per second, decimal as in the paper)."""
    return edges_per_s / 1e6
