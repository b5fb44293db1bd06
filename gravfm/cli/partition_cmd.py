"""``gravfm partition --graph SPEC``: partition a graph over FPGAs and PEs and report the balance."""

import time

from ..architectures import BUILT_ARCHITECTURES, architecture_info
from ..errors import ConfigError
from ..graph import load_graph
from ..partition import METHODS, edge_stores, neighbor_filter, partition, partition_report
from .common import (add_capacity_arguments, add_deprecated_option, add_graph_argument, check_output_file,
                     graph_argument, local_bits_of, report_stream, write_json)

__all__ = ["register", "run", "partition_figures", "format_report"]

# Beyond this many PEs the per-PE table is summarized (min / max) instead of listed.
_MAX_PE_ROWS = 64


def register(subparsers):
    parser = subparsers.add_parser(
        "partition",
        help="partition a graph over FPGAs and PEs and report load balance and traffic",
        description="Assign the vertices of a graph to PEs (round-robin, greedy edge-based or METIS "
                    "across FPGAs) and report vertices and edges per PE, max/mean imbalance, the "
                    "fraction of edges crossing FPGAs, and the memory of the edge stores.",
    )
    add_graph_argument(parser)
    parser.add_argument("--fpgas", type=int, default=1, metavar="N", help="number of FPGAs (default 1)")
    parser.add_argument("--pes", type=int, default=1, metavar="P", help="PEs per FPGA (default 1)")
    parser.add_argument("--method", default="greedy", choices=METHODS,
                        help="partitioner: greedy (default, the paper's), sorted_greedy (largest out-degree "
                             "first), round_robin or metis")
    parser.add_argument("--ufactor", type=int, default=1, metavar="U",
                        help="METIS allowed imbalance in thousandths (default 1, as in the paper)")
    parser.add_argument("--seed", type=int, default=0, help="METIS random seed (default 0)")
    add_capacity_arguments(parser, edges_help=False)
    add_deprecated_option(parser, "--local-bits", "--vertices-per-pe 2^B", dest="vertices_per_pe", type=int,
                          convert=lambda bits: 1 << bits)
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON ('-': standard output)")
    parser.set_defaults(handler=run)


def partition_figures(graph, fpgas, pes, method, *, ufactor=1, seed=0, local_bits=None):
    """Partition ``graph`` and gather every figure the command prints, as a plain dict."""
    options = {"ufactor": ufactor, "seed": seed} if method == "metis" else {}
    started = time.perf_counter()
    parts = partition(graph, fpgas, pes, method=method, **options)
    seconds = time.perf_counter() - started
    report = partition_report(graph, parts)
    if local_bits is None:
        local_bits = parts.min_local_bits
    if local_bits < parts.min_local_bits:
        raise ConfigError(f"--vertices-per-pe {1 << local_bits} is too small: a PE holds up to "
                          f"{int(parts.vertices_per_pe.max()):,} vertices; use at least "
                          f"--vertices-per-pe {1 << parts.min_local_bits}")
    figures = {"graph": graph.name, **report.to_dict(), "seconds": seconds,
               "local_bits": local_bits}
    figures["memory_bits"] = {
        **{arch: edge_stores(graph, parts, local_bits, layout=arch).footprint().to_dict()
           for arch in BUILT_ARCHITECTURES},
        "filter": neighbor_filter(graph, parts).footprint_bits if fpgas > 1 else 0,
    }
    return figures


def _size(bits):
    if bits < 8 * 2**10:
        return f"{bits:,} bits"
    if bits < 8 * 2**20:
        return f"{bits / 8 / 2**10:.1f} KiB"
    return f"{bits / 8 / 2**20:.1f} MiB"


def format_report(figures):
    """The human-readable report of :func:`partition_figures`, as lines."""
    f = figures
    pes = f["fpgas"] * f["pes_per_fpga"]
    lines = [
        f"graph {f['graph'] or '(unnamed)'}: {f['num_vertices']:,} vertices, {f['num_edges']:,} edges",
        f"{f['method']} partition over {f['fpgas']} FPGA(s) x {f['pes_per_fpga']} PE(s) "
        f"in {f['seconds']:.3f} s",
        "",
    ]
    columns = ("vertices_per_pe", "out_edges_per_pe", "in_edges_per_pe")
    lines.append(f"{'PE':>8} {'FPGA':>5} {'vertices':>12} {'out-edges':>12} {'in-edges':>12}")
    if pes <= _MAX_PE_ROWS:
        for g in range(pes):
            values = " ".join(f"{f[c][g]:>12,}" for c in columns)
            lines.append(f"{g:>8} {g // f['pes_per_fpga']:>5} {values}")
    else:
        for label, pick in (("min", min), ("max", max)):
            values = " ".join(f"{pick(f[c]):>12,}" for c in columns)
            lines.append(f"{label:>8} {'':>5} {values}")
    lines += [
        "",
        f"imbalance (max/mean): vertices {f['vertex_imbalance']:.4f}, out-edges "
        f"{f['out_edge_imbalance']:.4f}, in-edges (GraVF-M scatter load) {f['in_edge_imbalance']:.4f}",
        f"edges crossing FPGAs: {f['crossing_edges']:,} ({100 * f['crossing_fraction']:.2f}%)",
        f"update copies to other FPGAs per all-active superstep (GraVF-M, filtered): "
        f"{f['remote_update_copies']:,}",
    ]
    memory = f["memory_bits"]
    lines.append(f"edge stores with local_bits={f['local_bits']}: "
                 + "".join(f"{architecture_info(arch).title} {_size(memory[arch]['total_bits'])}, "
                           for arch in BUILT_ARCHITECTURES) +
                 f"neighbour filter {_size(memory['filter'])}")
    return lines


def run(args):
    check_output_file(args.json, stdout=True)
    graph = load_graph(graph_argument(args))
    figures = partition_figures(graph, args.fpgas, args.pes, args.method, ufactor=args.ufactor,
                                seed=args.seed, local_bits=local_bits_of(args.vertices_per_pe))
    with report_stream(args):
        print("\n".join(format_report(figures)))
    if args.json:
        write_json(args.json, figures, args)
    return 0
