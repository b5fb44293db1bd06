"""The architectures in one place: every rule that differs between them asks the object, and no
module of the package outside gravfm/architectures.py spells an architecture's name."""

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gravfm import architectures
from gravfm.architectures import (ARCHITECTURES, BUILT_ARCHITECTURES, DEFAULT_ARCHITECTURE, GRAVF, GRAVFM, HYBRID,
                                  architecture_info, built_architecture_info)
from gravfm.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent.parent / "gravfm"


def test_one_list_and_one_lookup():
    assert ARCHITECTURES == (GRAVFM.name, GRAVF.name, HYBRID.name) and DEFAULT_ARCHITECTURE == GRAVFM.name
    assert [architecture_info(name) for name in ARCHITECTURES] == [GRAVFM, GRAVF, HYBRID]
    assert BUILT_ARCHITECTURES == ARCHITECTURES   # the hybrid's hardware too (gravfm.hw.hybrid)
    with pytest.raises(ConfigError, match=r"unknown architecture 'gravx' \(known: gravfm, gravf, hybrid\)"):
        architecture_info("gravx")
    assert built_architecture_info(GRAVF.name) is GRAVF and built_architecture_info(HYBRID.name) is HYBRID
    # one the model only describes is refused in one line
    unbuilt = dataclasses.replace(HYBRID, name="later", built=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(architectures._BY_NAME, "later", unbuilt)
        with pytest.raises(ConfigError, match="the hybrid architecture's hardware is not built yet: gravfm model "
                                              "--arch later predicts it"):
            built_architecture_info("later")


def test_traits_and_formulas():
    assert (GRAVFM.filters_links, GRAVF.filters_links, HYBRID.filters_links) == (True, False, True)
    assert (GRAVFM.max_update_lanes, GRAVF.max_update_lanes, HYBRID.max_update_lanes) == (2, 1, 1)
    # who takes an update reaching an FPGA of p PEs: every PE, nobody else's (GraVF), one scatter unit
    assert (GRAVFM.intake_pes(8), GRAVF.intake_pes(8), HYBRID.intake_pes(8)) == (8, None, 1)
    assert (GRAVFM.edge_lists_per_vertex(4, 8), GRAVF.edge_lists_per_vertex(4, 8),
            HYBRID.edge_lists_per_vertex(4, 8)) == (32, 1, 4)
    assert (GRAVFM.message_network, GRAVF.message_network, HYBRID.message_network) == (False, True, True)
    assert HYBRID.item_bits(12, update_bits=20, message_bits=7) == 32             # a broadcast update on links
    assert GRAVFM.default_update_lanes(8) == 2 and GRAVFM.default_update_lanes(7) == 1
    assert GRAVFM.default_update_lanes(64, offchip=True) == HYBRID.default_update_lanes(64) == 1
    assert GRAVFM.item_bits(12, update_bits=20, message_bits=7) == 32          # sender id + update
    assert GRAVF.item_bits(12, update_bits=20, message_bits=7) == 31           # two ids + message
    assert (GRAVFM.model_item_bits(m_update=5, m_message=9), GRAVF.model_item_bits(m_update=5, m_message=9)) == (5, 9)


def test_gateware_is_built_on_the_description():
    from gravfm.hw.arch import architecture
    for name in BUILT_ARCHITECTURES:
        arch = architecture(name)
        assert arch.info is architecture_info(name) and arch.name == name
        assert arch.filters_links == arch.info.filters_links
    with pytest.raises(ConfigError, match="unknown architecture"):
        architecture("gravx")
    assert (GRAVFM.power_of_two_pes, GRAVF.power_of_two_pes, HYBRID.power_of_two_pes) == (False, False, True)


def test_lanes_rule_is_the_architectures():
    from gravfm.flow.options import RunOptions
    from gravfm.flow.planning import LARGE_SYSTEM_PES, default_update_lanes
    assert default_update_lanes(GRAVFM.name, 1, LARGE_SYSTEM_PES) == 2
    assert default_update_lanes(GRAVF.name, 1, LARGE_SYSTEM_PES) == 1
    with pytest.raises(ConfigError, match="update_lanes must be 1 .. 1 with the gravf architecture, not 2"):
        RunOptions(algorithm="wcc", graph="tiny:path4", arch=GRAVF.name, update_lanes=2)
    with pytest.raises(ConfigError, match="unknown architecture 'x'"):
        RunOptions(algorithm="wcc", graph="tiny:path4", arch="x")
    with pytest.raises(ConfigError, match="--pes 3: the hybrid architecture needs a power of two PEs per FPGA"):
        RunOptions(algorithm="wcc", graph="tiny:path4", arch=HYBRID.name, pes=3)


def test_partition_default_is_the_architectures():
    """The hybrid spreads the hubs first (a sender's edges are one scatter unit's); GraVF-M and
    GraVF keep the paper's greedy; a method given is kept."""
    from gravfm.flow import plan, prepare
    from gravfm.flow.options import RunOptions
    assert [RunOptions(algorithm="wcc", graph="tiny:path4", arch=a.name, pes=2).partition
            for a in (GRAVFM, GRAVF, HYBRID)] == ["greedy", "greedy", "sorted_greedy"]
    assert RunOptions(algorithm="wcc", graph="tiny:path4", arch=HYBRID.name, partition="metis").partition == "metis"
    prepared = prepare("wcc", "tiny:grid")
    assert plan(prepared, pes=2, arch=HYBRID.name).partition.method == "sorted_greedy"
    assert plan(prepared, pes=2, arch=GRAVFM.name).partition.method == "greedy"


def test_no_module_spells_an_architecture_name():
    names = "|".join(re.escape(name) for name in ARCHITECTURES)
    quoted = re.compile(rf"""(["'])({names})\1""")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "architectures.py" and path.parent == PACKAGE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in quoted.finditer(line):
                # The package's own name (a program name, a path) is not an architecture.
                if re.search(r"prog=|PATHSPECS|module 'gravfm'|PACKAGE_NAME =", line):
                    continue
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_model_still_imports_without_amaranth():
    code = "import sys, gravfm.model, gravfm.architectures, gravfm.flow.options; print('amaranth' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
