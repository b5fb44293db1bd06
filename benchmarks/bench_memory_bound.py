"""Memory-bound systems: measured MTEPS beside the model's L_mem (issue: off-chip edge memory, item 5).

For 1 and 4 FPGAs x 9 PEs, uniform and RMAT graphs of several edge factors, PageRank (every
vertex active in every superstep but the last, so one superstep's memory traffic is the whole
layout) runs with its edges off chip on the compiled simulator, with the memory bandwidth lowered
until memory is the bound: the bandwidth at which the layout's L_mem is ``--memory-fraction`` of
the smallest other limit, and lower still if one pass's reads would take fewer than
``--min-pass-cycles`` (a superstep also has a fixed latency, a memory round trip, the barrier,
that no bandwidth covers: L_mem bounds throughput only once the pass is long beside it). Those limits (predictions) are L_PE, the network's L_if and L_net
(several FPGAs), and L_flight, what the requests in flight can carry by Little's law: per FPGA
p R words per round trip (latency + 2 + jitter / 2 cycles, single-word requests: a lower bound,
bursts carry more), i.e. p R f / round trip words/s, in edges/s through the layout's words per edge.

Recorded per point:

* **measured** (simulation): cycles, messages, MTEPS at the platform clock over the whole run
  and over the **memory-bound supersteps** (those in which edges are traversed: all but the
  first, in which the initial apply produces the first updates), per superstep rows, the memory words and GiB/s the PEs drew;
* **model** (predictions): L_PE, L_flight, L_if/L_net; the paper's L_mem (equation (2)) and its
  worst case with access granularity (SPEC §5); and L_mem of this implementation's layout
  (:func:`gravfm.model.limits.memory_limit_layout`: per non-empty list its index word and its
  word-aligned list words, from the partition, :func:`gravfm.flow.memory.words_per_pass`),
  beside the estimate ``gravfm model`` makes of it from |V| and |E| alone (uniformly random
  destinations). ``ratio`` is measured / layout L_mem, for the memory-bound supersteps (the
  issue's bar: within 5%) and for the whole run (which adds start-up and the final superstep).

The JSON is rewritten after every point (an interrupted run keeps what it measured) with the git
revision; the PNG plots measured points and the L_mem lines against the edge factor.

Usage::

    python benchmarks/bench_memory_bound.py --scale 12 --cache .gravfm-cache \\
        --json benchmarks/results/bench_memory_bound.json --png benchmarks/results/bench_memory_bound.png
"""

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from gravfm.algorithms import make_pagerank
from gravfm.flow import RunOptions, run
from gravfm.flow.memory import memory_hardware, platform_for_run, words_per_pass
from gravfm.flow.planning import plan
from gravfm.flow.preparation import prepare
from gravfm.hw.arch import architecture
from gravfm.model.offchip_layout import edge_slot_bits
from gravfm.model import load_platform, model_params
from gravfm.model import limits as L
from gravfm.model.predict import evaluate
from gravfm.provenance import arguments, write_results

PAGERANK = make_pagerank(supersteps=5, name="pagerank5")
SPECS = {"uniform": "uniform:n={n},deg={d},seed=1", "rmat": "rmat:scale={scale},ef={d},seed=1"}
GIB = 2 ** 30


def layout_point(prepared, platform, fpgas, pes):
    """The plan's configuration and the words one all-active superstep reads per FPGA."""
    from gravfm.partition import edge_stores

    hardware = plan(prepared, fpgas=fpgas, pes=pes, edge_memory=memory_hardware(platform))
    stores = edge_stores(prepared.graph, hardware.partition, hardware.config.pe.local_bits,
                         layout=hardware.config.arch)
    return hardware, words_per_pass(stores, hardware.config)


def flight_limit(platform, pes, edges, words):
    """L_flight (edges/s): round trip = latency + 2 (registered AR and R) + mean jitter."""
    memory = platform.memory
    round_trip = memory.latency_cycles + 2 + memory.latency_jitter_cycles / 2
    return L.in_flight_limit(pes, memory.requests_in_flight, round_trip, platform.fpga.f_clk_hz, edges, words)


def model_point(prepared, hardware, platform, words, fraction, min_pass_cycles):
    """The bandwidth (GiB/s per FPGA) that puts the layout's L_mem at ``fraction`` of the other
    limits' minimum, and lower if need be so that one pass's reads take ``min_pass_cycles`` on
    the busiest FPGA; every limit at that bandwidth (predictions, edges/s)."""
    graph, config = prepared.graph, hardware.config
    # sizes from the layouts; CPE measured for PageRank (this is PageRank with fewer supersteps)
    params = replace(model_params(prepared.algorithm, vertexid_bits=config.vertexid_bits), name="pagerank")
    n, p, edges = config.fpgas, config.pes_per_fpga, graph.num_edges
    others = dict(evaluate(platform, params, graph.num_vertices, edges, n, p, layout_words=words).limits)
    others.pop("L_mem", None)
    others["L_flight"] = flight_limit(platform, p, edges, words)
    word_bits = config.pe.memory_word_bits
    bandwidth_bits = fraction * min(others.values()) * word_bits * max(words) / edges
    if min_pass_cycles:
        f_clk = platform.fpga.f_clk_hz
        bandwidth_bits = min(bandwidth_bits, max(words) * word_bits * f_clk / min_pass_cycles)
    m_edge = edge_slot_bits(architecture(config.arch).layouts(config.algorithm, config).edge_word.size)
    estimate = L.layout_words_per_pass(graph.num_vertices, edges, n, p, m_edge, word_bits, arch=config.arch)
    limits = {
        **others,
        "L_mem_layout": L.memory_limit_layout(bandwidth_bits, word_bits, edges, words),
        "L_mem_layout_estimate": L.memory_limit_layout(bandwidth_bits, word_bits, edges, [estimate]),
        "L_mem_paper_eq2": L.memory_limit(n, bandwidth_bits, m_edge),
        "L_mem_paper_granular": L.memory_limit_granular(n, p, bandwidth_bits, m_edge, word_bits,
                                                        edges / graph.num_vertices),
    }
    return bandwidth_bits / 8 / GIB, limits, {"m_edge_slot_bits": m_edge, "m_memword_bits": word_bits,
                                             "words_per_pass_per_fpga": list(words),
                                             "words_per_pass_estimate": estimate,
                                             "pass_cycles": max(words) * word_bits * platform.fpga.f_clk_hz
                                             / bandwidth_bits}


def measured_figures(report):
    """Whole run and memory-bound supersteps (those that traverse edges) in MTEPS at f_clk."""
    f_clk = report.f_clk_hz
    rows = [row for row in report.rounds if row.cycles is not None]
    # A row's messages are scattered from its apply's updates, i.e. during the next row's cycles
    # (which run from this apply's end to the next one's): pair each row with its successor.
    bound = [(row, after) for row, after in zip(rows, rows[1:]) if row.messages > 0]
    cycles = sum(after.cycles for _, after in bound)
    messages = sum(row.messages for row, _ in bound)
    return {
        "kind": "measured (Verilator simulation)", "verified": report.verified, "status": report.status,
        "cycles": report.cycles, "messages": report.messages, "mteps": report.mteps,
        "memory_bound_supersteps": [after.round for _, after in bound],
        "memory_bound_cycles": cycles, "memory_bound_messages": messages,
        "memory_bound_mteps": messages / cycles * f_clk / 1e6 if cycles else None,
        "per_superstep": [dict(row.__dict__) for row in rows], "memory": report.memory,
    }


def earlier_point(earlier, args, spec, fpgas, pes, bandwidth):
    """A point of an earlier JSON (``--reuse``) simulated with exactly this configuration, with
    the provenance of the run that measured it; None when there is none."""
    for document in earlier:
        same_build = {key: document["arguments"].get(key) for key in ("platform", "edges_per_list")}
        if same_build != {"platform": args.platform, "edges_per_list": args.edges_per_list}:
            continue
        for point in document["results"]:
            if (point["graph"]["spec"], point["fpgas"], point["pes_per_fpga"]) == (spec, fpgas, pes) \
                    and point["bandwidth_gib_s_per_fpga"] == bandwidth:   # JSON keeps a float exactly
                return {**point, "measured_by": point.get("measured_by", document["provenance"])}
    return None


def measure(args, platform, kind, degree, fpgas, log, earlier=()):
    spec = SPECS[kind].format(n=1 << args.scale, d=degree, scale=args.scale)
    prepared = prepare(PAGERANK, spec)
    graph = prepared.graph
    hardware, words = layout_point(prepared, platform, fpgas, args.pes)
    bandwidth, limits, layout = model_point(prepared, hardware, platform, words, args.memory_fraction,
                                            args.min_pass_cycles)
    reused = earlier_point(earlier, args, spec, fpgas, args.pes, bandwidth)
    if reused is not None:
        log(f"reusing the measurement of {reused['measured_by'].get('git_revision')} (same configuration)")
        return reused
    report = run(RunOptions(algorithm=PAGERANK, graph=spec, fpgas=fpgas, pes=args.pes, cache_dir=args.cache,
                            edge_memory="offchip", memory={"bandwidth_gib_s": bandwidth},
                            edges_per_pe=args.edges_per_list), log=log)
    measured = measured_figures(report)
    l_mem = limits["L_mem_layout"] / 1e6
    passes = len(measured["memory_bound_supersteps"])
    return {
        "graph": {"kind": kind, "spec": spec, "vertices": graph.num_vertices, "edges": graph.num_edges,
                  "degree": degree},
        "fpgas": fpgas, "pes_per_fpga": args.pes, "bandwidth_gib_s_per_fpga": bandwidth,
        "measured": measured,
        "model": {"kind": "prediction", "limits_mteps": {name: value / 1e6 for name, value in limits.items()},
                  "memory_fraction_of_other_limits": args.memory_fraction, **layout},
        "words_measured_over_layout": report.memory["words"] / (passes * sum(words)) if passes else None,
        "ratio_memory_bound_over_l_mem_layout": (measured["memory_bound_mteps"] or 0) / l_mem,
        "ratio_run_over_l_mem_layout": report.mteps / l_mem,
        "sim": {"build_s": report.build_s, "build_cached": report.build_cached, "run_s": report.run_s},
    }


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(p["fpgas"], p["graph"]["kind"]) for p in results})
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    for axis, (fpgas, kind) in zip(axes[0], panels):
        points = sorted((p for p in results if p["fpgas"] == fpgas and p["graph"]["kind"] == kind),
                        key=lambda p: p["graph"]["degree"])
        degrees = [p["graph"]["degree"] for p in points]

        def line(name):
            return [p["model"]["limits_mteps"][name] for p in points]
        axis.plot(degrees, line("L_mem_layout"), "-", color="C0", label="L_mem, this layout (model)")
        axis.plot(degrees, line("L_mem_paper_granular"), "--", color="C1",
                  label="L_mem, paper with access granularity (model)")
        axis.plot(degrees, [p["measured"]["memory_bound_mteps"] for p in points], "o", color="C0",
                  label="measured, memory-bound supersteps")
        axis.plot(degrees, [p["measured"]["mteps"] for p in points], "x", color="C2", label="measured, whole run")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("edge factor |E|/|V|")
        axis.set_ylabel("MTEPS (at f_clk 187.5 MHz)")
        axis.set_title(f"{fpgas} FPGA x {points[0]['pes_per_fpga']} PEs, {kind}", fontsize=9)
        axis.set_ylim(bottom=0)
    axes[0][0].legend(fontsize=6.5, loc="lower right")
    bandwidths = [p["bandwidth_gib_s_per_fpga"] for p in results]
    figure.suptitle("PageRank, edges off chip, memory bandwidth lowered until memory-bound (Verilator "
                    f"simulation); bandwidth per point {min(bandwidths):.2f}-{max(bandwidths):.2f} GiB/s "
                    "per FPGA (JSON)", fontsize=9)
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
                        help="the layout's L_mem as a fraction of the smallest other limit (default 0.3)")
    parser.add_argument("--min-pass-cycles", type=int, default=10_000,
                        help="lower the bandwidth further until one pass's reads take this many cycles "
                             "(a superstep's fixed latency, ~250 cycles here, is then <= 2.5%%; 0: off)")
    parser.add_argument("--edges-per-list", type=int, default=1 << 16,
                        help="longest edge list a build holds (one build serves every graph)")
    parser.add_argument("--platform", default="ac510x4")
    parser.add_argument("--cache", default=None)
    parser.add_argument("--reuse", type=Path, action="append", default=[],
                        help="an earlier JSON of this benchmark: its points simulated with the same graph, "
                             "FPGAs, PEs and bandwidth are kept (with their provenance), not simulated again")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None)
    args = parser.parse_args()
    platform = platform_for_run(load_platform(args.platform), "offchip")
    earlier = [json.loads(path.read_text()) for path in args.reuse]
    results = []
    started = time.time()
    for fpgas in (int(x) for x in args.fpgas.split(",")):
        for kind in args.graphs.split(","):
            for degree in (int(x) for x in args.edge_factors.split(",")):
                point = measure(args, platform, kind, degree, fpgas, log=lambda line: print("  " + line, flush=True),
                                earlier=earlier)
                results.append(point)
                print(f"{fpgas} FPGA {kind} ef {degree}: memory-bound supersteps "
                      f"{point['measured']['memory_bound_mteps']:.1f} MTEPS (whole run {point['measured']['mteps']:.1f}), "
                      f"L_mem(layout) {point['model']['limits_mteps']['L_mem_layout']:.1f}, ratio "
                      f"{point['ratio_memory_bound_over_l_mem_layout']:.3f} (run "
                      f"{point['ratio_run_over_l_mem_layout']:.3f})", flush=True)
                if args.json:
                    write_results({"benchmark": "bench_memory_bound", "arguments": arguments(args),
                                   "wall_s": time.time() - started, "results": results}, args.json, stream=None)
    if args.png and results:
        plot(results, args.png)
    if not args.json:
        write_results({"benchmark": "bench_memory_bound", "arguments": arguments(args), "results": results})


if __name__ == "__main__":
    main()
