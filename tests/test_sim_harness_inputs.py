"""The harness's inputs by name: the generated C++ structs read what Python writes, field by field.

No Verilator build: the generated header and named_fields.h are compiled with the C++ compiler
into a small reader that prints what it read, so a field renamed, reordered, missing or unknown
on either side shows here in seconds.
"""

import random
import re
import shutil
import subprocess
from dataclasses import fields, replace

import pytest

from gravfm.sim.harness_header import verilator_name
from gravfm.sim.harness_inputs import INPUT_STRUCTS, cpp_sources, inputs_header
from gravfm.sim.link_params import LinkEnds, LinkParams
from gravfm.sim.memory_params import FRACTION_BITS, MemoryModelParams, MemoryParams, memory_file
from gravfm.sim.named_fields import cpp_fields, named_line
from gravfm.sim.plan_file import ReadRegion, WatchItem, write_plan

COMPILER = shutil.which("g++")
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="needs a C++ compiler (Verilator builds need one too)")
CXX_FLAGS = ("-std=c++17", "-Wall", "-Wextra", "-Werror")

#: Reads "KIND KEY=VALUE..." lines from stdin into the generated structs; prints them back by name.
READER = r"""
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include "gravfm_inputs.h"
#include "link_model.h"
#include "memory_model.h"
#include "link_split.h"
#include "memory_harness.h"

template <class Record> void print(const Record& record);
%(printers)s

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        const std::string kind = line.substr(0, line.find(' ')), rest = line.substr(kind.size());
        try {
            if (kind == "link") {
                gravfm::LinkEnds ends{};
                gravfm::LinkParams params{};
                gravfm::read_fields(rest, ends, params);
                print(ends); print(params);
            } else if (kind == "params") {
                gravfm::MemoryModelParams params{};
                gravfm::read_fields(rest, params);
                print(params);
            } else if (kind == "watch") {
                gravfm::WatchItem item{};
                gravfm::read_fields(rest, item);
                print(item);
            } else {
                gravfm::ReadRegion region{};
                gravfm::read_fields(rest, region);
                print(region);
            }
            std::printf("\n");
        } catch (const std::exception& error) {
            std::printf("error %%s\n", error.what());
        }
    }
    std::printf("MEMORY_FRACTION_BITS=%%u\n", gravfm::MEMORY_FRACTION_BITS);
}
"""


def _printer(cls):
    body = " ".join(f'std::printf("{f.name}=%llu ", static_cast<unsigned long long>(r.{f.name}));'
                    for f in cpp_fields(cls))
    return f"template <> void print(const gravfm::{cls.__name__}& r) {{ {body} }}"


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    if COMPILER is None:
        pytest.skip("needs a C++ compiler")
    folder = tmp_path_factory.mktemp("inputs")
    sources = cpp_sources("link_model.h", "link_split.h", "memory_channels.h", "memory_model.h", "memory_harness.h",
                          "splitmix.h")
    for name, text in sources.items():
        (folder / name).write_text(text)
    (folder / "reader.cpp").write_text(READER % {"printers": "\n".join(_printer(c) for c in INPUT_STRUCTS)})
    subprocess.run([COMPILER, *CXX_FLAGS, f"-I{folder}", "-o", str(folder / "reader"), str(folder / "reader.cpp")],
                   check=True, capture_output=True, text=True)

    def read(*lines):
        done = subprocess.run([str(folder / "reader")], input="\n".join(lines) + "\n", capture_output=True,
                              text=True, check=True)
        out = done.stdout.splitlines()
        assert out[-1] == f"MEMORY_FRACTION_BITS={FRACTION_BITS}"
        return out[:-1]
    return read


ENDS = LinkEnds(source=1, target=2, port_out=0, port_in=1, item_bits=40, barrier_bit=71)
PARAMS = LinkParams(*range(101, 101 + len(fields(LinkParams))))
MEMORY = MemoryParams(bytes_per_cycle=5.3, jitter=9, banks=3, seed=2**64 - 1, reorder=True).model_params()


def _values(line):
    return dict(word.split("=") for word in line.split()[1:])


@needs_compiler
def test_the_reader_takes_every_field_by_name_in_any_order(reader):
    lines = [named_line("link", ENDS, PARAMS), named_line("params", MEMORY),
             named_line("watch", WatchItem("steps", pe=3, mem=5, addr=7, progress=True)),
             named_line("read", ReadRegion("state", pe=2, mem=1, addr=2**32 - 1, count=9))]
    shuffled = []
    for line in lines:
        words = line.split()
        random.Random(1).shuffle(words[1:])
        shuffled.append(" ".join([words[0], *random.Random(len(line)).sample(words[1:], len(words) - 1)]))
    expected = [" ".join(line.split()[1:]) + " " for line in lines]
    assert reader(*lines) == expected
    assert reader(*shuffled) == expected
    assert "name" not in lines[2] and "progress=1" in lines[2]


@needs_compiler
@pytest.mark.parametrize("change, message", [
    (lambda words: words[1:], "missing source"),                                  # a field dropped
    (lambda words: [w.replace("cost=", "price=") for w in words], "missing cost"),  # renamed by the writer
    (lambda words: words + ["colour=3"], "unknown field colour"),                 # added by the writer
    (lambda words: words + [words[0]], "source is given twice"),
    (lambda words: [w.replace("latency=104", "latency=-1") for w in words], "latency: '-1' is not"),
    (lambda words: [w.replace("latency=104", "latency=4294967296") for w in words], "latency = 4294967296 is too large"),
    (lambda words: ["7"] + words, "'7' is not KEY=VALUE"),                        # a positional number
])
def test_the_reader_refuses_what_is_not_the_structs(reader, change, message):
    words = named_line("link", ENDS, PARAMS).split()[1:]
    out = reader("link " + " ".join(change(words)))
    assert out[0].startswith("error ") and message in out[0], out


@needs_compiler
def test_a_field_renamed_in_the_dataclass_is_renamed_in_the_struct(reader, tmp_path):
    # The reader built from the current dataclasses refuses a line written by a dataclass whose
    # field was renamed (an old or new writer), naming the field; a reordered dataclass reads the same.
    reordered = [f.name for f in fields(LinkParams)][::-1]
    line = "link " + " ".join(f"{f.name}={getattr(ENDS, f.name)}" for f in fields(ENDS)) + " " + \
        " ".join(f"{name}={getattr(PARAMS, name)}" for name in reordered)
    assert reader(line) == reader(named_line("link", ENDS, PARAMS))
    renamed = named_line("link", ENDS, PARAMS).replace("fifo_depth=", "fifo_entries=")
    assert reader(renamed)[0] == "error missing fifo_depth"


def test_the_header_is_the_dataclasses():
    header = inputs_header()
    for cls in INPUT_STRUCTS:
        struct = re.search(rf"struct {cls.__name__} \{{(.*?)\}};", header, re.S).group(1)
        assert re.findall(r"(\w+);", struct) == [f.name for f in cpp_fields(cls)]
        assert re.findall(r"(uint\d+_t) \w+;", struct) == [f.metadata.get("ctype", "uint32_t")
                                                             for f in cpp_fields(cls)]
    assert f"MEMORY_FRACTION_BITS = {FRACTION_BITS};" in header
    for name in ("link_model.h", "memory_channels.h", "memory_model.h", "memory_harness.h", "harness_support.h",
                 "harness.cpp"):
        text = cpp_sources(name)[name]
        assert not re.search(r"struct (LinkParams|MemoryModelParams|LinkEnds|WatchItem|ReadRegion) \{", text), name
        assert "= 16;" not in text, name                                # FRACTION_BITS only from Python
        assert not re.search(r"fscanf\([^;]*%\w[^;]*%\w", text, re.S), f"{name} reads numbers by position"


def test_the_writers_name_every_field():
    spec = memory_file(MemoryParams(), 2, ["/tmp/a"]).splitlines()[0]
    assert spec == named_line("params", MemoryParams().model_params())
    assert list(_values(spec)) == [f.name for f in fields(MemoryModelParams)]
    assert _values(spec)["rate_fixed"] == str(16 << FRACTION_BITS)
    with pytest.raises(ValueError, match="field rate_fixed of LinkParams is given twice on a link line"):
        named_line("link", PARAMS, replace(PARAMS))
    assert not set(f.name for f in fields(LinkEnds)) & set(f.name for f in fields(LinkParams))


def test_the_plan_file_names_every_field(tmp_path):
    write_plan(tmp_path / "plan.txt", [ReadRegion("a", 1, 2, 3, 4), ReadRegion("empty", 0, 0, 0, 0)],
               [WatchItem("w", 5, 6, 7)])
    assert (tmp_path / "plan.txt").read_text() == "watch pe=5 mem=6 addr=7 progress=0\nread pe=1 mem=2 addr=3 count=4\n"


@needs_compiler
def test_headers_compile_alone_and_in_any_order(tmp_path):
    # Each header alone (it includes what it uses; #pragma once), and all of them backwards.
    headers = ["named_fields.h", "gravfm_inputs.h", "splitmix.h", "link_model.h", "link_split.h", "memory_channels.h",
               "memory_model.h", "memory_harness.h"]
    for name, text in cpp_sources(*headers[2:]).items():
        (tmp_path / name).write_text(text)
    units = {f"alone_{k}.cpp": [name] for k, name in enumerate(headers)} | {"backwards.cpp": headers[::-1]}
    compiles = []
    for unit, included in units.items():
        (tmp_path / unit).write_text("".join(f'#include "{name}"\n' for name in included))
        compiles.append(subprocess.Popen([COMPILER, *CXX_FLAGS, "-fsyntax-only", str(tmp_path / unit)],
                                         stderr=subprocess.PIPE, text=True))
    for unit, done in zip(units, compiles):
        errors = done.communicate()[1]
        assert done.returncode == 0, (unit, errors[-2000:])


@pytest.mark.parametrize("verilog, cpp", [
    # What Verilator 5 writes into its model's header for these port names (checked with it).
    ("link_out__0__valid", "link_out___05F0___05Fvalid"), ("mem__12__rdata", "mem___05F12___05Frdata"),
    ("a__b", "a___05Fb"), ("e___f", "e___05F_f"), ("g____h", "g___05F___05Fh"), ("q$r", "q__024r"),
    ("host_wr_en", "host_wr_en"),
])
def test_verilator_names(verilog, cpp):
    assert verilator_name(verilog) == cpp
