"""Memory-bound systems: measured MTEPS beside the model's L_mem (issue: off-chip edge memory, item 5).

For 1 and 4 FPGAs x 9 PEs, uniform and RMAT graphs of several edge factors, PageRank (every
vertex active in every superstep but the last, so one superstep's memory traffic is the whole
layout) runs with its edges off chip on the compiled simulator, with the memory bandwidth lowered
until memory is the bound: ``--memory-fraction`` of the bandwidth at which the layout's traffic
would just feed every PE at the platform's CPE. Recorded per point:

* **measured** (simulation): cycles, messages, MTEPS at the platform clock, the memory words and
  GiB/s the PEs drew, cycles they waited on memory;
* **model** (predictions): L_PE; the paper's L_mem with access granularity (SPEC §5, worst case:
  each list's last word holds one edge); and L_mem of this implementation's layout: the words one
  all-active superstep reads (per non-empty list its index word and its list words, from the
  partition, :func:`gravfm.flow.memory.words_per_pass`) at the bandwidth given. ``ratio`` is
  measured / that L_mem.

The JSON is rewritten after every point (an interrupted run keeps what it measured) with the git
revision; the PNG plots measured points and both L_mem lines against the edge factor.

Usage::

    python benchmarks/bench_memory_bound.py --scale 13 --json benchmarks/results/bench_memory_bound.json \\
        --png benchmarks/results/bench_memory_bound.png
"""

import argparse
import time
from pathlib import Path

from gravfm.algorithms import make_pagerank
from gravfm.flow import RunOptions, run
from gravfm.flow.memory import memory_hardware, platform_for_run, words_per_pass
from gravfm.flow.planning import plan
from gravfm.flow.preparation import prepare
from gravfm.hw.arch import architecture
from gravfm.model import load_platform
from gravfm.model.limits import memory_limit_granular
from gravfm.provenance import arguments, write_results
from gravfm.sim.memory_image import slot_bits_of

PAGERANK = make_pagerank(supersteps=5, name="pagerank5")
SPECS = {"uniform": "uniform:n={n},deg={d},seed=1", "rmat": "rmat:scale={scale},ef={d},seed=1"}


def layout_point(prepared, platform, fpgas, pes):
    """The plan's configuration and the words one all-active superstep reads per FPGA."""
    from gravfm.partition import edge_stores

    hardware = plan(prepared, fpgas=fpgas, pes=pes, edge_memory=memory_hardware(platform))
    stores = edge_stores(prepared.graph, hardware.partition, hardware.config.pe.local_bits,
                         layout=hardware.config.arch)
    return hardware, words_per_pass(stores, hardware.config)


def measure(args, platform, kind, degree, fpgas, log):
    spec = SPECS[kind].format(n=1 << args.scale, d=degree, scale=args.scale)
    prepared = prepare(PAGERANK, spec)
    graph = prepared.graph
    hardware, words = layout_point(prepared, platform, fpgas, args.pes)
    f_clk, (cpe, _) = platform.fpga.f_clk_hz, platform.cpe_for("pagerank")
    l_pe = fpgas * args.pes * f_clk / cpe
    edges_per_pass = graph.num_edges                      # every vertex sends on every out-edge
    bytes_per_edge = max(words) * fpgas * 16 / edges_per_pass   # the busiest FPGA sets the pace
    bandwidth = args.memory_fraction * (l_pe / fpgas) * bytes_per_edge / 2 ** 30   # GiB/s per FPGA
    report = run(RunOptions(algorithm=PAGERANK, graph=spec, fpgas=fpgas, pes=args.pes, cache_dir=args.cache,
                            edge_memory="offchip", memory={"bandwidth_gib_s": bandwidth},
                            edges_per_pe=args.edges_per_list), log=log)
    bandwidth_bits = bandwidth * 2 ** 30 * 8
    l_mem_layout = fpgas * bandwidth_bits / (bytes_per_edge * 8)
    config = hardware.config
    m_edge = slot_bits_of(architecture(config.arch).layouts(config.algorithm, config).edge_word.size)
    l_mem_paper = memory_limit_granular(fpgas, args.pes, bandwidth_bits, m_edge, 128,
                                        graph.num_edges / graph.num_vertices)
    return {
        "graph": {"kind": kind, "spec": spec, "vertices": graph.num_vertices, "edges": graph.num_edges,
                  "degree": degree},
        "fpgas": fpgas, "pes_per_fpga": args.pes, "bandwidth_gib_s_per_fpga": bandwidth,
        "measured": {"kind": "measured (Verilator simulation)", "verified": report.verified,
                     "status": report.status, "cycles": report.cycles, "messages": report.messages,
                     "mteps": report.mteps, "memory": report.memory},
        "model": {"kind": "prediction", "l_pe_mteps": l_pe / 1e6,
                  "l_mem_layout_mteps": l_mem_layout / 1e6, "l_mem_paper_worst_case_mteps": l_mem_paper / 1e6,
                  "words_per_pass_per_fpga": list(words), "bytes_per_edge_layout": bytes_per_edge},
        "ratio_measured_over_l_mem_layout": report.mteps / (l_mem_layout / 1e6),
        "sim": {"build_s": report.build_s, "build_cached": report.build_cached, "run_s": report.run_s},
    }


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(p["fpgas"], p["graph"]["kind"]) for p in results})
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for axis, (fpgas, kind) in zip(axes[0], panels):
        points = sorted((p for p in results if p["fpgas"] == fpgas and p["graph"]["kind"] == kind),
                        key=lambda p: p["graph"]["degree"])
        degrees = [p["graph"]["degree"] for p in points]
        axis.plot(degrees, [p["model"]["l_mem_layout_mteps"] for p in points], "-", label="L_mem, this layout (model)")
        axis.plot(degrees, [p["model"]["l_mem_paper_worst_case_mteps"] for p in points], "--",
                  label="L_mem, paper worst case (model)")
        axis.plot(degrees, [p["measured"]["mteps"] for p in points], "o", label="measured (simulated)")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("edge factor |E|/|V|")
        axis.set_ylabel("MTEPS")
        axis.set_title(f"{fpgas} FPGA x {points[0]['pes_per_fpga']} PEs, {kind}")
        axis.set_ylim(bottom=0)
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=13, help="log2 vertices (default 13)")
    parser.add_argument("--edge-factors", default="2,8,32")
    parser.add_argument("--fpgas", default="1,4")
    parser.add_argument("--graphs", default="uniform,rmat")
    parser.add_argument("--pes", type=int, default=9)
    parser.add_argument("--memory-fraction", type=float, default=0.3,
                        help="bandwidth as a fraction of what would feed every PE (default 0.3)")
    parser.add_argument("--edges-per-list", type=int, default=1 << 16,
                        help="longest edge list a build holds (one build serves every graph)")
    parser.add_argument("--platform", default="ac510x4")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None)
    args = parser.parse_args()
    platform = platform_for_run(load_platform(args.platform), "offchip")
    results = []
    started = time.time()
    for fpgas in (int(x) for x in args.fpgas.split(",")):
        for kind in args.graphs.split(","):
            for degree in (int(x) for x in args.edge_factors.split(",")):
                point = measure(args, platform, kind, degree, fpgas, log=lambda line: print("  " + line, flush=True))
                results.append(point)
                print(f"{fpgas} FPGA {kind} ef {degree}: measured {point['measured']['mteps']:.1f} MTEPS, "
                      f"L_mem(layout) {point['model']['l_mem_layout_mteps']:.1f}, ratio "
                      f"{point['ratio_measured_over_l_mem_layout']:.3f}", flush=True)
                if args.json:
                    write_results({"benchmark": "bench_memory_bound", "arguments": arguments(args),
                                   "wall_s": time.time() - started, "results": results}, args.json, stream=None)
    if args.png and results:
        plot(results, args.png)
    if not args.json:
        write_results({"benchmark": "bench_memory_bound", "arguments": arguments(args), "results": results})


if __name__ == "__main__":
    main()
