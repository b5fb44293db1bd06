"""Units of the off-chip edge path on their own: the reorder buffer and the memory image."""

import random

import numpy as np
import pytest

from gravfm.hw.reorder_buffer import ReorderBuffer
from gravfm.sim.memory_image import memory_images
from conftest import run_dut as run


@pytest.mark.parametrize("depth, max_take", [(1, 1), (3, 1), (8, 1), (8, 4), (16, 8)])
def test_reorder_buffer_hands_on_in_taking_order_whatever_the_fill_order(depth, max_take):
    """Slots taken singly (index lookups, some filled at once) or several at a time (a burst's
    words), filled in random order, leave in the order taken."""
    dut = ReorderBuffer(depth=depth, meta=8, shape=16, max_take=max_take)
    rng = random.Random(depth * max_take)
    seen = {"full": 0, "out_of_order": 0, "prefilled": 0}

    async def bench(ctx):
        taken, waiting, received, next_meta = [], [], [], 0
        for _ in range(1500):
            take = rng.random() < 0.6 and next_meta < 200
            count = rng.randint(1, max_take)
            prefilled = max_take == 1 and rng.random() < 0.2
            fill = bool(waiting) and rng.random() < 0.5
            slot_filled = waiting.pop(rng.randrange(len(waiting))) if fill else None
            if fill and waiting and slot_filled[0] > min(w[0] for w in waiting):
                seen["out_of_order"] += 1
            ready = rng.random() < 0.7
            can_take = ctx.get(dut.can_take)
            assert can_take == (ctx.get(dut.used) <= depth - max_take)
            seen["full"] += not can_take
            ctx.set(dut.take, take)
            ctx.set(dut.take_meta, next_meta)
            ctx.set(dut.take_filled, prefilled)
            ctx.set(dut.take_count, count)
            ctx.set(dut.fill, fill)
            if fill:
                ctx.set(dut.fill_slot, slot_filled[1])
                ctx.set(dut.fill_data, 1000 + slot_filled[0])   # tagged with its position in order
            ctx.set(dut.o.ready, ready)
            if ctx.get(dut.o.valid) and ready:
                payload = ctx.get(dut.o.payload)
                received.append((payload.meta, payload.data))
            if take and can_take:
                slot = ctx.get(dut.slot)
                for k in range(count if max_take > 1 else 1):
                    # Meta goes with a take's first slot; the others read whatever it left.
                    taken.append((next_meta if k == 0 else None, prefilled))
                    seen["prefilled"] += prefilled
                    if not prefilled:
                        waiting.append((len(taken) - 1, (slot + k) % depth))
                next_meta += 1
            await ctx.tick()
        expected = [(meta, None if prefilled else 1000 + position)
                    for position, (meta, prefilled) in enumerate(taken)]
        assert len(received) > 100
        assert all(meta == want for (meta, _), (want, _) in zip(received, expected) if want is not None)
        assert [data for _, data in received] == [data if data is not None else got
                                                  for (_, data), (_, got) in zip(expected, received)]

    run(dut, bench)
    assert seen["full"] and (seen["prefilled"] or max_take > 1)
    if depth > 1:
        assert seen["out_of_order"]


def _read_list(image, index_base, edge_base, entry, word_bytes, slot_bytes):
    """Edge words of index entry ``entry``, read from the image by the documented layout: a
    64-bit header {first list word, count} and K = (W - 64) // slot inline edges fill a word
    (K = 0: 64-bit entries), the list in memory holds the others. Also the byte spans read
    ``(address, bytes)``: the entry, and the list beyond it when there is one."""
    inline = (word_bytes - 8) // slot_bytes
    at = index_base * word_bytes + entry * (word_bytes if inline else 8)
    first_word, length = (int(x) for x in np.frombuffer(image[at:at + 8].tobytes(), dtype="<u4"))
    head = min(length, inline)
    edges = np.frombuffer(image[at + 8:at + 8 + head * slot_bytes].tobytes(), dtype=f"<u{slot_bytes}")
    start = (edge_base + first_word) * word_bytes
    rest = np.frombuffer(image[start:start + (length - head) * slot_bytes].tobytes(), dtype=f"<u{slot_bytes}")
    spans = [(at, word_bytes if inline else 8)] + ([(start, (length - head) * slot_bytes)] if length > head else [])
    return [int(s) for s in edges] + [int(s) for s in rest], head, spans


@pytest.mark.parametrize("arch, algorithm, word_bits, inline", [
    ("gravfm", "sssp", 128, 1),    # 64-bit slots: one inline edge
    ("gravf", "sssp", 128, 1),
    ("gravfm", "bfs", 128, 8),     # 8-bit slots: eight
    ("gravfm", "sssp", 64, 0),     # no room beside the header: bare 64-bit entries
    ("gravf", "wcc", 256, 24),     # 8-bit slots, 256-bit words
])
def test_memory_image_holds_every_list_word_aligned_at_its_index_entry(arch, algorithm, word_bits, inline):
    from gravfm.hw.protocol import HostMem

    stores, words, config, edge_bits, slot_bytes = _image_case(arch, algorithm, word_bits, pes=2)
    assert (word_bits // 8 - 8) // slot_bytes == inline
    images = memory_images(stores, words, config, edge_bits=edge_bits)
    present = {g: dict(zip(addr.tolist(), data.tolist())) for g, mem, addr, data in images.parts
               if mem == HostMem.EDGE_PRESENT}
    assert len(images.images) == 2 and all(image.size % (word_bits // 8) == 0 for image in images.images)
    checked, inline_only, spilled = 0, 0, 0
    for g, store in enumerate(stores):
        for entry, got, head, _ in _lists(images, g, store, word_bits // 8, slot_bytes, pes=2):
            assert got == [int(w) for w in words[g][store.start[entry]:store.start[entry] + store.length[entry]]]
            inline_only += head == store.length[entry]
            spilled += head < store.length[entry]
            assert present[g][entry // 32] >> (entry % 32) & 1
            checked += 1
        empty = np.flatnonzero(store.length == 0)
        assert not any(present[g].get(e // 32, 0) >> (e % 32) & 1 for e in empty)
    assert checked > 30 and spilled and (inline_only or not inline)
    from gravfm.flow.memory import image_bytes
    assert list(image_bytes(stores, config)) == images.bytes_per_fpga   # the plan's check sees the real size


@pytest.mark.parametrize("arch, channels", [("gravfm", 2), ("gravfm", 3), ("hybrid", 4), ("gravfm", 8)])
def test_memory_image_split_per_channel_keeps_each_pe_in_its_channel(arch, channels):
    """PE i of an FPGA (of 3 or 4) lives in channel i % channels: its index and every list word in
    that channel's range (several PEs one after another when they share one), every list read
    back; the image holds the channels with PEs, each padded to the range."""
    from gravfm.sim.memory_params import MemoryParams

    pes = 4 if arch == "hybrid" else 3   # the hybrid needs a power of two
    stores, words, config, edge_bits, slot_bytes = _image_case(arch, "sssp", 128, pes=pes)
    images = memory_images(stores, words, config, edge_bits=edge_bits, channels=channels)
    one = memory_images(stores, words, config, edge_bits=edge_bits)
    size = images.channel_bytes
    params = MemoryParams(channels=channels, channel_bytes=size)
    assert images.channels == channels and size % 16 == 0
    assert all(image.size == min(pes, channels) * size for image in images.images)
    assert 0 < max(image.size for image in one.images) <= min(pes, channels) * size   # all of it, and
    assert size <= max(image.size for image in one.images)                           # no more
    for g, store in enumerate(stores):
        channel = (g % pes) % channels
        lists = list(_lists(images, g, store, 16, slot_bytes, pes=pes))
        spans = [span for *_, entry_spans in lists for span in entry_spans]
        assert spans and all(params.channel_of(a) == params.channel_of(a + n - 1) == channel for a, n in spans)
        assert [got for _, got, *_ in lists] == [got for _, got, *_ in _lists(one, g, store, 16, slot_bytes, pes=pes)]
    from gravfm.flow.memory import image_bytes
    assert list(image_bytes(stores, config, channels)) == images.bytes_per_fpga   # the plan's check sees it


def _image_case(arch, algorithm, word_bits, *, pes):
    """Stores, edge words, config, edge bits and slot bytes of a skewed graph on 2 x ``pes`` PEs
    (vertices 30-39: one edge each: lists inline only and spilling over)."""
    from gravfm.algorithms import get_algorithm
    from gravfm.graph import Graph
    from gravfm.hw import SystemConfig
    from gravfm.hw.arch import architecture
    from gravfm.model.offchip_layout import edge_slot_bits
    from gravfm.partition import edge_stores, partition

    rng = np.random.default_rng(3)
    sources = np.concatenate([(rng.random(700) ** 3 * 30).astype(int), np.arange(30, 40)])
    graph = Graph.from_edges(sources, rng.integers(0, 40, sources.size), num_vertices=40)
    parts = partition(graph, 2, pes, "greedy")
    config = SystemConfig.of(get_algorithm(algorithm), arch=arch, fpgas=2, pes_per_fpga=pes,
                             local_bits=parts.min_local_bits, edges_per_pe=64, edge_memory="offchip",
                             memory_word_bits=word_bits)
    stores = edge_stores(graph, parts, config.pe.local_bits, layout=arch)
    edge_bits = architecture(arch).layouts(config.algorithm, config).edge_word.size
    words = [(store.destination.astype(np.uint64) * 3 + 1) % (1 << edge_bits) for store in stores]
    return stores, words, config, edge_bits, edge_slot_bits(edge_bits) // 8


def _bases(images, g):
    from gravfm.hw.protocol import HostMem, PeRegister

    bases = {int(a): int(d) for pe, mem, addr, data in images.parts if pe == g and mem == HostMem.REGISTERS
             for a, d in zip(addr, data)}
    return bases[PeRegister.INDEX_BASE], bases[PeRegister.EDGE_BASE]


def _lists(images, g, store, word_bytes, slot_bytes, *, pes):
    """``(entry, edge words, inline edges, spans read)`` of each of PE ``g``'s lists, read from
    its FPGA's image (``pes`` PEs per FPGA)."""
    image = images.images[g // pes]
    index_base, edge_base = _bases(images, g)
    for entry in np.flatnonzero(store.length):
        yield (entry, *_read_list(image, index_base, edge_base, entry, word_bytes, slot_bytes))
