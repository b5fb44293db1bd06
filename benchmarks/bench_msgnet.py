"""Resources of the multistage message network beside GraVF's crossbar, and its throughput.

Yosys counts (no place-and-route) of :class:`gravfm.hw.network.multistage.MultistageNetwork`
(radix 4, crosspoint FIFOs of depth 4: the defaults) and of GraVF's crossbar
(:class:`gravfm.hw.gravf.GravfNetwork` on one FPGA, FIFO depth 4), carrying WCC's
``net_message`` for 16k vertices per PE (90-96 bits).

Yosys takes too long on whole networks of 16 PEs and more (the multistage network of 16 PEs
did not finish within 10 minutes for ``xcu`` on this 2-core machine), so the figures are
*composed*: each distinct block is synthesised on its own (behind the synthesis wrapper, whose
XOR-tree LUTs and flip-flops are taken off) and counted as often as the network holds it. The
blocks meet at registers, so little is lost to the composition; ``--whole`` synthesises whole
networks too (time limit --timeout each, ``status: "timeout"`` past it) to show how close the
composed figures come. A block that does not synthesise (the crossbar's endpoint of 64 sources
overflows the stack of Yosys's WebAssembly build) leaves a lower bound, its name in ``missing``.

- multistage: ``p`` entry skid buffers, and per stage ``p / radix`` switches (the last
  stage's with the destinations' termination);
- crossbar: ``p`` routers (:class:`~gravfm.hw.gravf.MessageRouter`), ``p * p`` FIFOs, ``p``
  endpoints of ``p`` sources. A router's outputs carry ``p`` copies of one payload, which cancel
  in the wrapper's XOR tree: its figures are a lower bound (a router is about 1% of a crossbar).

The throughput figures come from a cycle-level model of the network (``throughput_model``:
the same stages, FIFO depths and registered ``ready`` s, not the RTL): every source always
has a message, the destinations of each cycle's messages a random permutation (every
destination offered one message per cycle) or drawn independently (uniform: a destination
sometimes offered several), every destination always ready; messages delivered per port per
cycle after a warm-up. The RTL's own figure at 8 PEs is measured by
tests/test_hw_multistage.py (0.87 at radix 4).

    .venv/bin/python benchmarks/bench_msgnet.py [--pes 16 64] [--targets xcu ecp5-85]
        [--whole multistage:16 crossbar:16] [--whole-targets ecp5-85] [--timeout 600] [--json FILE]
"""

import argparse
import json
import random
import sys
import tempfile
from collections import deque

from bench_synth import run_limited   # benchmarks/ is on sys.path when a benchmark runs
from gravfm.provenance import arguments, write_results

LOCAL_BITS = 14                 # 16k vertices per PE
EDGES_PER_PE = 1 << 17
DEPTH = 4                       # crosspoint FIFOs and the crossbar's FIFOs
TRAFFIC = ("permutation", "uniform")


def layout_of(pes):
    """WCC's ``net_message`` for ``pes`` PEs."""
    from gravfm.algorithms import get_algorithm   # deferred: Amaranth only where a design is built
    from gravfm.hw.config import SystemConfig
    from gravfm.hw.gravf import GravfLayouts

    wcc = get_algorithm("wcc")
    config = SystemConfig.of(wcc, arch="gravf", pes_per_fpga=pes, local_bits=LOCAL_BITS, edges_per_pe=EDGES_PER_PE)
    return GravfLayouts(wcc, config).net_message


def composition(kind, pes):
    """``{block name: how many}`` of the network ``kind`` ("multistage" or "crossbar")."""
    from gravfm.hw.network.multistage import stage_radices   # deferred: Amaranth

    if kind == "crossbar":
        return {f"router:{pes}": pes, "fifo": pes * pes, f"endpoint:{pes}": pes}
    blocks = {"entry": pes}
    radices = stage_radices(pes, radix=4, crossbar_max=4)
    for j, radix in enumerate(radices):
        name = f"switch:{radix}:{int(j == len(radices) - 1)}"
        blocks[name] = blocks.get(name, 0) + pes // radix
    return blocks


def build(name, pes):
    """The design ``name`` for a network of ``pes`` PEs: a block of :func:`composition`, or a
    whole network ("multistage" or "crossbar")."""
    from gravfm.hw.gravf import GravfNetwork, MessageRouter   # deferred: Amaranth
    from gravfm.hw.network import Endpoint, MultistageNetwork, RoundSwitch
    from gravfm.hw.skid_buffer import SkidBuffer
    from gravfm.hw.stream_fifo import StreamFIFO

    layout = layout_of(pes)
    kind, *values = name.split(":")
    if kind == "multistage":
        return MultistageNetwork(layout=layout, pes=pes, local_bits=LOCAL_BITS, depth=DEPTH)
    if kind == "crossbar":
        return GravfNetwork(layout=layout, pes=pes, local_bits=LOCAL_BITS, fifo_depth=DEPTH)
    if kind == "entry":
        return SkidBuffer(shape=layout)
    if kind == "switch":
        return RoundSwitch(layout=layout, radix=int(values[0]), depth=DEPTH, low_bit=LOCAL_BITS,
                           final=bool(int(values[1])))
    if kind == "fifo":   # as build_crossbar makes them
        return StreamFIFO(shape=layout, depth=DEPTH, ram_style="distributed", bypass=True)
    if kind == "router":
        return MessageRouter(layout=layout, local_bits=LOCAL_BITS, pes=pes)
    return Endpoint(layout=layout, sources=pes, count_bits=layout.members["count"].width)


def synth_child(name, pes, target, workdir):
    """Synthesise one design (in the child process); print its figures, wrapper taken off, as JSON."""
    from gravfm.hw.unused import silence_unused   # deferred: Amaranth
    from gravfm.synth.report import synthesize
    from gravfm.synth.wrapper import PinLimitedWrapper

    design = build(name, pes)
    # The wrapper's XOR tree: a LUT per node (its flip-flops synthesize() takes off already).
    wrapper = PinLimitedWrapper(design)
    silence_unused(wrapper)   # only counted: synthesize() wraps the design itself
    xor_luts = wrapper.added_flip_flops - wrapper.input_bits - 1
    result = synthesize(design, target=target, workdir=workdir, place_and_route=False)
    print(json.dumps({"luts": result.luts - xor_luts, "flip_flops": result.flip_flops,
                      "bram_blocks": result.bram_blocks, "seconds": result.seconds}))


def synth_row(name, pes, target, timeout):
    """One design in a child process with a time limit; its row."""
    row = {"design": name, "pes": pes, "target": target}
    with tempfile.TemporaryDirectory(prefix="bench-msgnet-") as workdir:
        command = [sys.executable, __file__, "--child", name, str(pes), target, workdir]
        returncode, output, seconds = run_limited(command, timeout)
    if returncode is None:
        return row | {"status": "timeout", "seconds": seconds, "note": f"did not finish within {timeout} s"}
    if returncode != 0:
        return row | {"status": "failed", "seconds": seconds, "error": output.strip().splitlines()[-6:]}
    return row | {"status": "ok"} | json.loads(output.strip().splitlines()[-1])


def composed_rows(kinds, pes_list, target, timeout, blocks):
    """Composed figures of each network of ``kinds`` at each of ``pes_list`` on ``target``;
    ``blocks`` caches the block rows (appended to, keyed by (block, pes, target)). A block that
    does not synthesise is named in ``missing``, and the figures are then a lower bound."""
    rows = []
    for kind in kinds:
        for pes in pes_list:
            total, missing = {"luts": 0, "flip_flops": 0, "bram_blocks": 0}, []
            parts = composition(kind, pes)
            for block, count in parts.items():
                key = (block, pes, target)   # the message width grows with the PEs
                if key not in blocks:
                    blocks[key] = synth_row(block, pes, target, timeout)
                    print(blocks[key], file=sys.stderr, flush=True)
                if blocks[key]["status"] != "ok":
                    missing.append(block)
                    continue
                for field in total:
                    total[field] += count * blocks[key][field]
            rows.append({"network": kind, "pes": pes, "target": target, "composed_of": parts, **total,
                         **({"missing": missing, "lower_bound": True} if missing else {})})
    return rows


def throughput_model(pes, *, traffic, radix=4, depth=4, crossbar_max=4, cycles=3000, seed=1):
    """Messages per port per cycle of the network's cycle-level model (see the module doc).

    ``traffic``: "permutation" (each cycle's new messages go to a random permutation of the
    destinations) or "uniform" (each to a destination drawn independently).

    A link is a two-entry registered buffer (entry and output skid buffers), a crosspoint a FIFO
    of ``depth``; an item moves at most one buffer per cycle, into a buffer that had room at the
    start of the cycle; each output takes one crosspoint head per cycle, round robin.
    """
    from gravfm.hw.network.multistage import stage_radices, switch_positions   # deferred: Amaranth

    rng = random.Random(seed)
    radices = stage_radices(pes, radix=radix, crossbar_max=crossbar_max)
    weights = [1] * len(radices)
    for j in range(len(radices) - 2, -1, -1):
        weights[j] = weights[j + 1] * radices[j + 1]
    links = [[deque() for _ in range(pes)] for _ in range(len(radices) + 1)]
    cross = [[[deque() for _ in range(r)] for _ in range(pes)] for r in radices]
    last = [[0] * pes for _ in radices]
    delivered = 0
    for cycle in range(cycles):
        room = [[len(q) < 2 for q in stage] for stage in links]
        for d in range(pes):
            if links[-1][d]:
                links[-1][d].popleft()
                delivered += cycle >= cycles // 3
        for j in reversed(range(len(radices))):
            r, w = radices[j], weights[j]
            for switch in switch_positions(pes, radices, j):
                for t, out in enumerate(switch):
                    heads = [i for i in range(r) if cross[j][switch[i]][t]]
                    if room[j + 1][out] and heads:
                        pick = min(heads, key=lambda i: (i - last[j][out] - 1) % r)
                        last[j][out] = pick
                        links[j + 1][out].append(cross[j][switch[pick]][t].popleft())
                for x in switch:
                    if links[j][x]:
                        crosspoint = cross[j][x][(links[j][x][0] // w) % r]
                        if len(crosspoint) < depth:
                            crosspoint.append(links[j][x].popleft())
        slot = rng.sample(range(pes), pes) if traffic == "permutation" else [rng.randrange(pes) for _ in range(pes)]
        for s in range(pes):
            if room[0][s]:
                links[0][s].append(slot[s])
    return round(delivered / pes / (cycles - cycles // 3), 3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pes", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--targets", nargs="+", default=["xcu", "ecp5-85"])
    parser.add_argument("--whole", nargs="*", default=["multistage:16", "crossbar:16"],
                        help="whole networks to synthesise too, as KIND:PES")
    parser.add_argument("--whole-targets", nargs="+", default=["ecp5-85"])
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    blocks, composed, whole = {}, [], []
    for target in args.targets:
        composed += composed_rows(("multistage", "crossbar"), args.pes, target, args.timeout, blocks)
    for target in args.whole_targets:
        for item in args.whole:
            kind, pes = item.split(":")
            whole.append(synth_row(kind, int(pes), target, args.timeout))
            print(whole[-1], file=sys.stderr, flush=True)
    model = [{"pes": p, "radix": r, "depth": d, "traffic": traffic,
              "messages_per_port_per_cycle": throughput_model(p, traffic=traffic, radix=r, depth=d)}
             for p in sorted(set(args.pes) | {8}) for r in (2, 4) for d in (2, 4) for traffic in TRAFFIC]
    write_results({"benchmark": "msgnet", "arguments": arguments(args), "local_bits": LOCAL_BITS,
                   "composed": composed, "whole": whole, "blocks": list(blocks.values()),
                   "throughput_model": model}, args.json)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        name, pes, target, workdir = sys.argv[2:6]
        synth_child(name, int(pes), target, workdir)
    else:
        main()
