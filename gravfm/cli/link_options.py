"""The ``--link-*`` options of ``gravfm run`` and ``gravfm demo``: every parameter of the simulated
links (:class:`gravfm.hw.link.LinkConfig`), their faults and the link check.

Options not given keep the platform's link (bandwidth per link, latency, a FIFO of the latency
plus 16); each one given replaces that field (``RunOptions.link_options``).
"""

import argparse
import re

__all__ = ["add_link_arguments", "link_options_from_args", "dead_link"]

MODES = ("off", "detect", "retransmit")


def _number(kind, low, high=None, *, low_open=False):
    """An argparse type: a ``kind`` number in [low, high) (or (low, high) with ``low_open``)."""
    def convert(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
        if value < low or (low_open and value == low) or (high is not None and value >= high):
            if high is None:
                bounds = f"{'>' if low_open else '>='} {low:g}"
            else:
                bounds = f"in {'(' if low_open else '['}{low:g}, {high:g})"
            raise argparse.ArgumentTypeError(f"expected a value {bounds}, not {text}")
        return value
    return convert


UNLIMITED = "unlimited"


def _bandwidth(text):
    """Bits per cycle, or ``unlimited`` (one item per cycle)."""
    if text.lower() == UNLIMITED:
        return UNLIMITED
    return _number(float, 0, low_open=True)(text)


def dead_link(text):
    """An argparse type: ``A-B`` (dead from the start) or ``A-B@CYCLES`` (dead that many cycles
    after the link's first item), as ``(A, B, CYCLES)``."""
    match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*(?:@\s*(\d+))?\s*", text)
    if not match or match[1] == match[2]:
        raise argparse.ArgumentTypeError(f"expected SENDER-RECEIVER[@CYCLES] with two different FPGAs, "
                                         f"e.g. 0-1 or 0-1@5000, not {text!r}")
    return int(match[1]), int(match[2]), int(match[3] or 0)


def bit_error_rate(text):
    """An argparse type: a bit-error rate in [0, 0.5)."""
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a rate such as 1e-5, not {text!r}") from None
    if not 0 <= rate < 0.5:
        raise argparse.ArgumentTypeError(f"a bit-error rate is in [0, 0.5), not {text}")
    return rate


#: option -> (LinkConfig field, argparse type, metavar, help)
OPTIONS = {
    "--link-bandwidth": ("bits_per_cycle", _bandwidth, "BITS",
                         "bits per cycle on each link, or 'unlimited' (default: the platform's share)"),
    "--link-latency": ("latency_cycles", _number(int, 0, 1 << 14), "CYCLES",
                       "cycles an item spends on a link (default: the platform's)"),
    "--link-fifo-depth": ("fifo_depth", _number(int, 1), "N",
                          "items in flight on a link at most (default: the latency + 16)"),
    "--link-reorder": ("reorder_window", _number(int, 1), "N",
                       "let an item overtake up to N-1 others (default 1: in order)"),
    "--link-stall": ("stall_probability", _number(float, 0, 1), "P",
                     "chance that a link's output stalls in a cycle (default 0)"),
    "--link-seed": ("seed", _number(int, 0), "N", "seed of the links' stalls, reordering and faults (default 1)"),
    "--link-drop": ("drop_rate", _number(float, 0, 1), "RATE", "items lost per item (default 0)"),
    "--link-duplicate": ("duplicate_rate", _number(float, 0, 1), "RATE", "items delivered twice per item"),
    "--link-flip": ("flip_rate", _number(float, 0, 1), "RATE", "items delivered with one bit flipped per item"),
    "--link-check": ("check", None, None,
                     "the links' reliability layer: off (default: no added bits, the hardware of old), "
                     "detect (sequence numbers and a CRC stop the run at the first fault, naming it) or "
                     "retransmit (go-back-N replay: the run recovers)"),
    "--link-replay-depth": ("replay_depth", _number(int, 4), "N",
                            "retransmit: frames a sender keeps for replay, a power of two (default: a round trip)"),
}


def add_link_arguments(parser):
    """Add the ``--link-*`` options (several FPGAs) to ``parser``."""
    group = parser.add_argument_group("simulated links (several FPGAs)")
    for option, (field, kind, metavar, text) in OPTIONS.items():
        if kind is None:
            group.add_argument(option, dest=f"link_{field}", choices=MODES, default=None, help=text)
        else:
            group.add_argument(option, dest=f"link_{field}", type=kind, metavar=metavar, default=None, help=text)
    group.add_argument("--link-dead", dest="link_dead", type=dead_link, action="append", default=[],
                       metavar="A-B[@CYCLES]",
                       help="the link from FPGA A to B delivers nothing (from CYCLES cycles after its first "
                            "item; default: from the start); repeatable")


def link_options_from_args(args):
    """The ``LinkConfig`` fields the options set (``RunOptions.link_options``)."""
    options = {field: getattr(args, f"link_{field}") for field, *_ in OPTIONS.values()
               if getattr(args, f"link_{field}") is not None}
    if options.get("bits_per_cycle") == UNLIMITED:
        options["bits_per_cycle"] = None
    if args.link_dead:
        options["dead"] = tuple(args.link_dead)
    return options
