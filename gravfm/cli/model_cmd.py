"""``gravfm model``: print the analytical model's prediction for a platform, algorithm and graph."""

import math
from pathlib import Path

from ..errors import ConfigError, SpecError
from .common import write_json

ARCH_NAMES = {"gravfm": "GraVF-M (update broadcast)", "gravf": "GraVF (unicast messages)"}


def register(subparsers):
    parser = subparsers.add_parser(
        "model",
        help="predict throughput with the analytical performance model",
        description="Predict the throughput (MTEPS) of a platform with the analytical model of "
                    "GraVF-M (every limit, the bottleneck, T_sys) and choose the number of FPGAs "
                    "and PEs per FPGA. Every figure printed is a prediction, not a measurement.",
    )
    parser.add_argument("--platform", default="ac510x4", metavar="NAME|PATH",
                        help="built-in platform name or platform TOML file (default: ac510x4)")
    parser.add_argument("--list-platforms", action="store_true", help="list the built-in platforms and exit")
    parser.add_argument("--algorithm", default="wcc", metavar="NAME",
                        help="algorithm (named model parameters: wcc, bfs, pagerank, sssp)")
    parser.add_argument("--graph", metavar="SPEC", help="graph file or generator spec (gravfm.graph.load_graph)")
    parser.add_argument("--vertices", type=int, metavar="N", help="|V| instead of --graph")
    parser.add_argument("--edges", type=int, metavar="M", help="|E| instead of --graph")
    parser.add_argument("--fpgas", type=int, metavar="N", help="number of FPGAs (default: chosen by the model)")
    parser.add_argument("--pes", type=int, metavar="P", help="PEs per FPGA (default: chosen by the model)")
    parser.add_argument("--arch", choices=["gravfm", "gravf"], default="gravfm",
                        help="gravfm: update broadcast (default); gravf: unicast messages")
    parser.add_argument("--memory-model", choices=["simple", "granular"], default="simple",
                        help="memory limit: equation (2) (default) or worst-case access granularity")
    for name in ("m_vertex", "m_update", "m_message", "m_edge"):
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, metavar="BITS",
                            help=f"override the algorithm's {name} (bits)")
    parser.add_argument("--sweep-fpgas", metavar="A-B",
                        help="print the limits for A..B FPGAs and plot them (PNG, see --plot)")
    parser.add_argument("--plot", metavar="FILE", help="PNG for --sweep-fpgas (default: model-sweep.png)")
    parser.add_argument("--supersteps", action="store_true",
                        help="superstep-aware prediction from the software reference's message counts")
    parser.add_argument("--messages", metavar="LIST",
                        help="comma-separated messages per superstep (instead of running the reference)")
    parser.add_argument("--updates", metavar="LIST",
                        help="comma-separated updates per superstep, with --messages (GraVF-M network time)")
    parser.add_argument("--combine", choices=["max", "sum"], default="max",
                        help="superstep time = max (default) or sum of work time and latency")
    parser.add_argument("--root", type=int, default=0, help="root vertex for bfs/sssp references (default 0)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.set_defaults(handler=run)


def _parse_range(text):
    try:
        if "-" in text:
            first, last = (int(part) for part in text.split("-", 1))
        else:
            first = last = int(text)
    except ValueError:
        raise SpecError(f"--sweep-fpgas {text!r}: expected A-B with integers, e.g. 1-8") from None
    if first < 1 or last < first:
        raise SpecError(f"--sweep-fpgas {text!r}: need 1 <= A <= B")
    return range(first, last + 1)


def _parse_counts(text, option):
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SpecError(f"{option} {text!r}: expected comma-separated integers") from None
    if not counts:
        raise SpecError(f"{option}: empty list")
    return counts


def _prepare_graph(graph, algorithm, root):
    """The graph the algorithm runs on (WCC symmetrizes), through the algorithm registry if present."""
    try:
        from ..algorithms import get_algorithm
    except ImportError:
        get_algorithm = None
    if get_algorithm is not None:
        try:
            algo = get_algorithm(algorithm)
        except (KeyError, ValueError, SpecError, ConfigError):
            algo = None
        if algo is not None:
            given = {"root": root} if "root" in algo.default_params else {}
            return algo.prepare(graph, algo.params(given))
    if algorithm == "wcc":
        return graph.symmetrize()
    return graph


def _reference_counts(graph, algorithm, root):
    """(messages, updates) per superstep of the software reference run."""
    try:
        from ..algorithms import reference
    except ImportError:
        raise ConfigError("--supersteps needs gravfm.algorithms.reference, which is not available; "
                          "pass --messages instead") from None
    runs = {
        "wcc": lambda: reference.wcc(graph),
        "bfs": lambda: reference.bfs(graph, root),
        "pagerank": lambda: reference.pagerank(graph),
        "sssp": lambda: reference.sssp(graph, root),
    }
    if algorithm not in runs or not hasattr(reference, algorithm):
        raise ConfigError(f"no software reference for {algorithm!r}; pass --messages instead")
    result = runs[algorithm]()
    return list(result.messages_per_superstep), list(result.updates_per_superstep)


def _graph_size(args):
    if args.graph is not None:
        if args.vertices is not None or args.edges is not None:
            raise SpecError("give either --graph or --vertices/--edges, not both")
        try:
            from ..graph import load_graph
        except ImportError:
            raise ConfigError("the graph toolkit (gravfm.graph.load_graph) is not available; "
                              "use --vertices and --edges") from None
        graph = _prepare_graph(load_graph(args.graph), args.algorithm, args.root)
        return graph.num_vertices, graph.num_edges, graph
    if args.vertices is None or args.edges is None:
        raise SpecError("need --graph SPEC, or both --vertices N and --edges M")
    return args.vertices, args.edges, None


def _fmt_mteps(edges_per_s):
    return "unbounded" if math.isinf(edges_per_s) else f"{edges_per_s / 1e6:10.1f}"


def _print_prediction(prediction, platform, params):
    from ..model import LIMIT_DESCRIPTIONS

    print("PREDICTION of the analytical performance model (not a measurement)")
    print(f"  platform   {platform.name}: {platform.description}")
    print(f"  algorithm  {params.name}: m_vertex {params.m_vertex}, m_update {params.m_update}, "
          f"m_message {params.m_message}, m_edge {params.m_edge} bits; CPE {prediction.cpe}")
    print(f"  graph      |V| = {prediction.vertices:,}  |E| = {prediction.edges:,}  "
          f"|E|/|V| = {prediction.degree:.2f}")
    print(f"  arch       {ARCH_NAMES[prediction.arch]}; memory model: {prediction.memory_model}")
    how = "chosen by the model" if prediction.chosen else "as given"
    fits = "fits" if prediction.fits else "DOES NOT FIT"
    print(f"  config     {prediction.fpgas} FPGA(s) x {prediction.pes} PEs per FPGA ({how}); "
          f"graph {fits} (needs >= {prediction.fpgas_needed} FPGA(s))")
    print()
    print(f"  {'limit':<11} {'predicted MTEPS':>15}   bounded by")
    for name, value in prediction.limits.items():
        mark = "   <- bottleneck" if name == prediction.bottleneck else ""
        print(f"  {name:<11} {_fmt_mteps(value):>15}   {LIMIT_DESCRIPTIONS[name]}{mark}")
    if prediction.fpgas == 1:
        print(f"  {'L_if, L_net':<11} {'-':>15}   no network with a single FPGA")
    print()
    print(f"predicted T_sys = {prediction.t_sys_mteps:.1f} MTEPS (bottleneck: {prediction.bottleneck})")
    for note in prediction.notes:
        print(f"note: {note}")


def _print_sweep(predictions, max_fpgas):
    from ..model import LIMIT_DESCRIPTIONS

    names = [name for name in LIMIT_DESCRIPTIONS if any(name in p.limits for p in predictions)]
    print(f"PREDICTED limits against the number of FPGAs (MTEPS, {predictions[0].pes} PEs per FPGA)")
    print("  n_FPGA" + "".join(f"{name:>12}" for name in names) + f"{'T_sys':>12}  bottleneck")
    for prediction in predictions:
        cells = "".join(f"{_fmt_mteps(prediction.limits.get(name, math.inf)):>12}" for name in names)
        mark = "*" if prediction.fpgas > max_fpgas else " "
        print(f"  {prediction.fpgas:>5}{mark}{cells}{prediction.t_sys_mteps:>12.1f}  {prediction.bottleneck}")
    if any(prediction.fpgas > max_fpgas for prediction in predictions):
        print(f"  * beyond the platform's {max_fpgas} FPGAs: extrapolated")


def _print_supersteps(result):
    work = "work, network time from the updates," if result.updates is not None and result.steady.arch == "gravfm" \
        else "work at T_sys"
    print(f"SUPERSTEP-AWARE PREDICTION ({result.combine} of {work} and synchronization latency)")
    print(f"  {len(result.messages)} supersteps, {result.total_messages:,} traversed edges; latency "
          f"{result.latency_cycles} cycles per superstep; {result.latency_bound_supersteps} superstep(s) "
          f"latency-bound")
    print(f"  predicted run time {result.total_time_s * 1e3:.4f} ms "
          f"({result.total_time_s * result.f_clk_hz:,.0f} cycles at f_clk)")
    print(f"predicted throughput over the run = {result.teps / 1e6:.1f} MTEPS "
          f"(steady-state T_sys {result.steady.t_sys_mteps:.1f})")


def run(args):
    from .. import model

    if args.list_platforms:
        for name in model.builtin_platforms():
            print(f"{name:<16} {model.load_platform(name).description}")
        return 0
    platform = model.load_platform(args.platform)
    params = model.algorithm_params(args.algorithm, m_vertex=args.m_vertex, m_update=args.m_update,
                                    m_message=args.m_message, m_edge=args.m_edge)
    vertices, edges, graph = _graph_size(args)
    options = {"arch": args.arch, "memory_model": args.memory_model}
    report = {}

    prediction = model.predict(platform, params, vertices, edges, fpgas=args.fpgas, pes=args.pes, **options)
    _print_prediction(prediction, platform, params)
    report["prediction"] = prediction.to_dict()

    if args.sweep_fpgas:
        predictions = model.sweep(platform, params, vertices, edges, _parse_range(args.sweep_fpgas),
                                  pes=args.pes, **options)
        print()
        _print_sweep(predictions, platform.network.max_fpgas)
        plot_path = Path(args.plot or "model-sweep.png")
        from ..model.plot import plot_sweep

        plot_sweep(predictions, plot_path, max_fpgas=platform.network.max_fpgas)
        print(f"plot of the predicted limits written to {plot_path}")
        report["sweep"] = [entry.to_dict() for entry in predictions]
        report["plot"] = str(plot_path)
    elif args.plot:
        raise SpecError("--plot needs --sweep-fpgas")

    if args.updates and not args.messages:
        raise SpecError("--updates needs --messages")
    if args.supersteps or args.messages:
        if args.messages:
            messages = _parse_counts(args.messages, "--messages")
            updates = _parse_counts(args.updates, "--updates") if args.updates else None
        elif graph is not None:
            messages, updates = _reference_counts(graph, args.algorithm, args.root)
            if not any(messages):
                raise ConfigError(f"the {args.algorithm} reference run on {args.graph} traversed no edge "
                                  f"(root {args.root} has no out-edges?); no superstep prediction")
        else:
            raise SpecError("--supersteps needs --graph (to run the reference) or --messages")
        result = model.predict_supersteps(platform, params, vertices, edges, messages, fpgas=args.fpgas,
                                          pes=args.pes, combine=args.combine, updates_per_superstep=updates,
                                          **options)
        print()
        _print_supersteps(result)
        report["supersteps"] = result.to_dict()

    if args.json:
        write_json(args.json, report)
    return 0
