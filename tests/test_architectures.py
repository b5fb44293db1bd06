"""The architectures in one place: every rule that differs between them asks the object, and no
module of the package outside gravfm/architectures.py spells an architecture's name."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gravfm.architectures import ARCHITECTURES, DEFAULT_ARCHITECTURE, GRAVF, GRAVFM, architecture_info
from gravfm.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent.parent / "gravfm"


def test_one_list_and_one_lookup():
    assert ARCHITECTURES == (GRAVFM.name, GRAVF.name) and DEFAULT_ARCHITECTURE == GRAVFM.name
    assert [architecture_info(name) for name in ARCHITECTURES] == [GRAVFM, GRAVF]
    with pytest.raises(ConfigError, match=r"unknown architecture 'gravx' \(known: gravfm, gravf\)"):
        architecture_info("gravx")


def test_traits_and_formulas():
    assert (GRAVFM.filters_links, GRAVF.filters_links) == (True, False)
    assert (GRAVFM.max_update_lanes, GRAVF.max_update_lanes) == (2, 1)
    assert GRAVFM.item_bits(12, update_bits=20, message_bits=7) == 32          # sender id + update
    assert GRAVF.item_bits(12, update_bits=20, message_bits=7) == 31           # two ids + message
    assert (GRAVFM.model_item_bits(m_update=5, m_message=9), GRAVF.model_item_bits(m_update=5, m_message=9)) == (5, 9)


def test_gateware_is_built_on_the_description():
    from gravfm.hw.arch import architecture
    for name in ARCHITECTURES:
        arch = architecture(name)
        assert arch.info is architecture_info(name) and arch.name == name
        assert arch.filters_links == arch.info.filters_links
    with pytest.raises(ConfigError, match="unknown architecture"):
        architecture("gravx")


def test_lanes_rule_is_the_architectures():
    from gravfm.flow.options import RunOptions
    from gravfm.flow.planning import LARGE_SYSTEM_PES, default_update_lanes
    assert default_update_lanes(GRAVFM.name, 1, LARGE_SYSTEM_PES) == 2
    assert default_update_lanes(GRAVF.name, 1, LARGE_SYSTEM_PES) == 1
    with pytest.raises(ConfigError, match="update_lanes must be 1 .. 1 with the gravf architecture, not 2"):
        RunOptions(algorithm="wcc", graph="tiny:path4", arch=GRAVF.name, update_lanes=2)
    with pytest.raises(ConfigError, match="unknown architecture 'x'"):
        RunOptions(algorithm="wcc", graph="tiny:path4", arch="x")


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
