"""The off-chip edge memory options of ``gravfm run`` (and ``demo``)."""

from argparse import ArgumentTypeError

from .common import positive_int

__all__ = ["add_memory_arguments", "memory_overrides"]



def _non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise ArgumentTypeError(f"must not be negative: {value}")
    return value


def _bandwidth(text):
    try:
        value = float(text)
    except ValueError:
        raise ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise ArgumentTypeError(f"must be positive: {text}")
    return value


#: flag -> (gravfm.flow.memory.MEMORY_OPTIONS name, parser, metavar, help): the figures of the
#: platform's [memory] that a run may override, each passed on under its option name.
_OVERRIDES = {
    "--memory-bandwidth": ("bandwidth_gib_s", _bandwidth, "GIB_S",
                           "memory bandwidth per FPGA in GiB/s at the platform clock"),
    "--memory-latency": ("latency_cycles", positive_int, "CYCLES", "cycles from a request to its data"),
    "--memory-jitter": ("latency_jitter_cycles", _non_negative_int, "CYCLES",
                        "up to this many cycles more per access (pseudo-random)"),
    "--memory-banks": ("banks", positive_int, "N", "banks (vaults) with their own queues"),
    "--requests-in-flight": ("requests_in_flight", positive_int, "N",
                             "outstanding memory requests per PE (the paper's 64)"),
    "--memory-seed": ("seed", _non_negative_int, "N", "seed of the simulated memory's jitter and reordering"),
}


def add_memory_arguments(parser):
    group = parser.add_argument_group("off-chip edge memory (default figures: the platform's [memory])")
    group.add_argument("--edge-memory", choices=("onchip", "offchip"), default=None,
                       help="where the PEs keep their edges: block RAM, or off-chip memory behind an AXI4 "
                            "port per PE (default: the platform's edge_storage; ac510x4: offchip)")
    for flag, (_, parse, metavar, text) in _OVERRIDES.items():
        group.add_argument(flag, type=parse, default=None, metavar=metavar, help=text)
    group.add_argument("--memory-fault", action="append", choices=("reorder", "stuck"), default=[],
                       help="simulated memory faults: reorder (responses in random order across ids), "
                            "stuck (never responds); repeatable")


def _dest(flag):
    return flag.removeprefix("--").replace("-", "_")


def memory_overrides(args):
    """The :data:`gravfm.flow.memory.MEMORY_OPTIONS` given on the command line."""
    given = {name: getattr(args, _dest(flag)) for flag, (name, *_) in _OVERRIDES.items()}
    overrides = {name: value for name, value in given.items() if value is not None}
    overrides.update({fault: True for fault in args.memory_fault})
    return overrides
