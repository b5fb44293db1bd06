"""The ECP5 netlist pass that moves flip-flops behind block RAMs into the RAMs' output registers."""

import copy

from gravfm.synth.ecp5_outreg import absorb_output_registers

CLK, ENABLE, OTHER_ENABLE = 2, 3, 4


def ram(outputs):
    """A DP16KD whose port B data outputs 0.. are the net bits ``outputs``."""
    connections = {f"DOB{i}": [bit] for i, bit in enumerate(outputs)}
    connections.update({"CLKB": [CLK], "RSTB": ["0"], "OCEB": ["1"], "CEB": [ENABLE]})
    directions = {port: "output" if port.startswith("DO") else "input" for port in connections}
    return {"type": "DP16KD", "parameters": {"REGMODE_A": "NOREG", "REGMODE_B": "NOREG"},
            "port_directions": directions, "connections": connections}


def flop(d, q, enable=ENABLE, lsr="0"):
    return {"type": "TRELLIS_FF",
            "parameters": {"CEMUX": "CE", "CLKMUX": "CLK", "GSR": "DISABLED", "LSRMUX": "LSR", "REGSET": "RESET"},
            "port_directions": {"CLK": "input", "CE": "input", "LSR": "input", "DI": "input", "Q": "output"},
            "connections": {"CLK": [CLK], "CE": [enable], "LSR": [lsr], "DI": [d], "Q": [q]}}


def netlist(cells):
    return {"modules": {"top": {"ports": {"out": {"direction": "output", "bits": [20, 21]}}, "cells": cells}}}


def test_flip_flops_behind_a_ram_port_become_its_output_register():
    design = netlist({"mem": ram([10, 11]), "ff0": flop(10, 20), "ff1": flop(11, 21)})
    assert absorb_output_registers(design, "top") == 2
    cells = design["modules"]["top"]["cells"]
    assert set(cells) == {"mem"}
    mem = cells["mem"]
    assert mem["parameters"]["REGMODE_B"] == "OUTREG" and mem["parameters"]["REGMODE_A"] == "NOREG"
    assert mem["connections"]["OCEB"] == [ENABLE]
    assert mem["connections"]["DOB0"] == [20] and mem["connections"]["DOB1"] == [21]


def test_a_flip_flop_without_enable_gives_an_always_enabled_output_register():
    design = netlist({"mem": ram([10]), "ff0": flop(10, 20)})
    ff = design["modules"]["top"]["cells"]["ff0"]
    ff["parameters"]["CEMUX"] = "1 "   # Yosys's padding of a string parameter
    del ff["connections"]["CE"]
    assert absorb_output_registers(design, "top") == 1
    assert design["modules"]["top"]["cells"]["mem"]["connections"]["OCEB"] == ["1"]


def refused(cells):
    design = netlist(cells)
    before = copy.deepcopy(design)
    assert absorb_output_registers(design, "top") == 0
    assert design == before


def test_an_output_that_also_feeds_logic_keeps_its_flip_flop():
    lut = {"type": "LUT4", "parameters": {}, "port_directions": {"A": "input", "Z": "output"},
           "connections": {"A": [10], "Z": [30]}}
    refused({"mem": ram([10, 11]), "ff0": flop(10, 20), "ff1": flop(11, 21), "lut": lut})


def test_flip_flops_with_different_enables_stay():
    refused({"mem": ram([10, 11]), "ff0": flop(10, 20), "ff1": flop(11, 21, enable=OTHER_ENABLE)})


def test_flip_flops_with_a_reset_stay():
    refused({"mem": ram([10]), "ff0": flop(10, 20, lsr=5)})


def test_a_ram_output_that_is_a_module_output_stays():
    refused({"mem": ram([20]), "ff0": flop(21, 22)})
