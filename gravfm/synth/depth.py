"""Logic depth of a synthesised ECP5 netlist: LUT levels on the worst register-to-register path.

A cheap stand-in for place-and-route's timing (seconds of synthesis instead of half an hour):
a change that deepens the worst path shows here on the commit that makes it. Counted on the
JSON netlist ``synth_ecp5`` writes: a LUT4 is one level; the slice multiplexers that widen a LUT
(PFUMX, L6MUX21) add none (LUT5/LUT6 in one slice); a carry cell is one level from its LUT
inputs and none along the carry chain (the chain is fast, and its length is the adder's width,
not the logic's depth); a LUT RAM's read (address to data) is one level. Flip-flops, block RAMs
and every other cell start and end paths.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from .report import synthesize

__all__ = ["LogicDepth", "logic_depth", "synthesised_depth"]


_LUT_INPUTS = ("A0", "A1", "B0", "B1", "C0", "C1", "D0", "D1")

# Combinational cell types: input port -> levels it adds (inputs not named: the path ends there).
_COMBINATIONAL = {
    "LUT4": {"A": 1, "B": 1, "C": 1, "D": 1},
    "PFUMX": {"ALUT": 0, "BLUT": 0, "C0": 0},
    "L6MUX21": {"D0": 0, "D1": 0, "SD": 0},
    "CCU2C": {"CIN": 0, **{port: 1 for port in _LUT_INPUTS}},
    "TRELLIS_DPR16X4": {"RAD": 1},
}


@dataclass(frozen=True)
class LogicDepth:
    """The worst path: ``levels`` of logic from net ``start`` to net ``end`` (``path``: the nets)."""

    levels: int
    start: str
    end: str
    path: tuple


def _bit_names(module):
    """A readable name per net bit (public names first)."""
    names = {}
    for name, net in sorted(module["netnames"].items(), key=lambda item: (item[1]["hide_name"], item[0])):
        for k, bit in enumerate(net["bits"]):
            label = name if len(net["bits"]) == 1 else f"{name}[{k}]"
            names.setdefault(bit, label)
    return names


def logic_depth(netlist, top):
    """The :class:`LogicDepth` of module ``top`` of a Yosys JSON ``netlist`` (a dict)."""
    module = netlist["modules"][top]
    drivers = {}        # bit -> [(input bit, levels)] of the combinational cell driving it
    ends = []           # bits a path ends at: inputs of sequential cells, top outputs
    for cell in module["cells"].values():
        directions, connections = cell.get("port_directions", {}), cell["connections"]
        inputs = [(p, b) for p, bits in connections.items() if directions.get(p) == "input" for b in bits]
        outputs = [(p, b) for p, bits in connections.items() if directions.get(p) == "output" for b in bits]
        levels = _COMBINATIONAL.get(cell["type"], {})
        for _, out_bit in outputs:
            if levels:
                drivers[out_bit] = [(b, levels[p]) for p, b in inputs if p in levels]
        ends += [b for p, b in inputs if p not in levels]
    ends += [b for port in module["ports"].values() if port["direction"] == "output" for b in port["bits"]]

    arrival = {}        # bit -> (levels, predecessor bit)
    expanded = set()    # bits whose drivers' inputs are being resolved (a second visit: a loop)
    for end in ends:
        stack = [end]
        while stack:
            bit = stack[-1]
            if bit in arrival or isinstance(bit, str):   # done, or a constant
                stack.pop()
                continue
            pending = [b for b, _ in drivers.get(bit, []) if b not in arrival and not isinstance(b, str)]
            if pending:
                if bit in expanded:
                    raise ValueError(f"combinational loop through net bit {bit} of {top}")
                expanded.add(bit)
                stack += pending
                continue
            stack.pop()
            best = (0, None)
            for b, levels in drivers.get(bit, []):
                if not isinstance(b, str) and arrival[b][0] + levels > best[0]:
                    best = (arrival[b][0] + levels, b)
            arrival[bit] = best
    worst = max((b for b in ends if not isinstance(b, str)), key=lambda b: arrival[b][0], default=None)
    if worst is None:
        return LogicDepth(0, "", "", ())
    names = _bit_names(module)
    path, bit = [], worst
    while bit is not None:
        path.append(names.get(bit, f"${bit}"))
        bit = arrival[bit][1]
    path.reverse()
    return LogicDepth(arrival[worst][0], path[0], path[-1], tuple(path))


def synthesised_depth(design, *, workdir, name="top"):
    """Synthesise ``design`` for ECP5 (Yosys only, no place-and-route) and return its
    :class:`LogicDepth`."""
    synthesize(design, target="ecp5-85", workdir=workdir, name=name, place_and_route=False)
    return logic_depth(json.loads((Path(workdir) / f"{name}.json").read_text()), name)
