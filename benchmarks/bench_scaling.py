"""Scaling study over 1..4 FPGAs (the paper's Fig. 7): GraVF-M and the GraVF baseline, measured
beside the model.

The points are fig7's sweep as ``gravfm reproduce`` defines it
(:func:`gravfm.reproduce.experiments.scaling_points`) at this study's scale, PEs, platform and
partition, with on-chip edges. For each FPGA count, algorithm (WCC, BFS), architecture
(``gravfm``, ``gravf``) and graph (uniform, RMAT), this runs :func:`gravfm.flow.run` on the compiled simulator (Verilator; one
build per FPGA count, algorithm and architecture, shared by both graphs) with the platform's
inter-FPGA links (``LinkConfig.from_platform``: bandwidth per link, 128-bit words, latency),
verifies the answer and the message count against the software reference, and records:

* **measured** (simulation): cycles, messages, MTEPS at the platform clock, link items, bits,
  words and link-bound cycles, inter-FPGA bytes per traversed edge;
* **model** (predictions, never mixed with the measurements): the analytical model's limits
  (L_PE, L_if, L_net) and T_sys for the same configuration and architecture. The simulated PEs
  keep their edges on chip, so the model is evaluated for the platform with on-chip edge storage
  (no L_mem). Beside it, the theory of the inter-FPGA bytes per traversed edge: GraVF-M
  ``m_update (n-1) |V|/|E|`` (no filter: an upper bound), GraVF ``m_message x`` the fraction
  of edges that cross FPGAs; and ``link_item_limit_mteps``: the simulated link moves at most one
  item per cycle, which caps GraVF at ``f n (n-1) / crossing`` messages per second whatever the
  bandwidth (a property of the simulated hardware, not of the paper's model);
* per (algorithm, graph, FPGA count): the GraVF-M / GraVF ratio of the measured MTEPS and of the
  model's T_sys.

The JSON is rewritten after every point, so an interrupted study keeps what it measured. Each
write carries a fresh ``provenance`` (git revision of the code, date, machine); each point records
the ``git_revision`` (and ``git_dirty``) of the code it was measured with. With ``--append`` the
points kept from the earlier file may come from other commits: their file's provenance is kept
under ``earlier_provenance`` and ``provenance_note`` says how many points are not from the
revision in ``provenance``.

Usage::

    python benchmarks/bench_scaling.py --scale 14 --pes 9 --fpgas 4,1,2,3 \\
        --json benchmarks/results/bench_scaling.json --png benchmarks/results/bench_scaling.png
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
from gravfm.model import load_platform
from gravfm.model.algorithm_params import params_from_layouts
from gravfm.model.predict import predict
from gravfm.flow import RunOptions, graph_capacities, run
from gravfm.partition import partition
from gravfm.provenance import provenance, write_results
from gravfm.reproduce.experiments import scaling_points
from gravfm.reproduce.points import scaled_network

ARCHITECTURES = ("gravfm", "gravf")


def graphs(scale, edge_factor, seed):
    """The two graphs of the study, by name."""
    return {
        "uniform": f"uniform:n={1 << scale},deg={edge_factor},seed={seed}",
        "rmat": f"rmat:scale={scale},ef={edge_factor},seed={seed}",
    }


def capacities(prepared_graphs, fpgas, pes, arch, method):
    """(local_bits, edges_per_pe) that fit every graph (the plan's rule for each, the largest of
    them): one build serves them all."""
    sizes = [graph_capacities(graph, partition(graph, fpgas, pes, method=method), arch=arch)
             for graph in prepared_graphs]
    return max(bits for bits, _, _ in sizes), max(edges for _, edges, _ in sizes)


def model_point(algorithm, graph, onchip, fpgas, pes, arch, vertexid_bits, crossing):
    """The model's figures for one configuration (predictions)."""
    params = params_from_layouts(algorithm.name, vertex=algorithm.vertex, update=algorithm.update,
                                 message=algorithm.message, edge=algorithm.edge, vertexid_bits=vertexid_bits)
    prediction = predict(onchip, params, graph.num_vertices, graph.num_edges, fpgas=fpgas, pes=pes, arch=arch)
    figures = {"kind": "prediction", "platform": "on-chip edge storage", "t_sys_mteps": prediction.t_sys / 1e6,
               "bottleneck": prediction.bottleneck, "cpe": prediction.cpe,
               "limits_mteps": {k: v / 1e6 for k, v in prediction.limits.items()},
               "m_update": params.m_update, "m_message": params.m_message}
    if arch == "gravf" and fpgas > 1 and crossing > 0:
        f_clk = onchip.fpga.f_clk_mhz * 1e6
        figures["link_item_limit_mteps"] = f_clk * fpgas * (fpgas - 1) / crossing / 1e6
    return figures


def run_point(algorithm, graph, params, platform, onchip, fpgas, pes, arch, capacity, *, method, cache_dir, log):
    """One measured configuration, as a JSON-ready dict."""
    local_bits, edges_per_pe = capacity
    report = run(RunOptions(edge_memory="onchip", algorithm=algorithm, graph=graph, fpgas=fpgas, pes=pes, platform=platform,
                            root=params.get("root"), local_bits=local_bits, edges_per_pe=edges_per_pe,
                            cache_dir=cache_dir, arch=arch, partition=method), log=log)
    parts = partition(graph, fpgas, pes, method=method)
    crossing = float(np.mean(parts.fpga_of_vertex[graph.sources()] != parts.fpga_of_vertex[graph.targets])) \
        if graph.num_edges else 0.0
    vertexid_bits = SystemConfig.of(algorithm=algorithm, fpgas=fpgas, pes_per_fpga=pes, local_bits=local_bits,
                                 edges_per_pe=edges_per_pe).vertexid_bits
    model = model_point(algorithm, graph, onchip, fpgas, pes, arch, vertexid_bits, crossing)
    links = report.links
    return {
        "fpgas": fpgas, "pes_per_fpga": pes, "arch": arch, "update_lanes": report.update_lanes,
        "gather_forwarding": report.gather_forwarding,
        "measured": {
            "kind": "measured (Verilator simulation)", "verified": report.verified,
            "detail": report.check_detail, "status": report.status, "cycles": report.cycles,
            "messages": report.messages, "supersteps": report.supersteps, "mteps": report.mteps,
            "cpe": None if not report.messages else report.cpe,
            "link": {key: links[key] for key in ("items", "barriers", "bits", "bytes", "words",
                                                 "link_bound_cycles", "item_bits")} if links else None,
            "bytes_per_edge": links.get("bytes_per_edge", 0.0),
            "stall_cycles": report.stalls,
        },
        "model": model,
        "bytes_per_edge_theory": links.get("bytes_per_edge_theory", 0.0),
        "crossing_edge_fraction": crossing,
        "measured_over_model": report.mteps / model["t_sys_mteps"],
        "link_config": {"bits_per_cycle": None, "word_bits": None} if fpgas == 1 else
        _link_config(platform, fpgas),
        "capacity": {"local_bits": local_bits, "edges_per_pe": edges_per_pe},
        "sim": {"build_s": report.build_s, "build_cached": report.build_cached, "build_key": report.build_key,
                "run_s": report.run_s},
    }


def _link_config(platform, fpgas):
    from gravfm.hw.link import LinkConfig
    link = LinkConfig.from_platform(platform, fpgas)
    return {"bits_per_cycle": link.bits_per_cycle, "word_bits": link.word_bits,
            "latency_cycles": link.latency_cycles, "fifo_depth": link.fifo_depth}


def ratios(results):
    """GraVF-M / GraVF per (algorithm, graph, FPGA count): measured MTEPS and model T_sys."""
    table = {}
    for point in results:
        table.setdefault((point["algorithm"], point["graph"], point["fpgas"]), {})[point["arch"]] = point
    rows = []
    for (algorithm, graph, fpgas), pair in sorted(table.items()):
        if set(pair) != set(ARCHITECTURES):
            continue
        m, b = pair["gravfm"], pair["gravf"]
        rows.append({"algorithm": algorithm, "graph": graph, "fpgas": fpgas,
                     "measured_mteps_ratio": m["measured"]["mteps"] / b["measured"]["mteps"],
                     "model_t_sys_ratio": m["model"]["t_sys_mteps"] / b["model"]["t_sys_mteps"],
                     "gravf_model_bottleneck": b["model"]["bottleneck"],
                     "both_verified": m["measured"]["verified"] and b["measured"]["verified"]})
    return rows


def same_code(earlier, current):
    """Whether two provenance records certainly describe the same code: one known revision, clean
    both times."""
    return (earlier.get("git_revision") is not None and earlier.get("git_revision") == current["git_revision"]
            and earlier.get("git_dirty") is False and current["git_dirty"] is False)


def revision_note(results, current):
    """What a reader of the file must know about points not measured with the code of ``current``
    (the provenance written with them), or None."""
    revision = current["git_revision"]
    if revision is None:
        return (f"the git revision of the code is unknown ({current.get('git_note')}); "
                "see each point's git_revision")
    others = [p for p in results if p.get("git_revision") != revision]
    dirty = [p for p in results if p.get("git_dirty") is not False]
    notes = []
    if others:
        revisions = sorted({p.get("git_revision") or "unknown: from before points recorded it" for p in others})
        notes.append(f"{len(others)} of {len(results)} points were measured with the code of another git revision "
                     f"than this file's provenance ({', '.join(revisions)}); see each point's git_revision and "
                     "earlier_provenance")
    if dirty:
        notes.append(f"{len(dirty)} of {len(results)} points were measured with uncommitted changes, or without "
                     "knowing (git_dirty true or missing)")
    return "; ".join(notes) or None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=12, help="log2 of the vertex count (default 12)")
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pes", type=int, default=4, help="PEs per FPGA (the paper: 9)")
    parser.add_argument("--fpgas", default="1,2,3,4", help="FPGA counts, in the order to run them")
    parser.add_argument("--algorithms", default="wcc,bfs")
    parser.add_argument("--graphs", default="uniform,rmat")
    parser.add_argument("--archs", default="gravfm,gravf")
    parser.add_argument("--platform", default="ac510x4")
    parser.add_argument("--partition", default="greedy",
                        help="vertices to PEs: greedy (default, the paper's), sorted_greedy, round_robin or metis")
    parser.add_argument("--bandwidth-scale", type=float, default=1.0,
                        help="multiply the platform's inter-FPGA bandwidths (links and model) by this, "
                             "to reach the network-bound regime on small graphs (default 1)")
    parser.add_argument("--cache", default=None, help="Verilator build cache folder")
    parser.add_argument("--json", default=None)
    parser.add_argument("--png", default=None)
    parser.add_argument("--append", action="store_true",
                        help="keep the points already in --json (same scale, edge factor, seed, PEs, platform) "
                             "and add this run's (a study run in parts); a point run again replaces the old one")
    args = parser.parse_args(argv)

    def log(message):
        print(f"  {message}", file=sys.stderr, flush=True)

    platform = scaled_network(load_platform(args.platform), args.bandwidth_scale)
    onchip = dataclasses.replace(platform, memory=dataclasses.replace(platform.memory, edge_storage="onchip"))
    fpga_counts = [int(v) for v in args.fpgas.split(",")]
    specs = {name: spec for name, spec in graphs(args.scale, args.edge_factor, args.seed).items()
             if name in args.graphs.split(",")}
    algorithms = [get_algorithm(name) for name in args.algorithms.split(",")]
    prepared, params_of = {}, {}
    for algorithm in algorithms:
        for name, spec in specs.items():
            graph = load_graph(spec)
            # BFS starts at the vertex of highest out-degree (vertex 0 of an RMAT graph may be isolated).
            given = {"root": graph.hub()} if "root" in algorithm.default_params else {}
            params_of[algorithm.name, name] = algorithm.params(given)
            prepared[algorithm.name, name] = algorithm.prepare(graph, params_of[algorithm.name, name])
    document = {"benchmark": "scaling", "platform": platform.name,
                "measured": "every figure under 'measured' comes from the Verilator simulation (cycles) "
                            "and the hardware's counters; answers checked against the software reference",
                "model": "figures under 'model' and 'bytes_per_edge_theory' are analytical predictions "
                         "(platform with on-chip edge storage, as simulated)",
                "bandwidth_scale": args.bandwidth_scale, "scale": args.scale, "edge_factor": args.edge_factor,
                "seed": args.seed, "pes_per_fpga": args.pes, "partition": args.partition,
                "fpga_counts": fpga_counts,
                "complete": False, "results": [], "ratios": []}
    invocation = {key: getattr(args, key) for key in ("fpgas", "algorithms", "graphs", "archs")}
    # The code measured is the code imported now; each point records its revision.
    code = provenance()
    if args.append and args.json and Path(args.json).exists():
        previous = json.loads(Path(args.json).read_text())
        previous.setdefault("partition", "greedy")  # studies from before the option
        # Studies from before the methods' one spelling (benchmarks/results/*_sortedgreedy.json).
        old_spelling = {"sortedgreedy": "sorted_greedy", "roundrobin": "round_robin"}
        previous["partition"] = old_spelling.get(previous["partition"], previous["partition"])
        for key in ("scale", "edge_factor", "seed", "pes_per_fpga", "platform", "bandwidth_scale", "partition"):
            if previous.get(key) != document[key]:
                raise SystemExit(f"--append: {args.json} has {key} = {previous.get(key)!r}, this run {document[key]!r}")
        rerun = {(a, arch, g, n) for n in fpga_counts for a in args.algorithms.split(",")
                 for arch in args.archs.split(",") for g in specs}
        document["results"] = [p for p in previous["results"]
                               if (p["algorithm"], p["arch"], p["graph"], p["fpgas"]) not in rerun]
        # Points kept from earlier parts: keep the provenance of the code they may come from.
        written = previous.get("provenance") or {
            "git_revision": None, "git_note": "written before bench_scaling.py recorded provenance"}
        kept_revisions = {p.get("git_revision") for p in document["results"]}
        earlier = [e for e in previous.get("earlier_provenance", []) + [written]
                   if e.get("git_revision") in kept_revisions and not same_code(e, code)]
        if earlier:
            document["earlier_provenance"] = earlier
        document["notes"] = previous.get("notes", [])
        document["runs"] = previous.get("runs") or [
            {"points": sorted({f"{p['algorithm']} {p['arch']} {p['graph']} {p['fpgas']}" for p in previous["results"]}),
             "note": "an earlier part (recorded before 'runs' existed)"}]
    document.setdefault("runs", []).append(invocation)
    document["fpga_counts"] = sorted({p["fpgas"] for p in document["results"]} | set(fpga_counts))
    results = document["results"]

    def save():
        if not args.json:
            return
        current = provenance()  # refreshed on every write
        note = revision_note(results, current)
        final = {**document, "provenance": current, **({"provenance_note": note} if note else {})}
        write_results(final, args.json, stream=None)

    # The sweep is fig7's (gravfm.reproduce.experiments.scaling_points) at this study's sizes, with
    # on-chip edges; run here point after point in the --fpgas order, so that --append parts and
    # the JSON stay as they were.
    points = scaling_points(graphs=list(specs.values()), algorithms=[a.name for a in algorithms],
                            archs=args.archs.split(","), fpgas=fpga_counts, pes=args.pes,
                            link_scale=args.bandwidth_scale, edge_memory="onchip", partition=args.partition,
                            platform=args.platform)
    names = {spec: name for name, spec in specs.items()}
    points.sort(key=lambda p: fpga_counts.index(p.fpgas))  # stable: algorithm, arch, graph within
    capacity = {}
    for point in points:
        graph = prepared[point.algorithm, names[point.graph]]
        group = (point.fpgas, point.algorithm, point.arch)
        if group not in capacity:  # one build per group serves both graphs
            own = [prepared[point.algorithm, name] for name in specs]
            capacity[group] = capacities(own, point.fpgas, args.pes, point.arch, args.partition)
        algorithm = get_algorithm(point.algorithm)
        started = time.perf_counter()
        result = run_point(algorithm, graph, params_of[point.algorithm, names[point.graph]], platform, onchip,
                           point.fpgas, args.pes, point.arch, capacity[group], method=args.partition,
                           cache_dir=args.cache, log=log)
        result.update(algorithm=point.algorithm, graph=names[point.graph], spec=point.graph,
                      params=params_of[point.algorithm, names[point.graph]], vertices=graph.num_vertices,
                      edges=graph.num_edges, wall_s=time.perf_counter() - started,
                      git_revision=code["git_revision"], git_dirty=code["git_dirty"])
        results.append(result)
        measured, model = result["measured"], result["model"]
        print(f"{point.algorithm:4} {point.arch:6} {names[point.graph]:8} {point.fpgas} FPGA x {args.pes} PEs: "
              f"{'ok' if measured['verified'] else 'FAILED ' + measured['detail']}  "
              f"{measured['mteps']:8.1f} MTEPS (model {model['t_sys_mteps']:.1f}, "
              f"{model['bottleneck']}; {100 * result['measured_over_model']:.0f}%)  "
              f"{measured['bytes_per_edge']:.3f} B/edge (theory {result['bytes_per_edge_theory']:.3f})  "
              f"{measured['cycles']} cycles", flush=True)
        document["ratios"] = ratios(results)
        save()
    document["complete"] = True   # this invocation finished; "runs" lists what each part ran
    save()
    if args.png:
        plot(document, args.png)
    return 0 if all(point["measured"]["verified"] for point in results) else 1


def plot(document, path):
    """Top: measured MTEPS (points) and model T_sys (dashed) per FPGA count, both architectures,
    and GraVF's cap by the simulated links' one item per cycle (dotted); bottom: measured
    inter-FPGA bytes per traversed edge beside the theory."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = document["results"]
    panels = sorted({(p["algorithm"], p["graph"]) for p in results})
    figure, axes = plt.subplots(2, len(panels), figsize=(4.5 * len(panels), 7.5), squeeze=False)
    for column, (algorithm, name) in enumerate(panels):
        top, bottom = axes[0][column], axes[1][column]
        for arch, colour in zip(ARCHITECTURES, ("tab:blue", "tab:red")):
            points = sorted((p for p in results if (p["algorithm"], p["graph"], p["arch"]) == (algorithm, name, arch)),
                            key=lambda p: p["fpgas"])
            if not points:
                continue
            fpgas = [p["fpgas"] for p in points]
            top.plot(fpgas, [p["measured"]["mteps"] for p in points], "o-", color=colour, label=f"{arch} measured")
            top.plot(fpgas, [p["model"]["t_sys_mteps"] for p in points], "x--", color=colour,
                     label=f"{arch} model T_sys")
            capped = [p for p in points if "link_item_limit_mteps" in p["model"]]
            if capped:
                top.plot([p["fpgas"] for p in capped], [p["model"]["link_item_limit_mteps"] for p in capped], "s:",
                         color=colour, label=f"{arch} link item limit (1 item/cycle/link)")
            bottom.plot(fpgas, [p["measured"]["bytes_per_edge"] for p in points], "o-", color=colour,
                        label=f"{arch} measured")
            bottom.plot(fpgas, [p["bytes_per_edge_theory"] for p in points], "x--", color=colour,
                        label=f"{arch} theory")
        links = "" if document.get("bandwidth_scale", 1.0) == 1.0 else f", links x{document['bandwidth_scale']:g}"
        top.set_title(f"{algorithm} {name} (scale {document['scale']}, {document['pes_per_fpga']} PEs/FPGA{links})",
                      fontsize=9)
        top.set_xlabel("FPGAs")
        top.set_ylabel("MTEPS")
        top.legend(fontsize=7)
        bottom.set_xlabel("FPGAs")
        bottom.set_ylabel("inter-FPGA bytes per traversed edge")
        bottom.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
