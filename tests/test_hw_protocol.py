"""The host protocol: one module of constants, the same values in the C++ header, no Amaranth."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from amaranth.hdl import Module

from gravfm.hw import protocol
from gravfm.hw.pe.pe import event_counters
from gravfm.hw.unused import silence_unused
from gravfm.sim.verilator import harness_source


def test_importing_the_protocol_and_the_loader_does_not_import_amaranth():
    code = "import sys, gravfm.hw.protocol, gravfm.sim.loader; print('amaranth' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (Verilator builds need one too)")
def test_cpp_header_carries_the_python_values(tmp_path):
    (tmp_path / "gravfm_protocol.h").write_text(protocol.cpp_header())
    names = {f"HOST_MEM_{k}": v for k, v in protocol.codes(protocol.HostMem).items()}
    names |= {f"HOST_READ_{k}": v for k, v in protocol.codes(protocol.HostReadMem).items()}
    names |= {"HOST_READ_LATENCY": protocol.HOST_READ_LATENCY, "COUNTER_COUNT": len(protocol.COUNTER_NAMES),
              "LINK_COUNTER_COUNT": len(protocol.LINK_COUNTER_NAMES),
              "LINK_MODEL_COUNTER_COUNT": len(protocol.LINK_MODEL_COUNTER_NAMES)}
    prints = "\n".join(f'    std::printf("{name} %d\\n", (int){name});' for name in names)
    (tmp_path / "main.cpp").write_text(
        '#include <cstdio>\n#include "gravfm_protocol.h"\nint main() {\n'
        f'{prints}\n    std::printf("LOAD_MAGIC %s\\n", LOAD_MAGIC);\n}}\n')
    subprocess.run(["g++", "-std=c++17", "-o", str(tmp_path / "main"), str(tmp_path / "main.cpp")],
                   check=True, cwd=tmp_path)
    out = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, check=True).stdout
    printed = dict(line.split(" ", 1) for line in out.splitlines())
    assert printed.pop("LOAD_MAGIC") == protocol.LOAD_MAGIC.decode()
    assert {k: int(v) for k, v in printed.items()} == names


def test_harness_takes_its_constants_from_the_header():
    source = "\n".join(harness_source().values())  # harness.cpp and the headers it is split into
    assert '"GRVFMLD1"' not in source and "LOAD_MAGIC" in source
    assert "HOST_READ_LATENCY" in source


def test_codes_are_distinct_and_fit_the_port():
    for table in (protocol.HostMem, protocol.HostReadMem):
        values = list(protocol.codes(table).values())
        assert len(set(values)) == len(values)
        assert max(values) < 1 << protocol.HOST_MEM_BITS
    # the port is no wider than the largest code needs
    largest = max(*protocol.codes(protocol.HostMem).values(), *protocol.codes(protocol.HostReadMem).values())
    assert largest >= 1 << (protocol.HOST_MEM_BITS - 1)


def test_presence_word_is_a_power_of_two_with_its_shift():
    assert protocol.PRESENT_WORD_BITS == 1 << protocol.PRESENT_WORD_SHIFT


def test_pe_counters_refuse_events_that_do_not_match_the_protocol():
    events = {name: 1 for name in protocol.COUNTER_NAMES}
    # Modules only built, never elaborated: no "never used" warning when they are collected.
    assert list(event_counters(silence_unused(Module()), events=events, running=1)) == list(protocol.COUNTER_NAMES)
    with pytest.raises(ValueError, match=r"missing \['busy'\], unknown \['bussy'\]"):
        event_counters(silence_unused(Module()), events={**{k: v for k, v in events.items() if k != "busy"},
                                                         "bussy": 1}, running=1)


def test_load_file_round_trip(tmp_path):
    data = protocol.split_words([1, 2**40 + 3, 7], 48)
    protocol.write_load_file(tmp_path / "load.bin", [0, 1, 2], [3, 2, 1], [9, 8, 7], data)
    raw = (tmp_path / "load.bin").read_bytes()
    assert raw[:8] == protocol.LOAD_MAGIC
    words, zero = np.frombuffer(raw[8:16], dtype="<u4")
    assert (int(words), int(zero)) == (2, 0)
    records = np.frombuffer(raw[24:], dtype="<u4").reshape(3, 5)
    assert records[:, :3].tolist() == [[0, 3, 9], [1, 2, 8], [2, 1, 7]]
    assert [int(v) for v in protocol.join_words(records[:, 3:], 48)] == [1, 2**40 + 3, 7]
