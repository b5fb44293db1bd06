"""The off-chip edge memory options of ``gravfm run`` (and ``demo``)."""

from .common import positive_int

__all__ = ["add_memory_arguments", "memory_overrides"]

#: option dest -> gravfm.flow.memory.MEMORY_OPTIONS name
_OVERRIDES = {"memory_bandwidth": "bandwidth_gib_s", "memory_latency": "latency_cycles",
              "memory_jitter": "latency_jitter_cycles", "memory_banks": "banks",
              "requests_in_flight": "requests_in_flight", "memory_seed": "seed"}


def _non_negative_int(text):
    from argparse import ArgumentTypeError
    try:
        value = int(text)
    except ValueError:
        raise ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise ArgumentTypeError(f"must not be negative: {value}")
    return value


def _bandwidth(text):
    from argparse import ArgumentTypeError
    try:
        value = float(text)
    except ValueError:
        raise ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise ArgumentTypeError(f"must be positive: {text}")
    return value


def add_memory_arguments(parser):
    group = parser.add_argument_group("off-chip edge memory (default figures: the platform's [memory])")
    group.add_argument("--edge-memory", choices=("onchip", "offchip"), default=None,
                       help="where the PEs keep their edges: block RAM, or off-chip memory behind an AXI4 "
                            "port per PE (default: the platform's edge_storage; ac510x4: offchip)")
    group.add_argument("--memory-bandwidth", type=_bandwidth, default=None, metavar="GIB_S",
                       help="memory bandwidth per FPGA in GiB/s at the platform clock")
    group.add_argument("--memory-latency", type=positive_int, default=None, metavar="CYCLES",
                       help="cycles from a request to its data")
    group.add_argument("--memory-jitter", type=_non_negative_int, default=None, metavar="CYCLES",
                       help="up to this many cycles more per access (pseudo-random)")
    group.add_argument("--memory-banks", type=positive_int, default=None, metavar="N",
                       help="banks (vaults) with their own queues")
    group.add_argument("--requests-in-flight", type=positive_int, default=None, metavar="N",
                       help="outstanding memory requests per PE (the paper's 64)")
    group.add_argument("--memory-seed", type=_non_negative_int, default=None, metavar="N",
                       help="seed of the simulated memory's jitter and reordering")
    group.add_argument("--memory-fault", action="append", choices=("reorder", "stuck"), default=[],
                       help="simulated memory faults: reorder (responses in random order across ids), "
                            "stuck (never responds); repeatable")


def memory_overrides(args):
    """The :data:`gravfm.flow.memory.MEMORY_OPTIONS` given on the command line."""
    overrides = {name: getattr(args, dest) for dest, name in _OVERRIDES.items() if getattr(args, dest) is not None}
    overrides.update({fault: True for fault in args.memory_fault})
    return overrides
