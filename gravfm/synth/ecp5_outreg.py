"""Move flip-flops behind ECP5 block RAMs into the RAMs' own output registers (a netlist pass).

Yosys maps memories to DP16KD with ``REGMODE = NOREG``: the data leaves the RAM ~4.3 ns after the
clock (speed 8) and still has to reach the flip-flop the design puts behind it, which at 150 MHz
leaves ~2.4 ns of wire and made those paths the critical ones. The DP16KD has an output register
(``REGMODE = OUTREG``, enabled by ``OCE``) that does exactly what such a flip-flop does, one
clock after the read, with a short clock-to-out. Vendor flows absorb the flip-flop; this pass does
it on Yosys's JSON netlist before nextpnr.

A RAM port's flip-flops are absorbed only when that is the same circuit: every data output of the
port that is used drives exactly one load, the ``DI`` of a ``TRELLIS_FF``; all those flip-flops
share the port's clock (not inverted) and one enable (or none); none has a set/reset (``LSR``
tied to 0), a set initial value or the global set/reset; and the port's ``RST`` is tied to 0.
"""

__all__ = ["absorb_output_registers"]

_WIDTH = 18   # data outputs per DP16KD port


def _param(cell, name, default=""):
    # Yosys writes string parameters padded with a space when they could read as binary.
    return str(cell["parameters"].get(name, default)).rstrip()


def _loads(module):
    """{net bit: [(cell name, port)]} for every cell input and module output."""
    loads = {}
    for name, cell in module["cells"].items():
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) == "input":
                for bit in bits:
                    loads.setdefault(bit, []).append((name, port))
    for name, port in module.get("ports", {}).items():
        if port["direction"] != "input":
            for bit in port["bits"]:
                loads.setdefault(bit, []).append((None, name))
    return loads


def _absorbable(module, ram, side, loads):
    """The flip-flops behind port ``side`` of ``ram`` ({output index: ff name}) and their enable,
    or None when absorbing them would change the circuit."""
    cells, connections = module["cells"], ram["connections"]
    if _param(ram, f"REGMODE_{side}", "NOREG") != "NOREG" or connections.get(f"RST{side}") != ["0"]:
        return None
    flops, enables = {}, set()
    for index in range(_WIDTH):
        bit = connections.get(f"DO{side}{index}", ["x"])[0]
        users = loads.get(bit, []) if isinstance(bit, int) else []
        if not users:
            continue
        if len(users) != 1 or users[0][0] is None or users[0][1] != "DI":
            return None
        ff = cells[users[0][0]]
        if ff["type"] != "TRELLIS_FF" or _param(ff, "CLKMUX", "CLK") != "CLK" \
                or ff["connections"].get("CLK") != connections.get(f"CLK{side}") \
                or ff["connections"].get("LSR", ["0"]) != ["0"] or _param(ff, "REGSET", "RESET") != "RESET" \
                or _param(ff, "GSR", "DISABLED") != "DISABLED":
            return None
        cemux = _param(ff, "CEMUX", "1")
        if cemux == "1":
            enables.add("1")
        elif cemux == "CE":
            enables.add(tuple(ff["connections"]["CE"]))
        else:
            return None
        flops[index] = users[0][0]
    if not flops or len(enables) != 1:
        return None
    enable = enables.pop()
    return flops, (["1"] if enable == "1" else list(enable))


def absorb_output_registers(netlist, top):
    """Absorb flip-flops into DP16KD output registers in module ``top`` of a Yosys JSON
    ``netlist`` (a dict, changed in place). Returns how many flip-flops were absorbed."""
    module = netlist["modules"][top]
    cells = module["cells"]
    loads = _loads(module)
    absorbed = 0
    for ram in [cell for cell in cells.values() if cell["type"] == "DP16KD"]:
        for side in "AB":
            found = _absorbable(module, ram, side, loads)
            if found is None:
                continue
            flops, enable = found
            for index, name in flops.items():
                # The RAM output now drives what the flip-flop's output drove.
                ram["connections"][f"DO{side}{index}"] = list(cells[name]["connections"]["Q"])
                del cells[name]
            ram["parameters"][f"REGMODE_{side}"] = "OUTREG"
            ram["connections"][f"OCE{side}"] = enable
            absorbed += len(flops)
    return absorbed
