"""Memory of independent pseudo-channels (HBM-class): the ``[memory.channels]`` table of a platform.

An HBM stack is not one memory with one queue: it is many pseudo-channels, each with its own
bandwidth, latency and command queue, and a PE reading its edges from a channel of its own sees
only that channel's bandwidth (the Alveo U280 has 32, of 14.375 GB/s each; an AXI port reaching
another channel through the HBM switch loses bandwidth, so each PE's or scatter unit's edges live
in one channel, and the memory image is split per channel). The table states each channel once;
the FPGA-wide figures of ``[memory]`` (bandwidth, peak, and the simulated memory's banks, queue
depth and latency) follow from it, and one stated again must agree. The model's per-channel
limit is :func:`gravfm.model.limits.channel_memory_bandwidth`; a run simulates the channels
(:func:`gravfm.flow.memory.memory_load`: a memory of ``count`` channels, each with its share of the
bandwidth and banks, the image split per channel by :mod:`gravfm.sim.memory_image`).
"""

import math
from dataclasses import dataclass

from ..errors import ConfigError
from ..validate import check_fields, check_number
from .schema import FromDict, child_location

__all__ = ["ChannelSpec", "DERIVED_KEYS", "with_channel_figures"]


@dataclass(frozen=True)
class ChannelSpec(FromDict):
    """The pseudo-channels of one FPGA's memory, all alike.

    Parameters
    ----------
    count : int
        Independent pseudo-channels per FPGA.
    bandwidth_gib_s : float
        Bandwidth of one channel as the model uses it (GiB/s): what edge-list reads get.
    peak_bandwidth_gib_s : float
        Peak bandwidth of one channel (GiB/s), the datasheet's.
    latency_cycles : int
        Cycles (at f_clk) from a request to its data in an idle channel.
    queue_depth : int
        Requests one channel's controller queues.
    """

    count: int
    bandwidth_gib_s: float
    peak_bandwidth_gib_s: float
    latency_cycles: int
    queue_depth: int

    def __post_init__(self):
        check_fields(self, "count", "latency_cycles", "queue_depth")
        check_fields(self, "bandwidth_gib_s", "peak_bandwidth_gib_s", check=check_number)
        if self.bandwidth_gib_s > self.peak_bandwidth_gib_s:
            raise ConfigError(f"ChannelSpec.bandwidth_gib_s ({self.bandwidth_gib_s}) exceeds "
                              f"peak_bandwidth_gib_s ({self.peak_bandwidth_gib_s})")


#: ``[memory]`` keys that pseudo-channel memory derives from ``[memory.channels]``, with how.
DERIVED_KEYS = {
    "bandwidth_gib_s": ("count x bandwidth_gib_s", lambda c: c.count * c.bandwidth_gib_s),
    "peak_bandwidth_gib_s": ("count x peak_bandwidth_gib_s", lambda c: c.count * c.peak_bandwidth_gib_s),
    "banks": ("count", lambda c: c.count),
    "bank_depth": ("queue_depth", lambda c: c.queue_depth),
    "latency_cycles": ("latency_cycles", lambda c: c.latency_cycles),
}


def _agrees(stated, derived):
    """A number equal to ``derived`` (to rounding)."""
    return not isinstance(stated, bool) and isinstance(stated, (int, float)) and math.isclose(stated, derived,
                                                                                              rel_tol=1e-9)


def with_channel_figures(data, where):
    """The ``[memory]`` table ``data`` with its FPGA-wide figures derived from its ``channels``
    table (:data:`DERIVED_KEYS`); ``data`` itself when it has none. A derived key stated in
    ``[memory]`` as well must agree with the channels (a written-out platform states both), or it
    is refused, naming the file and the key."""
    if not isinstance(data, dict) or "channels" not in data or data["channels"] is None:
        return data
    channels = ChannelSpec.from_dict(data["channels"], where=child_location(where, "channels"))
    derived = {key: derive(channels) for key, (_, derive) in DERIVED_KEYS.items()}
    for key, (source, _) in DERIVED_KEYS.items():
        if key in data and not _agrees(data[key], derived[key]):
            raise ConfigError(f"{where}: {key} = {data[key]!r} disagrees with [memory.channels] ({source} = "
                              f"{derived[key]:g}); pseudo-channel memory states it there only")
    return {**data, **derived}
