"""Off-chip edge memory in the run: where the edges live, the PE's memory fields, the checks that
a graph fits, and the simulated memory's parameters (all from the platform's ``[memory]``).

Every figure comes from the platform file; :data:`MEMORY_OPTIONS` override them for one run
(``gravfm run --memory-bandwidth ...``), e.g. to make a system memory-bound on purpose.
"""

from dataclasses import replace

import numpy as np

from ..errors import ConfigError
from ..model.offchip_layout import OffchipLayout, channel_range_bytes, pe_channel
from ..sim.memory_params import MemoryLoad, MemoryParams

__all__ = ["MEMORY_OPTIONS", "EDGE_MEMORIES", "edge_memory_of", "memory_hardware", "memory_channels", "image_bytes",
           "check_memory_fit", "memory_load", "platform_for_run", "words_per_pass", "channel_figures"]

EDGE_MEMORIES = ("onchip", "offchip")
#: Overrides of the platform's ``[memory]`` figures for one run, and the simulated memory's faults.
MEMORY_OPTIONS = ("bandwidth_gib_s", "latency_cycles", "latency_jitter_cycles", "banks", "bank_depth",
                  "requests_in_flight", "reorder", "stuck", "seed")


def edge_memory_of(choice, platform):
    """``choice`` ("onchip", "offchip") or, when None, the platform's ``[memory] edge_storage``."""
    edge_memory = platform.memory.edge_storage if choice is None else choice
    if edge_memory not in EDGE_MEMORIES:
        raise ConfigError(f"edge memory must be one of {', '.join(EDGE_MEMORIES)}, not {edge_memory!r}")
    return edge_memory


def check_memory_options(overrides):
    """Refuse an unknown override or a value out of range, naming it."""
    for name, value in overrides.items():
        if name not in MEMORY_OPTIONS:
            raise ConfigError(f"unknown memory option {name!r} (known: {', '.join(MEMORY_OPTIONS)})")
        if name in ("reorder", "stuck"):
            if not isinstance(value, bool):
                raise ConfigError(f"memory option {name} must be true or false, not {value!r}")
            continue
        if name == "bandwidth_gib_s":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigError(f"memory option bandwidth_gib_s must be a positive number, not {value!r}")
            continue
        minimum = 0 if name in ("latency_jitter_cycles", "seed") else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"memory option {name} must be an integer >= {minimum}, not {value!r}")


def platform_for_run(platform, edge_memory, overrides=None):
    """``platform`` as this run uses it: its edges where the run keeps them, its memory bandwidth
    as overridden (the model then predicts for the machine simulated)."""
    overrides = overrides or {}
    memory = replace(platform.memory, edge_storage=edge_memory,
                     bandwidth_gib_s=overrides.get("bandwidth_gib_s", platform.memory.bandwidth_gib_s),
                     peak_bandwidth_gib_s=max(platform.memory.peak_bandwidth_gib_s,
                                              overrides.get("bandwidth_gib_s", 0)))
    run_platform = replace(platform, memory=memory)
    object.__setattr__(run_platform, "origin", platform.origin)  # the file, for error messages
    return run_platform


def memory_hardware(platform, overrides=None):
    """The :class:`~gravfm.hw.config.PeConfig` fields of a PE with off-chip edges on ``platform``."""
    overrides = overrides or {}
    memory = platform.memory
    capacity_bytes = int(memory.capacity_mib * 2 ** 20)
    return {"edge_memory": "offchip", "memory_word_bits": memory.word_bits,
            "requests_in_flight": int(overrides.get("requests_in_flight", memory.requests_in_flight)),
            "memory_addr_bits": max(16, (capacity_bytes - 1).bit_length())}


def memory_channels(platform):
    """Pseudo-channels of an FPGA's memory on ``platform``: its ``[memory.channels] count``, else 1."""
    channels = platform.memory.channels
    return 1 if channels is None else channels.count


def image_bytes(stores, config, channels=1):
    """Bytes of every FPGA's memory image (:mod:`gravfm.sim.memory_image`), from the stores alone
    (``channels`` > 1: its channels with PEs, each range as large as the largest channel's data)."""
    word = config.pe.memory_word_bytes

    def pe_bytes(length, layout):
        return (layout.index_words(length.size) + int(layout.list_words(length).sum())) * word
    fills = _per_channel(stores, config, pe_bytes, channels)
    if channels == 1:
        return tuple(int(fill[0]) for fill in fills)
    return tuple(len(fill) * channel_range_bytes(fills, word) for fill in fills)


def _per_channel(stores, config, per_pe, channels):
    """``per_pe(list lengths, OffchipLayout)`` summed over the PEs of each FPGA's channels with
    PEs: one row per FPGA."""
    from ..hw.arch import architecture  # deferred: Amaranth (heavy)

    layouts = architecture(config.arch).layouts(config.algorithm, config)
    layout = OffchipLayout.of(config.pe.memory_word_bits, layouts.edge_word.size)
    p = config.pes_per_fpga
    fills = [[0] * min(p, channels) for _ in range(config.fpgas)]
    for g in range(config.total_pes):
        fills[g // p][pe_channel(g % p, channels)] += per_pe(np.asarray(stores[g].length), layout)
    return fills


def check_memory_fit(plan, platform):
    """Refuse, before any build, a graph whose edges exceed an FPGA's memory or whose vertex
    state exceeds its block RAM (each figure named, with the platform file)."""
    config = plan.config
    source = platform.origin or f"platform {platform.name}"
    if plan.memory_bytes:
        capacity = platform.memory.capacity_mib * 2 ** 20
        f = max(range(len(plan.memory_bytes)), key=plan.memory_bytes.__getitem__)
        if plan.memory_bytes[f] > capacity:
            # Bytes on both sides: MiB rounded to a tenth can read 0.0 against a capacity of 0.01.
            raise ConfigError(f"FPGA {f}'s edges need {plan.memory_bytes[f]:,} bytes of memory, but "
                              f"{source} [memory] capacity_mib is {platform.memory.capacity_mib:,g} "
                              f"({int(capacity):,} bytes)")
        _check_channel_fit(plan, capacity, source)
    block_ram = platform.fpga.block_ram_kib
    if block_ram:
        from ..hw.arch import architecture  # deferred: Amaranth (heavy)
        layouts = architecture(config.arch).layouts(config.algorithm, config)
        state_bits = config.pes_per_fpga * config.pe.vertices_per_pe * layouts.vertex_word.size
        if state_bits > block_ram * 8192:
            raise ConfigError(f"the vertex state of one FPGA needs {state_bits / 8192:,.0f} KiB of block RAM "
                              f"({config.pes_per_fpga} PEs x {config.pe.vertices_per_pe:,} vertices x "
                              f"{layouts.vertex_word.size} bits), but {source} [fpga] block_ram_kib is {block_ram:,g}")


def _check_channel_fit(plan, capacity, source):
    """Pseudo-channel memory: refuse a channel's edges beyond its 1 / C of the capacity."""
    channels = plan.memory_channels
    if channels > 1:
        needed = plan.memory_bytes[0] // min(plan.config.pes_per_fpga, channels)   # one channel's range
        if needed > capacity / channels:
            raise ConfigError(f"a memory channel's edges need {needed:,} bytes, but {source} [memory] "
                              f"capacity_mib / [memory.channels] count is {int(capacity / channels):,} bytes")


def memory_load(load_plan, platform, overrides=None, *, seed=1):
    """The :class:`~gravfm.sim.memory_params.MemoryLoad` the back-ends serve a run's memory ports
    from: the plan's images, the platform's figures (with ``overrides``) at its clock.

    Images split into C pseudo-channels (``load_plan.memory_channels``) give a memory of C
    channels, each with 1 / C of the FPGA's bandwidth and of its banks (at least one); the bank
    depth is per bank, the latency each channel's.
    """
    overrides = overrides or {}
    memory = platform.memory
    config = load_plan.config
    channels = load_plan.memory_channels
    if channels > 1 and memory_channels(platform) != channels:
        raise ConfigError(f"the memory images are split into {channels} channels, but "
                          f"{platform.origin or platform.name} has {memory_channels(platform)}")
    bandwidth = overrides.get("bandwidth_gib_s", memory.bandwidth_gib_s) / channels
    params = MemoryParams(
        word_bytes=config.pe.memory_word_bytes,
        bytes_per_cycle=bandwidth * 2 ** 30 / platform.fpga.f_clk_hz,
        latency=overrides.get("latency_cycles", memory.latency_cycles),
        jitter=overrides.get("latency_jitter_cycles", memory.latency_jitter_cycles),
        banks=max(1, overrides.get("banks", memory.banks) // channels),
        bank_depth=overrides.get("bank_depth", memory.bank_depth),
        seed=overrides.get("seed", seed), reorder=overrides.get("reorder", False),
        stuck=overrides.get("stuck", False), channels=channels, channel_bytes=load_plan.memory_channel_bytes)
    return MemoryLoad(params=params, images=load_plan.memory_images, ports_per_memory=config.pes_per_fpga)


def words_per_pass(stores, config):
    """Memory words one superstep reads when every vertex is active, per FPGA: for each
    non-empty list its index word and the words of its edges beyond the index entry's inline
    ones (the off-chip scatter unit's reads).

    The access model of this implementation, from the graph's layout (a prediction, not a
    measurement); with the traversed edges of the same pass it gives L_mem for this layout.
    """
    def pe_words(length, layout):
        listed = length[length > 0]
        return int(listed.size + layout.list_words(listed).sum())
    return tuple(int(fill[0]) for fill in _per_channel(stores, config, pe_words, 1))


def channel_figures(words_per_pe, config, channels, seconds):
    """Pseudo-channel memory: the run's figures per channel from the words each PE read (each
    PE's edges in channel :func:`~gravfm.model.offchip_layout.pe_channel`), the busiest channel of
    any FPGA first: ``{}`` with one channel."""
    if channels == 1:
        return {}
    p = config.pes_per_fpga
    words = np.zeros((config.fpgas, min(p, channels)), dtype=np.int64)
    for g, count in enumerate(np.asarray(words_per_pe, dtype=np.int64)):
        words[g // p, pe_channel(g % p, channels)] += count
    busiest = int(words.max())
    gib_s = busiest * config.pe.memory_word_bytes / seconds / 2 ** 30 if seconds else 0.0
    return {"channels": channels, "pes_per_channel": -(-p // channels), "busiest_channel_words": busiest,
            "busiest_channel_gib_s": gib_s}
