"""``gravfm demo``: the default end-to-end run (``make run``): WCC on RMAT scale 12, 1 FPGA x 4 PEs."""

from .common import positive_int
from .run_cmd import add_run_arguments, execute, options_from_args

__all__ = ["register", "handle", "DEMO_ALGORITHM", "DEMO_GRAPH", "DEMO_PES"]

DEMO_ALGORITHM = "wcc"
DEMO_GRAPH = "rmat:scale=12,ef=16,seed=1"
DEMO_PES = 4


def register(subparsers):
    parser = subparsers.add_parser(
        "demo", help=f"run {DEMO_ALGORITHM.upper()} on {DEMO_GRAPH} with 1 FPGA x {DEMO_PES} PEs",
        description="The default demo: generate, build, simulate and verify WCC on an RMAT graph of "
                    "scale 12 with one FPGA of four PEs, and print the report. Every option of "
                    "`gravfm run` may override the defaults.")
    add_run_arguments(parser)
    parser.add_argument("--algorithm", default=DEMO_ALGORITHM, metavar="ALGO",
                        help=f"registered algorithm or FILE.py:NAME (default {DEMO_ALGORITHM})")
    parser.add_argument("--graph", default=DEMO_GRAPH, metavar="SPEC",
                        help=f"graph file or generator spec (default {DEMO_GRAPH})")
    parser.add_argument("--pes", type=positive_int, default=DEMO_PES, help=f"PEs per FPGA (default {DEMO_PES})")
    parser.set_defaults(handler=handle)


def handle(args):
    return execute(options_from_args(args, args.algorithm, args.graph, args.pes), args)
