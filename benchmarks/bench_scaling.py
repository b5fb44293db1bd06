"""Scaling study of GraVF-M over 1..4 FPGAs (the paper's Fig. 7), measured beside the model.

For each algorithm (WCC, BFS), graph (uniform, RMAT) and FPGA count, this builds the system
(Verilator, cached), runs it on the compiled simulator with the platform's inter-FPGA links
(``LinkConfig.from_platform``: bandwidth per link, 128-bit words, latency), verifies the answer
and the message count against the software reference, and records:

* measured MTEPS at the platform clock, beside the model's limits (L_PE, L_if, L_net) and
  T_sys for the same configuration. The simulated PEs keep their edges on chip, so the model
  is evaluated for the platform with on-chip edge storage (no L_mem); it is also evaluated at
  the CPE measured on one FPGA, so the gap due to the network is visible apart from the PE's;
* measured inter-FPGA bytes per traversed edge (all links' bits / 8 / messages) beside the
  theory m_update (n-1) |V| / |E| (every update to every other FPGA, no filter), with
  m_update the hardware's item width (sender id + update payload).

Only the GraVF-M architecture is built (the GraVF baseline is not implemented yet).

Usage::

    python benchmarks/bench_scaling.py --scale 12 --pes 4 --json scaling.json --png scaling.png
"""

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from gravfm.algorithms import get_algorithm
from gravfm.graph import load_graph
from gravfm.hw import SystemConfig
from gravfm.hw.counters import COUNTER_NAMES
from gravfm.hw.multi import LinkConfig, build_system
from gravfm.hw.multi.system import LINK_COUNTERS_MEM
from gravfm.model import load_platform
from gravfm.model.algorithm_params import params_from_layouts
from gravfm.model.predict import predict
from gravfm.partition import gravfm_edge_stores, partition
from gravfm.run import next_power_of_two
from gravfm.sim.loader import HostMem, build_load
from gravfm.sim.verilator import HostWrites, ReadRegion, WatchItem, build_simulator, run_simulator


def graphs(scale, edge_factor, seed):
    """The two graphs of the study, by name."""
    return {
        "uniform": f"uniform:n={1 << scale},deg={edge_factor},seed={seed}",
        "rmat": f"rmat:scale={scale},ef={edge_factor},seed={seed}",
    }


def capacities(prepared_graphs, fpgas, pes):
    """(local_bits, edges_per_pe) that fit every graph: one build serves them all."""
    bits, edges = 1, 1
    for graph in prepared_graphs:
        parts = partition(graph, fpgas, pes, method="greedy")
        bits = max(bits, parts.min_local_bits)
    for graph in prepared_graphs:
        parts = partition(graph, fpgas, pes, method="greedy")
        stores = gravfm_edge_stores(graph, parts, bits)
        edges = max(edges, int(stores.edges_per_pe.max()))
    return bits, next_power_of_two(edges)


def simulate(system, plan, *, cache_dir, log):
    """Build (cached) and run; return (outcome, state, messages, link bits per FPGA)."""
    config = system.config
    n, p, pes = config.fpgas, config.pes_per_fpga, config.total_pes
    build = build_simulator(system, cache_dir=cache_dir, log=log)
    writes = HostWrites.from_values(plan.pe, plan.mem, plan.addr, plan.data,
                                    data_bits=build.interface.data_bits)
    reads = [ReadRegion(f"state{g}", g, HostMem.VERTEX, 0, int(plan.num_local[g])) for g in range(pes)]
    if n > 1:
        reads += [ReadRegion(f"links{a}", a * p, LINK_COUNTERS_MEM, 0, 3 * (n - 1)) for a in range(n)]
    watch = [WatchItem(f"pe{g}.{name}", g, HostMem.COUNTERS, COUNTER_NAMES.index(name),
                       progress=name in ("messages", "updates", "supersteps"))
             for g in range(pes) for name in ("messages", "updates", "supersteps")]
    outcome = run_simulator(build, writes, reads=reads, watch=watch, watchdog_cycles=1 << 20)
    mask = (1 << system.layouts.vertex.size) - 1
    state = plan.decode_states([[int(w) & mask for w in outcome.reads[f"state{g}"]] for g in range(pes)])
    messages = sum(int(outcome.watch[f"pe{g}.messages"]) for g in range(pes))
    link = np.zeros((n, max(n - 1, 0), 3), dtype=np.int64)
    for a in range(n if n > 1 else 0):
        link[a] = np.asarray(outcome.reads[f"links{a}"], dtype=np.int64).reshape(n - 1, 3)
    return build, outcome, state, messages, link


def run_point(algorithm, graph, params, reference, platform, onchip, fpgas, pes, capacity, *,
              cache_dir, log):
    """One measured configuration, as a JSON-ready dict."""
    local_bits, edges_per_pe = capacity
    parts = partition(graph, fpgas, pes, method="greedy")
    rounds = max(64, next_power_of_two(reference.supersteps))
    config = SystemConfig(algorithm=algorithm, fpgas=fpgas, pes_per_fpga=pes, local_bits=local_bits,
                          edges_per_pe=edges_per_pe, max_rounds=rounds)
    link = LinkConfig.from_platform(platform, fpgas)
    system = build_system(config, platform=platform)
    plan = build_load(algorithm, graph, parts, config, params, data_bits=len(system.host_wr_data))
    build, outcome, state, messages, links = simulate(system, plan, cache_dir=cache_dir, log=log)
    ok, detail = algorithm.check(graph, params, state, reference) if outcome.status == "done" \
        else (False, outcome.status)
    if ok and messages != reference.total_messages:
        ok, detail = False, f"{messages} messages, reference {reference.total_messages}"
    f_clk = platform.fpga.f_clk_hz
    mteps = messages / (outcome.cycles / f_clk) / 1e6
    vid = config.vertexid_bits
    model_params = params_from_layouts(algorithm.name, vertex=algorithm.vertex, update=algorithm.update,
                                       message=algorithm.message, edge=algorithm.edge, vertexid_bits=vid)
    item_bits = model_params.m_update
    prediction = predict(onchip, model_params, graph.num_vertices, graph.num_edges, fpgas=fpgas, pes=pes)
    gravf = predict(onchip, model_params, graph.num_vertices, graph.num_edges, fpgas=fpgas, pes=pes,
                    arch="gravf")
    link_bits = int(links[:, :, 1].sum()) if fpgas > 1 else 0
    theory = item_bits / 8 * (fpgas - 1) * graph.num_vertices / max(graph.num_edges, 1)
    return {
        "fpgas": fpgas, "pes_per_fpga": pes, "verified": bool(ok), "detail": detail,
        "status": outcome.status, "cycles": int(outcome.cycles), "messages": messages,
        "supersteps": reference.supersteps, "mteps": mteps,
        "cpe": outcome.cycles * fpgas * pes / max(messages, 1),
        "model": {"t_sys_mteps": prediction.t_sys / 1e6, "bottleneck": prediction.bottleneck,
                  "limits_mteps": {k: v / 1e6 for k, v in prediction.limits.items()},
                  "cpe": prediction.cpe},
        "measured_over_model": mteps / (prediction.t_sys / 1e6),
        # The GraVF baseline is not built yet: only the model's figure for it.
        "model_gravf": {"t_sys_mteps": gravf.t_sys / 1e6, "bottleneck": gravf.bottleneck,
                        "limits_mteps": {k: v / 1e6 for k, v in gravf.limits.items()}},
        "link": {"bits_per_cycle": link.bits_per_cycle, "latency_cycles": link.latency_cycles,
                 "items": int(links[:, :, 0].sum()) if fpgas > 1 else 0, "bits": link_bits,
                 "words": int(sum(-(-int(b) // link.word_bits) for b in links[:, :, 1].ravel())),
                 "link_bound_cycles": int(links[:, :, 2].sum()) if fpgas > 1 else 0},
        "bytes_per_edge": link_bits / 8 / max(messages, 1),
        "bytes_per_edge_theory": theory,
        "item_bits": item_bits,
        "build_s": build.build_s, "build_cached": build.cached, "run_s": outcome.run_s,
    }


def scaled_network(platform, factor):
    """``platform`` with its FPGA-to-FPGA bandwidths multiplied by ``factor``."""
    if factor == 1.0:
        return platform
    network = platform.network
    network = dataclasses.replace(
        network, send_gib_s_by_peers=tuple(v * factor for v in network.send_gib_s_by_peers),
        receive_gib_s_by_peers=tuple(v * factor for v in network.receive_gib_s_by_peers),
        total_bandwidth_gib_s=network.total_bandwidth_gib_s * factor)
    return dataclasses.replace(platform, network=network)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=12, help="log2 of the vertex count (default 12)")
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pes", type=int, default=4, help="PEs per FPGA (the paper: 9)")
    parser.add_argument("--fpgas", default="1,2,3,4")
    parser.add_argument("--algorithms", default="wcc,bfs")
    parser.add_argument("--graphs", default="uniform,rmat")
    parser.add_argument("--platform", default="ac510x4")
    parser.add_argument("--bandwidth-scale", type=float, default=1.0,
                        help="multiply the platform's inter-FPGA bandwidths (links and model) by this, "
                             "to reach the network-bound regime on small graphs (default 1)")
    parser.add_argument("--cache", default=None, help="Verilator build cache folder")
    parser.add_argument("--json", default=None)
    parser.add_argument("--png", default=None)
    args = parser.parse_args(argv)

    def log(message):
        print(f"  {message}", file=sys.stderr, flush=True)

    platform = scaled_network(load_platform(args.platform), args.bandwidth_scale)
    onchip = dataclasses.replace(platform, memory=dataclasses.replace(platform.memory, edge_storage="onchip"))
    fpga_counts = [int(v) for v in args.fpgas.split(",")]
    specs = {name: spec for name, spec in graphs(args.scale, args.edge_factor, args.seed).items()
             if name in args.graphs.split(",")}
    results = []
    for algorithm_name in args.algorithms.split(","):
        algorithm = get_algorithm(algorithm_name)
        loaded = {name: load_graph(spec) for name, spec in specs.items()}
        # BFS starts at the vertex of highest out-degree (vertex 0 of an RMAT graph may be isolated).
        roots = {name: {"root": int(np.argmax(g.out_degree()))} if "root" in algorithm.default_params else {}
                 for name, g in loaded.items()}
        params_of = {name: algorithm.params(roots[name]) for name in loaded}
        prepared = {name: algorithm.prepare(g, params_of[name]) for name, g in loaded.items()}
        references = {name: algorithm.reference(g, params_of[name]) for name, g in prepared.items()}
        for fpgas in fpga_counts:
            capacity = capacities(prepared.values(), fpgas, args.pes)
            for name, graph in prepared.items():
                started = time.perf_counter()
                point = run_point(algorithm, graph, params_of[name], references[name], platform, onchip, fpgas,
                                  args.pes, capacity, cache_dir=args.cache, log=log)
                point.update(algorithm=algorithm.name, graph=name, spec=specs[name], params=params_of[name],
                             vertices=graph.num_vertices, edges=graph.num_edges, arch="gravfm",
                             wall_s=time.perf_counter() - started)
                results.append(point)
                print(f"{algorithm.name:4} {name:8} {fpgas} FPGA x {args.pes} PEs: "
                      f"{'ok' if point['verified'] else 'FAILED ' + point['detail']}  "
                      f"{point['mteps']:8.1f} MTEPS (model {point['model']['t_sys_mteps']:.1f}, "
                      f"{point['model']['bottleneck']})  {point['bytes_per_edge']:.3f} B/edge "
                      f"(theory {point['bytes_per_edge_theory']:.3f})  {point['cycles']} cycles",
                      flush=True)
    document = {"benchmark": "scaling", "platform": platform.name,
                "model_platform": "platform with on-chip edge storage (as simulated)",
                "bandwidth_scale": args.bandwidth_scale, "scale": args.scale, "edge_factor": args.edge_factor, "seed": args.seed,
                "pes_per_fpga": args.pes, "results": results}
    if args.json:
        Path(args.json).write_text(json.dumps(document, indent=2))
    if args.png:
        plot(document, args.png)
    return 0 if all(point["verified"] for point in results) else 1


def plot(document, path):
    """Measured MTEPS (points) and the model's T_sys (lines) per FPGA count, one panel per graph."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({p["graph"] for p in document["results"]})
    figure, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for axis, name in zip(axes[0], names):
        for algorithm in sorted({p["algorithm"] for p in document["results"]}):
            points = [p for p in document["results"] if p["graph"] == name and p["algorithm"] == algorithm]
            fpgas = [p["fpgas"] for p in points]
            line, = axis.plot(fpgas, [p["mteps"] for p in points], "o-", label=f"{algorithm} measured")
            axis.plot(fpgas, [p["model"]["t_sys_mteps"] for p in points], "--", color=line.get_color(),
                      label=f"{algorithm} model T_sys")
        links = "" if document.get("bandwidth_scale", 1.0) == 1.0 else f", links x{document['bandwidth_scale']:g}"
        axis.set_title(f"{name} (scale {document['scale']}, {document['pes_per_fpga']} PEs/FPGA{links})")
        axis.set_xlabel("FPGAs")
        axis.set_ylabel("MTEPS")
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
