"""`gravfm board`: the boards gravfm builds for, and a board's bitstream (or project)."""

from ..algorithms.loading import resolve_algorithm
from ..board import require_board_extra
from ..board.boards import BOARDS, get_board
from ..errors import ConfigError
from ..flow.planning import system_config
from ..provenance import provenance
from .common import write_json

BUILD_HELP = ("build the board SoC with the design: a bitstream with the open tools (ECP5 boards) or a "
              "generated Vivado project (Xilinx boards)")


def register(subparsers):
    parser = subparsers.add_parser("board", help="boards: list them, build a bitstream or a project",
                                   description="Put a generated FPGA top on a board: the LiteX SoC around it "
                                               "(DRAM controller, host bridge, soft CPU for DRAM levelling), "
                                               "built to a bitstream or a vendor project. See docs/boards.md.")
    commands = parser.add_subparsers(dest="board_command", metavar="COMMAND", required=True)
    listing = commands.add_parser("list", help="the boards and what is built for each")
    listing.set_defaults(handler=run_list)
    build = commands.add_parser("build", help=BUILD_HELP, description=BUILD_HELP + ".")
    build.add_argument("algorithm", help="registered algorithm name or FILE.py:NAME")
    build.add_argument("--board", required=True, metavar="NAME", help=f"one of: {', '.join(BOARDS)}")
    build.add_argument("--pes", type=int, default=1, help="PEs on the FPGA (default 1)")
    build.add_argument("--fpgas", type=int, default=1,
                       help="FPGAs of the rack this board joins (default 1): the same bitstream for every board, "
                            "a link per peer on the board's connector pins or transceiver lanes (docs/boards.md)")
    build.add_argument("--link", metavar="NAME",
                       help="with --fpgas 2 or more: how the boards are joined, one of the board's links (default: "
                            "its first; `gravfm board list` names them, e.g. ecpix5: pmod, sata)")
    build.add_argument("--out", required=True, metavar="DIR",
                       help="build folder (not inside the system's temporary folder: the YoWASP tools cannot "
                            "see it)")
    build.add_argument("--json", metavar="FILE", help="write the figures (clocks, utilisation, fit) as JSON")
    build.add_argument("--design-clock", type=float, default=None, metavar="MHZ",
                       help="the design's clock from the board's PLL (default: the board's)")
    build.add_argument("--edge-memory", choices=("offchip", "onchip"), default="offchip",
                       help="offchip (default): edges in the board's DRAM; onchip: in block RAM")
    build.add_argument("--local-bits", type=int, default=8, help="log2 vertices per PE (default 8)")
    build.add_argument("--edges-per-pe", type=int, default=4096,
                       help="edges per PE on chip, or the longest edge list off chip (default 4096)")
    build.add_argument("--seed", type=int, default=1, help="nextpnr placement seed (default 1)")
    build.set_defaults(handler=run_build)


def board_link_check(config, board, design_clk_hz, link=None):
    """The link check of a board's links of kind ``link`` (a name; None: the board's default; none
    for one FPGA): ``retransmit``, its timers those of the links (a SERWB link over a short cable, a
    transceiver lane: ``link_config`` of :attr:`gravfm.board.boards.Board.links`) with the design
    at ``design_clk_hz``."""
    from ..board.serwb import link_item_bits  # deferred: Amaranth (the link check's planner)

    link = board.links_for(config.fpgas, link)
    if link is None:
        return None
    return link.link_config(config, board, design_clk_hz).link_check(item_bits=link_item_bits(config))


def run_list(args):
    for board in BOARDS.values():
        flow = "bitstream (Yosys, nextpnr, ecppack)" if board.open_flow else "Vivado project (not built here)"
        links = "; links (--link): " + "; ".join(f"{k.name}: {k.summary}" for k in board.links) if board.links else ""
        print(f"{board.name:12s} {board.description}; host over {board.transport}; {flow}{links}")
    return 0


def run_build(args):
    board = get_board(args.board)
    require_board_extra("gravfm board build")
    if args.pes < 1:
        raise ConfigError(f"--pes must be at least 1, not {args.pes}")
    if not 1 <= args.fpgas <= 4:
        raise ConfigError(f"--fpgas must be 1 to 4 (a link per peer), not {args.fpgas}")
    if args.link is not None and args.fpgas == 1:
        raise ConfigError(f"--link {args.link} goes with --fpgas 2 or more (one FPGA has no links)")
    if args.design_clock is not None and not args.design_clock > 0:
        raise ConfigError(f"--design-clock must be a positive frequency in MHz, not {args.design_clock}")
    from ..board.build import build_board, check_memory_fit  # deferred: Amaranth and Yosys's wrappers
    from ..hw import FpgaTop  # deferred: Amaranth
    from ..hw.unused import silence_unused  # deferred: Amaranth

    algorithm = resolve_algorithm(args.algorithm)
    # Off chip: the PEs' AXI4 ports address the board's DRAM in the 128-bit words LiteDRAM serves.
    memory = {"edge_memory": "offchip", "memory_word_bits": 128,
              "memory_addr_bits": (board.dram_bytes - 1).bit_length()} if args.edge_memory == "offchip" else None
    config = system_config(algorithm, fpgas=args.fpgas, pes=args.pes, local_bits=args.local_bits,
                           edges_per_pe=args.edges_per_pe, edge_memory=memory)
    check_memory_fit(config, board)   # before the top is even made
    design_clk_hz = board.design_clk_hz if args.design_clock is None else args.design_clock * 1e6
    link_check = board_link_check(config, board, design_clk_hz, args.link)   # refuses a board without (enough) links
    origin = provenance()
    top = FpgaTop(config, link_check=link_check)
    try:
        figures = build_board(top, board=board.name, out=args.out, link=args.link, seed=args.seed,
                              design_clk_hz=design_clk_hz)
    except BaseException:
        silence_unused(top)   # refused before its export: no "never used" warning after the one line
        raise
    figures.update(algorithm=algorithm.name, pes=args.pes, fpgas=args.fpgas, local_bits=args.local_bits,
                   edges_per_pe=args.edges_per_pe, edge_memory=args.edge_memory)
    for clock in figures.get("clocks", ()):
        print(f"  clock {clock['net']}: {clock['fmax_mhz']:.1f} MHz against {clock['goal_mhz']:.1f} "
              f"({'met' if clock['met'] else 'NOT met'})")
    if figures.get("built"):
        print(f"bitstream: {figures['bitstream']} ({figures['build_s']:.0f} s)")
    else:
        print(f"project: {figures['gateware']} — {figures['note']}")
    if args.json:
        write_json(args.json, {**figures, "provenance": origin}, args)
    return 0
