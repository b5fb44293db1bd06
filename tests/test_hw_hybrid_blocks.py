"""The hybrid's own blocks under Amaranth's simulator: the link updates' owner router and the update
endpoint that forwards a silent round instead of terminating."""

import random

import numpy as np

import pytest
from amaranth.hdl import unsigned
from amaranth.lib import data

from gravfm.hw.hybrid import OwnerRouter
from gravfm.hw.network import Endpoint
from conftest import run_dut, stream_source

LOCAL_BITS = 2
LAYOUT = data.StructLayout({"sender": unsigned(6), "update": unsigned(8), "barrier": 1, "count": unsigned(6),
                            "sent_any": 1})


def update(sender, value):
    return {"sender": sender, "update": value, "barrier": 0, "count": 0, "sent_any": 0}


def barrier(sent_any, count=0):
    return {"sender": 0, "update": 0, "barrier": 1, "count": count, "sent_any": sent_any}


def collector(port, received, items, *, seed):
    """A testbench taking ``items`` items from ``port`` (ready now and then) into ``received``."""
    rng = random.Random(seed)

    async def sink(ctx):
        while len(received) < items:
            ready = rng.random() < 0.7
            ctx.set(port.ready, ready)
            valid, payload = ctx.get(port.valid), ctx.get(port.payload)
            await ctx.tick()
            if ready and valid:
                received.append(payload)
        ctx.set(port.ready, 0)

    return sink


@pytest.mark.parametrize("pes", [1, 2, 4])
def test_owner_router_sends_each_update_to_its_owner_and_counts_it_on_the_barrier(pes):
    rng = random.Random(pes)
    rounds = [[update(rng.randrange(64), rng.randrange(256)) for _ in range(rng.randrange(0, 9))]
              for _ in range(3)]
    stream = []
    for r, items in enumerate(rounds):
        stream += items + [barrier(sent_any=r % 2)]
    dut = OwnerRouter(layout=LAYOUT, pes=pes, local_bits=LOCAL_BITS)
    owner = [lambda sender, d=d: (sender >> LOCAL_BITS) % pes == d for d in range(pes)]
    expected = []
    for d in range(pes):
        due = []
        for r, items in enumerate(rounds):
            mine = [(i["sender"], i["update"]) for i in items if owner[d](i["sender"])]
            due.append(mine + [("barrier", len(mine), r % 2)])
        expected.append(due)
    received = [[] for _ in range(pes)]
    sinks = [collector(dut.o[d], received[d], sum(len(due) for due in expected[d]), seed=d) for d in range(pes)]
    run_dut(dut, stream_source(dut.i, stream), *sinks)
    for d in range(pes):
        flat = [item for due in expected[d] for item in due]
        got = [("barrier", int(x.count), int(x.sent_any)) if x.barrier else (int(x.sender), int(x.update))
               for x in received[d]]
        assert got == flat, d


def run_endpoint(sources_items, *, forward_silent, cycles=60):
    """Feed each source's items into an endpoint; return what it delivered and whether it terminated."""
    dut = Endpoint(layout=LAYOUT, sources=len(sources_items), count_bits=6, forward_silent=forward_silent)
    received, state = [], {}

    async def sink(ctx):
        ctx.set(dut.o.ready, 1)
        for _ in range(cycles):
            valid, payload = ctx.get(dut.o.valid), ctx.get(dut.o.payload)
            await ctx.tick()
            if valid:
                received.append(payload)
        state["terminated"] = ctx.get(dut.terminated)

    run_dut(dut, *[stream_source(dut.i[s], items) for s, items in enumerate(sources_items)], sink)
    return [("barrier", int(x.sent_any)) if x.barrier else int(x.update) for x in received], state["terminated"]


def test_forwarding_endpoint_sends_the_silent_round_and_never_terminates():
    sources = [[update(1, 5), barrier(1, count=1), barrier(0)], [barrier(0), barrier(0)]]
    delivered, terminated = run_endpoint(sources, forward_silent=True)
    assert delivered == [5, ("barrier", 1), ("barrier", 0)] and not terminated
    # The default endpoint sends no barrier for the silent round: it terminates.
    delivered, terminated = run_endpoint(sources, forward_silent=False)
    assert delivered == [5, ("barrier", 0)] and terminated


@pytest.mark.parametrize("fpgas, pes", [(1, 4), (2, 2), (3, 2)])
def test_hybrid_edge_store_holds_every_edge_once_at_its_owner_on_its_destinations_fpga(fpgas, pes):
    from gravfm.partition import edge_stores, partition
    from conftest import random_graph

    graph = random_graph(40, 150, fpgas * 10 + pes)
    parts = partition(graph, fpgas, pes)
    local_bits = parts.min_local_bits
    stores = edge_stores(graph, parts, local_bits, layout="hybrid")
    hw = parts.hw_ids(local_bits)
    stored = []
    for g, store in enumerate(stores):
        for sender_hw in np.flatnonzero(store.length):
            sender = parts.vertex_of_hw_id(sender_hw, local_bits)
            assert parts.pe_of_vertex[sender] % pes == g % pes            # owned by this slot's local PE
            first = store.start[sender_hw]
            for dst_hw in store.destination[first:first + store.length[sender_hw]]:
                target = parts.vertex_of_hw_id(dst_hw, local_bits)
                assert parts.fpga_of_vertex[target] == g // pes           # a destination on this FPGA
                stored.append((int(sender), int(target)))
    expected = sorted(zip(graph.sources().tolist(), graph.targets.tolist()))
    assert sorted(stored) == expected and len(hw) == graph.num_vertices
