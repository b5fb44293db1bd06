"""`gravfm synth`: resources, Fmax and PEs per device of a generated FPGA top, with open tools."""

from pathlib import Path

from ..algorithms import get_algorithm
from ..architectures import BUILT_ARCHITECTURES, DEFAULT_ARCHITECTURE
from ..errors import ConfigError
from ..provenance import provenance
from ..synth.targets import NEXTPNR_ROUTERS, TARGETS
from .common import add_capacity_arguments, add_deprecated_option, local_bits_of, positive_int, write_json


def register(subparsers):
    parser = subparsers.add_parser(
        "synth", help="synthesise one FPGA of a generated system (Yosys, nextpnr)",
        description="Synthesise one FPGA top with Yosys (and place-and-route it with nextpnr where an "
                    "open flow exists) and report LUTs, flip-flops, block RAM, DSPs, Fmax, the "
                    "critical path, and how many PEs fit each known device for a stated graph size.")
    parser.add_argument("algorithm", help="registered algorithm name (e.g. wcc, bfs)")
    parser.add_argument("--pes", type=int, default=4, help="PEs on the FPGA (default 4)")
    parser.add_argument("--fpgas", type=int, default=1, metavar="N",
                        help="synthesise FPGA 0 of an N-FPGA GraVF-M system: its PEs, network, neighbour "
                             "filter and link ends, the link ports wrapped like the host ports (default 1: "
                             "the single-FPGA top)")
    parser.add_argument("--arch", choices=BUILT_ARCHITECTURES, default=DEFAULT_ARCHITECTURE,
                        help=f"the architecture built (default {DEFAULT_ARCHITECTURE}; as `gravfm run --arch`)")
    parser.add_argument("--target", choices=sorted(TARGETS), default="ecp5-85",
                        help="FPGA family and device to synthesise for (default ecp5-85, the Lattice ECP5 "
                             "LFE5U-85F, placed and routed by nextpnr)")
    parser.add_argument("--vertices", type=positive_int, default=1 << 16, metavar="N",
                        help="|V| of the graph the system's memories must hold, for the PEs that fit "
                             "(default 65536; as `gravfm model --vertices`)")
    parser.add_argument("--edges", type=positive_int, default=1 << 20, metavar="M",
                        help="|E| of that graph (default 1048576)")
    add_deprecated_option(parser, "--capacity-vertices", "--vertices", dest="vertices", type=positive_int)
    add_deprecated_option(parser, "--capacity-edges", "--edges", dest="edges", type=positive_int)
    parser.add_argument("--edge-memory", choices=("onchip", "offchip"), default="onchip",
                        help="onchip (default): edges in block RAM; offchip: each PE reads its edges through "
                             "an AXI4 read port, a top-level port of the synthesised FPGA (the paper's HMC)")
    parser.add_argument("--offchip-edges", dest="edge_memory", action="store_const", const="offchip",
                        help="same as --edge-memory offchip")
    add_capacity_arguments(parser, vertices_default=256, edges_default=4096)
    add_deprecated_option(parser, "--build-local-bits", "--vertices-per-pe 2^B", dest="vertices_per_pe", type=int,
                          convert=lambda bits: 1 << bits)
    add_deprecated_option(parser, "--build-edges-per-pe", "--edges-per-pe", dest="edges_per_pe", type=positive_int)
    parser.add_argument("--update-lanes", type=int, choices=(1, 2), default=None,
                        help="updates a PE takes per cycle (default: as `gravfm run` builds this many PEs: "
                             "2 from 8 PEs on, with 64-deep network FIFOs)")
    parser.add_argument("--freq", type=float, default=None, metavar="MHZ",
                        help="clock nextpnr places and routes for (default: the target's goal, 150 MHz "
                             "for ecp5-85); the Fmax reported is the one nextpnr measures")
    parser.add_argument("--seed", type=int, default=1,
                        help="nextpnr placement seed (default 1); Fmax moves a few percent between seeds")
    parser.add_argument("--router", choices=NEXTPNR_ROUTERS, default="router1",
                        help="nextpnr router (default router1, nextpnr's own default; router2 finishes "
                             "congested designs that router1 can take an hour on, usually at a lower Fmax)")
    parser.add_argument("--workdir", default="build/synth", help="where tool files and logs go")
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    parser.set_defaults(handler=run)


def run(args):
    # deferred: Amaranth (heavy)
    from ..synth.system_report import GraphCapacity, synth_system

    if args.pes < 1:
        raise ConfigError(f"--pes must be at least 1, not {args.pes}")
    if args.fpgas < 1:
        raise ConfigError(f"--fpgas must be at least 1, not {args.fpgas}")
    if args.freq is not None and not args.freq > 0:
        raise ConfigError(f"--freq must be a positive frequency in MHz, not {args.freq}")
    algorithm = get_algorithm(args.algorithm)
    of_system = f"-fpga0of{args.fpgas}" if args.fpgas > 1 else ""
    arch = f"-{args.arch}" if args.arch != DEFAULT_ARCHITECTURE else ""
    workdir = Path(args.workdir) / f"{algorithm.name}{arch}-{args.pes}pe{of_system}-{args.target}"
    which = f" (FPGA 0 of {args.fpgas})" if args.fpgas > 1 else ""
    print(f"synthesising {algorithm.name} x {args.pes} PEs{which} for {args.target} in {workdir} ...", flush=True)
    # Taken before elaboration: a run lasts up to an hour, and the figures describe the RTL of now.
    origin = provenance(command=args.command_line)
    report = synth_system(algorithm, pes=args.pes, fpgas=args.fpgas, target=args.target, workdir=workdir,
                          capacity=GraphCapacity(args.vertices, args.edges),
                          offchip_edges=args.edge_memory == "offchip",
                          build_local_bits=local_bits_of(args.vertices_per_pe),
                          build_edges_per_pe=args.edges_per_pe, update_lanes=args.update_lanes,
                          freq_mhz=args.freq, seed=args.seed, router=args.router, arch=args.arch)
    _print(report)
    if args.json:
        write_json(args.json, {**report, "provenance": origin}, args)
    return 0


def _print(report):
    fpga, per_pe = report["fpga"], report["per_pe"]
    which = f", FPGA 0 of {report['fpgas']}" if report["fpgas"] > 1 else ""
    print(f"{report['description']}: {report['algorithm']}, {report['pes']} PEs{which} "
          f"({fpga['seconds']} s of synthesis)")
    uram = f", {fpga['uram_blocks']} URAM" if fpga.get("uram_blocks") else ""
    print(f"  per FPGA: {fpga['luts']} LUTs, {fpga['flip_flops']} FFs, {fpga['bram_blocks']} BRAM{uram}, "
          f"{fpga['dsps']} DSP")
    print(f"  per PE:   {per_pe['luts']} LUTs, {per_pe['flip_flops']} FFs, {per_pe['bram_blocks']} BRAM")
    if fpga["fmax_mhz"] is not None:
        path = fpga["critical_path"] or {}
        goal, seed, router = fpga.get("pnr_freq_mhz"), fpga.get("pnr_seed"), fpga.get("pnr_router")
        print(f"  Fmax after place-and-route: {fpga['fmax_mhz']:.1f} MHz "
              f"{f'(placed and routed for {goal:g} MHz, seed {seed}, {router}) ' if goal else ''}"
              f"(critical path {path.get('from')} -> {path.get('to')}, {path.get('delay_ns')} ns)")
    else:
        print("  Fmax: no open place-and-route for this family (resources only)")
    cap = report["capacity"]
    spread = f" over {report['fpgas']} FPGAs" if report["fpgas"] > 1 else ""
    print(f"  PEs that fit, for a graph of {cap['vertices']} vertices and {cap['edges']} edges{spread}"
          f"{' (edges off chip)' if cap['offchip_edges'] else ''}:")
    for name, fit in report["fits"].items():
        print(f"    {name:8s} {fit['pes_fit']} PEs (limited by {fit.get('limited_by', 'the search bound')}; "
              f"{fit['bram_blocks_per_pe']} BRAM blocks and ~{fit['luts_per_pe_estimate']} LUTs per PE)")
