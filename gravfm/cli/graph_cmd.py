"""``gravfm graph``: inspect and convert graphs (files or generator specs)."""

import argparse

from ..graph import GENERATORS, load_graph
from ..graph.stats import graph_summary
from ..graph.writers import WRITE_FORMATS, write_graph
from .common import (add_graph_argument, add_graph_input_arguments, check_output_file, graph_argument,
                     graph_load_options, write_json)


def register(subparsers):
    parser = subparsers.add_parser("graph", help="inspect and convert graphs",
                                   description="Inspect and convert graphs: files or generator specs "
                                               "such as rmat:scale=14,ef=16,seed=1 or tiny:star.")
    actions = parser.add_subparsers(dest="graph_command", metavar="ACTION", required=True)

    generators = "\n".join(f"  {name}: {generator.help}" for name, generator in GENERATORS.items())
    info = actions.add_parser("info", help="print sizes, degree statistics and cleaning counts",
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog=f"generator specs (NAME:key=value,...):\n{generators}")
    add_graph_argument(info, help="graph file or generator spec")
    info.add_argument("--json", metavar="FILE", help="also write the figures as JSON ('-' for stdout)")
    add_graph_input_arguments(info)
    info.set_defaults(handler=_info)

    convert = actions.add_parser("convert", help="write a graph as an edge list or Matrix Market file")
    convert.add_argument("spec", metavar="IN", help="graph file or generator spec")
    convert.add_argument("output", metavar="OUT", help="output file (.gz compresses)")
    convert.add_argument("--format", choices=WRITE_FORMATS, default=None,
                         help="output format (default: from OUT's extension, .mtx or edge list)")
    add_graph_input_arguments(convert)
    convert.set_defaults(handler=_convert)


def _load(args, spec):
    return load_graph(spec, **graph_load_options(args))


def _info(args):
    check_output_file(args.json, stdout=True)
    summary = graph_summary(_load(args, graph_argument(args)))
    if args.json:
        write_json(args.json, summary, args)
    if args.json != "-":
        print(format_summary(summary))
    return 0


def format_summary(summary):
    """The human-readable text of ``gravfm graph info``."""
    cleaning = summary["cleaning"]
    mirrored = f", {cleaning['mirrored_edges']:,} mirrored" if cleaning["mirrored_edges"] else ""
    lines = [
        ("graph", summary["name"]),
        ("vertices", f"{summary['vertices']:,} ({summary['isolated_vertices']:,} isolated)"),
        ("edges", f"{summary['edges']:,} directed, {summary['unordered_pairs']:,} unordered pairs, "
                  f"{'symmetric' if summary['symmetric'] else 'not symmetric'}"
                  f"{', weighted' if summary['weighted'] else ''}"),
        ("input", f"{cleaning['input_edges']:,} edges{mirrored}; removed {cleaning['self_loops_removed']:,} "
                  f"self-loops and {cleaning['duplicates_removed']:,} duplicates; "
                  f"ids {'relabelled' if cleaning['relabelled'] else 'as given'}"),
        ("self-loops", f"{summary['self_loops']:,} kept"),
    ]
    for direction in ("out_degree", "in_degree"):
        stats = summary[direction]
        lines.append((direction.replace("_", "-"), f"min {stats['min']}, max {stats['max']}, "
                                                   f"mean {stats['mean']:.2f}, median {stats['median']:g}"))
    return "\n".join(f"{label:<11} {value}" for label, value in lines)


def _convert(args):
    check_output_file(args.output, "OUT")
    graph = _load(args, args.spec)
    write_graph(graph, args.output, fmt=args.format)
    print(f"wrote {args.output}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
          f"({graph.cleaning.summary()})")
    return 0
