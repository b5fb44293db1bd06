"""``gravfm model``: print the analytical model's prediction for a platform, algorithm and graph."""

import dataclasses
import math
from pathlib import Path

from .. import model
from ..algorithms import REGISTRY
from ..algorithms.engine import reference_layout
from ..algorithms.loading import resolve_algorithm
from ..algorithms.params import internal_params
from ..architectures import ARCH_NAMES_HELP, ARCHITECTURES, architecture_info
from ..errors import ConfigError, SpecError
from ..flow.planning import stated_vertexid_bits
from ..graph import load_graph
from ..hw.link_check import link_overhead_bits  # no Amaranth (a description)
from ..model import LIMIT_DESCRIPTIONS
from ..model.clock import platform_at
from ..model.plot import plot_sweep
from ..synth.clocks import clock_rates
from .common import check_output_file, parse_params, report_stream, write_json



def register(subparsers):
    parser = subparsers.add_parser(
        "model",
        help="predict throughput with the analytical performance model",
        description="Predict the throughput (MTEPS) of a platform with the analytical model of "
                    "GraVF-M (every limit, the bottleneck, T_sys) and choose the number of FPGAs "
                    "and PEs per FPGA, and (without --arch) the architecture. Every figure printed "
                    "is a prediction, not a measurement.",
    )
    parser.add_argument("--platform", default="ac510x4", metavar="NAME|PATH",
                        help="built-in platform name or platform TOML file (default: ac510x4)")
    parser.add_argument("--list-platforms", action="store_true", help="list the built-in platforms and exit")
    parser.add_argument("--algorithm", default="wcc", metavar="NAME",
                        help="algorithm: wcc, bfs, pagerank, sssp (named model parameters), FILE.py:NAME "
                             "(sizes from its layouts, as gravfm run takes them), or any name with all four "
                             "--m-* sizes")
    parser.add_argument("--graph", metavar="SPEC", help="graph file or generator spec (gravfm.graph.load_graph)")
    parser.add_argument("--vertices", type=int, metavar="N", help="|V| instead of --graph")
    parser.add_argument("--edges", type=int, metavar="M", help="|E| instead of --graph")
    parser.add_argument("--fpgas", type=int, metavar="N", help="number of FPGAs (default: chosen by the model)")
    parser.add_argument("--pes", type=int, metavar="P", help="PEs per FPGA (default: chosen by the model)")
    parser.add_argument("--arch", choices=ARCHITECTURES, default=None,
                        help=f"{ARCH_NAMES_HELP}. Default: predict every architecture and choose the best")
    parser.add_argument("--memory-model", choices=["simple", "granular", "layout"], default="simple",
                        help="memory limit: equation (2) (default), worst-case access granularity, or the "
                             "words this implementation's layout reads (estimated for uniformly random "
                             "destinations); all three are printed")
    parser.add_argument("--link-check", choices=["off", "detect", "retransmit"], default="off",
                        help="count the link check's frame bits (sequence number, CRC, acknowledgement) in "
                             "m_update and m_message, as gravfm run --link-check does (default off)")
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
    parser.add_argument("--root", type=int, default=None, metavar="V",
                        help="root vertex (the file's own id) for rooted algorithms' references "
                             "(default: the algorithm's, vertex 0)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="an algorithm parameter for the reference run of --supersteps (repeatable), as "
                             "gravfm run takes it, e.g. k=3")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON ('-': standard output)")
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


def _algorithm(text):
    """The Algorithm object named by ``--algorithm`` (registered, or ``FILE.py:NAME``), or None
    for a name known to the model only by its parameters."""
    if text in REGISTRY or text.endswith(".py") or ".py:" in text:
        return resolve_algorithm(text)
    return None


def _prepared(args, algorithm):
    """(graph as the algorithm runs on it, its parameters) for ``--graph``; ``--root`` is the
    file's own id of the root, as in ``gravfm run``."""
    graph = load_graph(args.graph)
    if algorithm is None:
        if args.param:
            raise ConfigError(f"--param: {args.algorithm!r} is known to the model by its sizes only; "
                              f"parameters need a registered algorithm or FILE.py:NAME")
        return graph, {}
    given = parse_params(args.param, args.root if "root" in algorithm.default_params else None)
    params = algorithm.params(internal_params(graph, given, algorithm.name))
    return algorithm.prepare(graph, params), params


def _reference_counts(graph, algorithm, params):
    """(messages, updates) per superstep of the software reference run."""
    if algorithm is None:
        raise ConfigError(f"no software reference for {graph.name!r}'s algorithm; pass --messages instead")
    with reference_layout(algorithm):
        result = algorithm.reference(graph, params)
    return list(result.messages_per_superstep), list(result.updates_per_superstep)


def _graph_size(args, algorithm):
    """(|V|, |E|, prepared graph or None, algorithm parameters)."""
    if args.graph is not None:
        if args.vertices is not None or args.edges is not None:
            raise SpecError("give either --graph or --vertices/--edges, not both")
        graph, params = _prepared(args, algorithm)
        return graph.num_vertices, graph.num_edges, graph, params
    if args.vertices is None or args.edges is None:
        raise SpecError("need --graph SPEC, or both --vertices N and --edges M")
    return args.vertices, args.edges, None, {}


def _model_params(args, algorithm, vertices, edges):
    """The model's sizes: named defaults of a built-in algorithm, or the layouts of a user's
    algorithm with vertex ids as wide as a run of --fpgas x --pes (1 x 1 when not given)
    makes them, as ``gravfm run`` takes them; --m-* options override."""
    overrides = {name: getattr(args, name) for name in ("m_vertex", "m_update", "m_message", "m_edge")}
    if algorithm is None:
        return model.algorithm_params(args.algorithm, **overrides)
    bits = stated_vertexid_bits(vertices, edges, (args.fpgas or 1) * (args.pes or 1))
    params = model.model_params(algorithm, vertexid_bits=bits)
    return dataclasses.replace(params, **{key: value for key, value in overrides.items() if value is not None})


def _with_link_check(args, platform, params, arch):
    """``params`` with the link check's frame bits in m_update and m_message (``--link-check``),
    priced on ``arch``'s item, as ``gravfm run --link-check`` counts them."""
    if args.link_check == "off":
        return params
    item_bits = architecture_info(arch).model_item_bits(m_update=params.m_update, m_message=params.m_message)
    overhead = link_overhead_bits(platform, args.fpgas or platform.network.max_fpgas, args.link_check,
                                  item_bits=item_bits)
    return model.with_link_overhead(params, overhead)


def _fmt_mteps(edges_per_s):
    return "unbounded" if math.isinf(edges_per_s) else f"{edges_per_s / 1e6:10.1f}"


def _print_prediction(prediction, platform, params, clock):
    print("PREDICTION of the analytical performance model (not a measurement)")
    print(f"  platform   {platform.name}: {platform.description}")
    print(f"  clock      f_clk {clock['mhz']:g} MHz ({clock['label']})")
    print(f"  algorithm  {params.name}: m_vertex {params.m_vertex}, m_update {params.m_update}, "
          f"m_message {params.m_message}, m_edge {params.m_edge} bits; CPE {prediction.cpe}")
    print(f"  graph      |V| = {prediction.vertices:,}  |E| = {prediction.edges:,}  "
          f"|E|/|V| = {prediction.degree:.2f}")
    print(f"  arch       {architecture_info(prediction.arch).label}; memory model: {prediction.memory_model}")
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
    details = prediction.details
    if "update_lanes" in details:
        print(f"  L_intake at {details['update_lanes']} update lane(s) per PE (updates a PE takes per cycle)")
    if "memory_channels" in details:
        print(f"  L_mem from {details['memory_channels']} pseudo-channels of {details['channel_bandwidth_gib_s']:g} "
              f"GiB/s, each PE's edges in one: {details['pes_per_channel']} PE(s) on the busiest channel")
    if "L_mem_layout_mteps" in details:
        print(f"  L_mem by memory model: simple {details['L_mem_simple_mteps']:.1f}, granular (worst case) "
              f"{details['L_mem_granular_mteps']:.1f}, layout {details['L_mem_layout_mteps']:.1f} MTEPS "
              f"(words per pass: {details['layout_words_source']})")
    print()
    print(f"predicted T_sys = {prediction.t_sys_mteps:.1f} MTEPS (bottleneck: {prediction.bottleneck})")
    for note in prediction.notes:
        print(f"note: {note}")


def _print_choice(choice):
    """Each architecture's predicted T_sys and bottleneck, and the best."""
    print("PREDICTED per architecture (n and p chosen for each unless given; predictions, not measurements)")
    print(f"  {'arch':<8} {'config':>9} {'T_sys MTEPS':>12}   bottleneck")
    for arch, prediction in choice.predictions.items():
        built = "" if architecture_info(arch).built else "   (hardware not built yet)"
        mark = "   <- best" if arch == choice.best else ""
        print(f"  {arch:<8} {prediction.fpgas:>3} x {prediction.pes:<3} {prediction.t_sys_mteps:>12.1f}   "
              f"{prediction.bottleneck}{mark}{built}")
    for arch, reason in choice.left_out.items():
        print(f"  {arch:<8} not predicted: {reason}")
    best = choice.best_prediction
    print(f"predicted best architecture: {architecture_info(choice.best).label}, "
          f"{best.t_sys_mteps:.1f} MTEPS on {best.fpgas} FPGA(s) x {best.pes} PEs")


def _print_sweep(predictions, max_fpgas):
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
    network_work = result.updates is not None and architecture_info(result.steady.arch).broadcasts
    work = "work, network time from the updates," if network_work else "work at T_sys"
    print(f"SUPERSTEP-AWARE PREDICTION ({result.combine} of {work} and synchronization latency)")
    print(f"  {len(result.messages)} supersteps, {result.total_messages:,} traversed edges; latency "
          f"{result.latency_cycles} cycles per superstep; {result.latency_bound_supersteps} superstep(s) "
          f"latency-bound")
    print(f"  predicted run time {result.total_time_s * 1e3:.4f} ms "
          f"({result.total_time_s * result.f_clk_hz:,.0f} cycles at f_clk)")
    print(f"predicted throughput over the run = {result.teps / 1e6:.1f} MTEPS "
          f"(steady-state T_sys {result.steady.t_sys_mteps:.1f})")


def _at_measured_fmax(clock, platform, params, vertices, edges, prediction, options):
    """Print T_sys for the same configuration at the Fmax measured for its top (or that none is);
    return ``clock`` with it (``t_sys_mteps``)."""
    if clock["mhz"] is None:
        print(f"predicted T_sys at a measured Fmax: none ({clock['label']})")
        return {**clock, "t_sys_mteps": None}
    at_fmax = model.predict(platform_at(platform, clock["mhz"]), params, vertices, edges, fpgas=prediction.fpgas,
                            pes=prediction.pes, **options)
    print(f"predicted T_sys at this top's measured Fmax, {clock['mhz']:.1f} MHz ({clock['label']}) = "
          f"{at_fmax.t_sys_mteps:.1f} MTEPS (bottleneck: {at_fmax.bottleneck})")
    return {**clock, "t_sys_mteps": at_fmax.t_sys_mteps}


def run(args):
    if args.list_platforms:
        for name in model.builtin_platforms():
            print(f"{name:<16} {model.load_platform(name).description}")
        return 0
    check_output_file(args.json, stdout=True)
    with report_stream(args):
        report = _predict(args)
    if args.json:
        write_json(args.json, report, args)
    return 0


def _predict(args):
    """Print the predictions the options ask for; return them as the ``--json`` document."""
    platform = model.load_platform(args.platform)
    algorithm = _algorithm(args.algorithm)
    vertices, edges, graph, algorithm_params = _graph_size(args, algorithm)
    base = _model_params(args, algorithm, vertices, edges)
    report = {}
    if args.arch is None:
        by_arch = {arch: _with_link_check(args, platform, base, arch) for arch in ARCHITECTURES}
        choice = model.choose_architecture(platform, by_arch, vertices, edges, fpgas=args.fpgas, pes=args.pes,
                                           memory_model=args.memory_model)
        arch, prediction, params = choice.best, choice.best_prediction, by_arch[choice.best]
    else:
        arch, choice = args.arch, None
        params = _with_link_check(args, platform, base, arch)
        prediction = model.predict(platform, params, vertices, edges, fpgas=args.fpgas, pes=args.pes, arch=arch,
                                   memory_model=args.memory_model)
    options = {"arch": arch, "memory_model": args.memory_model}
    clocks = clock_rates(platform, algorithm=params.name, fpgas=prediction.fpgas, pes=prediction.pes,
                         edge_memory=platform.memory.edge_storage, arch=arch)
    _print_prediction(prediction, platform, params, clocks[0])
    report["prediction"] = prediction.to_dict()
    report["clocks"] = [{**clocks[0], "t_sys_mteps": prediction.t_sys_mteps},
                        *(_at_measured_fmax(clock, platform, params, vertices, edges, prediction, options)
                          for clock in clocks[1:])]
    if choice is not None:
        print()
        _print_choice(choice)
        report["architectures"] = choice.to_dict()

    if args.sweep_fpgas:
        predictions = model.sweep(platform, params, vertices, edges, _parse_range(args.sweep_fpgas),
                                  pes=args.pes, **options)
        print()
        _print_sweep(predictions, platform.network.max_fpgas)
        plot_path = Path(args.plot or "model-sweep.png")

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
            messages, updates = _reference_counts(graph, algorithm, algorithm_params)
            if not any(messages):
                raise ConfigError(f"the {args.algorithm} reference run on {args.graph} traversed no edge "
                                  f"(root {args.root if args.root is not None else 'vertex 0'} has no out-edges?); no superstep "
                                  f"prediction")
        else:
            raise SpecError("--supersteps needs --graph (to run the reference) or --messages")
        result = model.predict_supersteps(platform, params, vertices, edges, messages, fpgas=args.fpgas,
                                          pes=args.pes, combine=args.combine, updates_per_superstep=updates,
                                          **options)
        print()
        _print_supersteps(result)
        report["supersteps"] = result.to_dict()
    return report
