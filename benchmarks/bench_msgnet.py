"""Resources of the multistage message network beside GraVF's crossbar, and its throughput.

Yosys counts (no place-and-route) of :class:`gravfm.hw.network.multistage.MultistageNetwork`
(radix 4, crosspoint FIFOs of depth 4: the defaults) and of GraVF's crossbar
(:class:`gravfm.hw.gravf.GravfNetwork` on one FPGA, FIFO depth 4), each alone behind the
synthesis wrapper, carrying WCC's ``net_message`` for 16k vertices per PE (90-96 bits). Each
configuration runs in its own process with a time limit (--timeout); one that exceeds it is
recorded with ``status: "timeout"``.

The throughput figures come from a cycle-level model of the network (``throughput_model``:
the same stages, FIFO depths and registered ``ready`` s, not the RTL): every source always
has a message, the destinations of each cycle's messages a random permutation (every
destination offered one message per cycle) or drawn independently (uniform: a destination
sometimes offered several), every destination always ready; messages delivered per port per
cycle after a warm-up. The RTL's own figure at 8 PEs is measured by
tests/test_network_multistage.py (0.87 at radix 4).

    .venv/bin/python benchmarks/bench_msgnet.py [--pes 16 64] [--crossbar-pes 16 64] [--targets xcu ecp5-85]
        [--timeout 600] [--json FILE]
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
TRAFFIC = ("permutation", "uniform")


def build(kind, pes):
    """The network ``kind`` ("multistage" or "crossbar") for ``pes`` PEs."""
    from gravfm.algorithms import get_algorithm   # deferred: Amaranth only in the child process
    from gravfm.hw.config import SystemConfig
    from gravfm.hw.gravf import GravfLayouts, GravfNetwork
    from gravfm.hw.network.multistage import MultistageNetwork

    wcc = get_algorithm("wcc")
    config = SystemConfig.of(wcc, arch="gravf", pes_per_fpga=pes, local_bits=LOCAL_BITS, edges_per_pe=EDGES_PER_PE)
    layout = GravfLayouts(wcc, config).net_message
    if kind == "multistage":
        return MultistageNetwork(layout=layout, pes=pes, local_bits=LOCAL_BITS), layout.size
    return GravfNetwork(layout=layout, pes=pes, local_bits=LOCAL_BITS, fifo_depth=4), layout.size


def synth_child(kind, pes, target, workdir):
    """Synthesise one configuration (in the child process); print its figures as JSON."""
    from gravfm.synth.report import synthesize   # deferred: Amaranth only in the child process

    design, bits = build(kind, pes)
    result = synthesize(design, target=target, workdir=workdir, place_and_route=False)
    print(json.dumps({"luts": result.luts, "flip_flops": result.flip_flops, "bram_blocks": result.bram_blocks,
                      "message_bits": bits, "seconds": result.seconds}))


def synth_row(kind, pes, target, timeout):
    """One configuration in a child process with a time limit; its row."""
    row = {"network": kind, "pes": pes, "target": target}
    with tempfile.TemporaryDirectory(prefix="bench-msgnet-") as workdir:
        command = [sys.executable, __file__, "--child", kind, str(pes), target, workdir]
        returncode, output, seconds = run_limited(command, timeout)
    if returncode is None:
        return row | {"status": "timeout", "seconds": seconds, "note": f"did not finish within {timeout} s"}
    if returncode != 0:
        return row | {"status": "failed", "seconds": seconds, "error": output.strip().splitlines()[-6:]}
    return row | {"status": "ok"} | json.loads(output.strip().splitlines()[-1])


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
    parser.add_argument("--crossbar-pes", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--targets", nargs="+", default=["xcu", "ecp5-85"])
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    rows = []
    for target in args.targets:
        configs = [("multistage", p) for p in args.pes] + [("crossbar", p) for p in args.crossbar_pes]
        for kind, pes in configs:
            rows.append(synth_row(kind, pes, target, args.timeout))
            print(rows[-1], file=sys.stderr, flush=True)
    model = [{"pes": p, "radix": r, "depth": d, "traffic": traffic,
              "messages_per_port_per_cycle": throughput_model(p, traffic=traffic, radix=r, depth=d)}
             for p in sorted(set(args.pes) | {8}) for r in (2, 4) for d in (2, 4) for traffic in TRAFFIC]
    write_results({"benchmark": "msgnet", "arguments": arguments(args), "local_bits": LOCAL_BITS,
                   "synthesis": rows, "throughput_model": model}, args.json)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        kind, pes, target, workdir = sys.argv[2:6]
        synth_child(kind, int(pes), target, workdir)
    else:
        main()
