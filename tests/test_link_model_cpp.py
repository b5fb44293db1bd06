"""The C++ link model (gravfm/sim/link_model.h) against the Amaranth LinkModel, cycle for cycle.

Several LinkModels of different configurations sit side by side in one exported top, compiled
with Verilator together with gravfm/sim/link_model_tb.cpp, which drives the RTL and the C++
model with the same random stimulus and compares i.ready, o.valid, o.payload, items and
link_bound in every cycle. The default suite builds the bench of :data:`QUICK` (one link of each
kind of behaviour); the slow one builds :data:`FULL`, the whole matrix.
"""

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, fields
from importlib import resources
from unittest import mock

import pytest
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gravfm.hw.link import LinkConfig, LinkModel
from gravfm.hw.link import config as link_config_module
from gravfm.hw.link import model as link_model_module
from gravfm.sim.build_cache import BuildCache, build_key
from gravfm.hw.link.config import mixed_seed
from gravfm.sim.harness_inputs import cpp_sources, inputs_header
from gravfm.sim.link_params import link_params
from gravfm.sim.verilator_build import VERILATOR_FLAGS, export_verilog, verilator_command, verilator_version
from gravfm.hw.unused import silence_unused

TOP = "link_tb"
EXECUTABLE = "link_model_tb"
#: A seed whose mixed value is 0, so the model falls back to 1.
ZERO_MIX_SEED = -pow(0x9E37, -1, 1 << 16) % (1 << 16)


@dataclass(frozen=True)
class Case:
    """One link of the bench: its configuration, item bits, payload width, seed, time width and
    the cycles after which it dies (None: never)."""

    config: LinkConfig
    item_bits: int = 40
    payload_bits: int = 33
    seed: int = 65
    time_bits: int | None = None
    dead_after: int | None = None

    @property
    def params(self):
        return link_params(self.config, item_bits=self.item_bits, seed=self.seed, time_bits=self.time_bits,
                           payload_bits=self.payload_bits, dead_after=self.dead_after)

    @property
    def faults(self):
        """The fault counters this link must move: ``{name: whether it must}``."""
        drop, duplicate, flip = self.config.fault_thresholds
        return {"dropped": bool(drop) or self.dead_after is not None, "duplicated": bool(duplicate),
                "flipped": bool(flip)}


#: In the default suite: one of each kind of behaviour.
QUICK = (
    Case(LinkConfig()),
    Case(LinkConfig(bits_per_cycle=5.3, latency_cycles=7, reorder_window=7, stall_probability=0.7),
         payload_bits=70, seed=3),
    Case(LinkConfig(latency_cycles=1, fifo_depth=1), payload_bits=9, seed=ZERO_MIX_SEED),
    Case(LinkConfig(latency_cycles=300, fifo_depth=316, bits_per_cycle=37.5), seed=200),
    Case(LinkConfig(latency_cycles=0, fifo_depth=2, reorder_window=2), payload_bits=9, seed=0),
    Case(LinkConfig(bits_per_cycle=100.0, fifo_depth=3, reorder_window=4, stall_probability=0.3),
         payload_bits=70, seed=4097),
    Case(LinkConfig(latency_cycles=300, fifo_depth=316, reorder_window=4, stall_probability=0.3),
         time_bits=10, seed=9),
    Case(LinkConfig(latency_cycles=7, stall_probability=0.3), payload_bits=9, seed=18),
    Case(LinkConfig(drop_rate=0.02, duplicate_rate=0.03, flip_rate=0.05, reorder_window=3, stall_probability=0.3,
                    latency_cycles=5), payload_bits=70, seed=21),
    Case(LinkConfig(flip_rate=0.1, bits_per_cycle=20.0), payload_bits=1, seed=22, dead_after=30_000),
)

#: The rest of the matrix (slow): every value of every dimension, in several combinations.
FULL = QUICK + (
    Case(LinkConfig(bits_per_cycle=5.3), payload_bits=9, seed=1),
    Case(LinkConfig(bits_per_cycle=100.0), payload_bits=70, seed=2),
    Case(LinkConfig(latency_cycles=0, fifo_depth=1, reorder_window=2), payload_bits=9, seed=4),
    Case(LinkConfig(latency_cycles=2, fifo_depth=3), payload_bits=70, seed=5),
    Case(LinkConfig(latency_cycles=7, fifo_depth=16, reorder_window=2), payload_bits=9, seed=6),
    Case(LinkConfig(latency_cycles=300, fifo_depth=16), payload_bits=70, seed=7),
    Case(LinkConfig(reorder_window=4, stall_probability=0.3), seed=8),
    Case(LinkConfig(stall_probability=0.3, fifo_depth=1, bits_per_cycle=100.0), payload_bits=70, seed=10),
    Case(LinkConfig(stall_probability=0.7, fifo_depth=3, latency_cycles=1, reorder_window=4),
         payload_bits=9, seed=11),
    Case(LinkConfig(reorder_window=7, fifo_depth=2, latency_cycles=2, bits_per_cycle=40.0), seed=12),
    Case(LinkConfig(bits_per_cycle=0.5), payload_bits=9, seed=13),
    Case(LinkConfig(latency_cycles=0, fifo_depth=316, stall_probability=0.7), payload_bits=70, seed=14),
    Case(LinkConfig(bits_per_cycle=3.3333, reorder_window=7), item_bits=10, seed=15),
    Case(LinkConfig(latency_cycles=7, fifo_depth=1, stall_probability=0.7, reorder_window=7),
         payload_bits=70, seed=16),
    Case(LinkConfig(latency_cycles=200, fifo_depth=16), time_bits=8, payload_bits=9, seed=17),
    Case(LinkConfig(seed=3), seed=3 * 64 + 1 * 4 + 2, payload_bits=70),
    Case(LinkConfig(drop_rate=0.001, duplicate_rate=0.001, flip_rate=0.001), payload_bits=9, seed=23),
    Case(LinkConfig(duplicate_rate=0.2, fifo_depth=1, latency_cycles=0), payload_bits=32, seed=24),
    Case(LinkConfig(drop_rate=0.5, latency_cycles=300, fifo_depth=316, reorder_window=2), payload_bits=64, seed=25),
    Case(LinkConfig(flip_rate=0.3, stall_probability=0.7), time_bits=10, payload_bits=33, seed=26),
    Case(LinkConfig(latency_cycles=40, fifo_depth=48), dead_after=0, seed=27),
    Case(LinkConfig(duplicate_rate=0.01, reorder_window=7, bits_per_cycle=5.3), payload_bits=70, seed=28,
         dead_after=1000),
)


class NarrowTimeLinkModel(LinkModel):
    """A LinkModel with a ``time_bits``-wide cycle counter, so that it wraps within a test."""

    def __init__(self, *, time_bits, **options):
        self._time_bits = time_bits
        super().__init__(**options)

    def elaborate(self, platform):
        with mock.patch.object(link_model_module, "TIME_BITS", self._time_bits):
            return super().elaborate(platform)


class LinkBench(wiring.Component):
    """The links of ``cases`` side by side; link ``k`` has ports ``l<k>_i``, ``l<k>_o``, ``l<k>_items``
    and ``l<k>_link_bound``."""

    def __init__(self, cases):
        self._cases = cases
        members = {}
        for k, case in enumerate(cases):
            members.update({f"l{k}_i": In(stream.Signature(case.payload_bits)),
                            f"l{k}_o": Out(stream.Signature(case.payload_bits)),
                            **{f"l{k}_{counter}": Out(64) for counter in COUNTERS}})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for k, case in enumerate(self._cases):
            options = dict(shape=case.payload_bits, config=case.config, item_bits=case.item_bits,
                           seed=case.seed, dead_after=case.dead_after)
            link = (LinkModel(**options) if case.time_bits is None
                    else NarrowTimeLinkModel(time_bits=case.time_bits, **options))
            m.submodules[f"link{k}"] = link
            wiring.connect(m, wiring.flipped(getattr(self, f"l{k}_i")), link.i)
            wiring.connect(m, link.o, wiring.flipped(getattr(self, f"l{k}_o")))
            for counter in COUNTERS:
                m.d.comb += getattr(self, f"l{k}_{counter}").eq(getattr(link, counter))
        return m


#: The LinkModel's counters, each compared every cycle.
COUNTERS = ("items", "link_bound", "dropped", "duplicated", "flipped", "first_fault")
PORTS = ("i__valid", "i__payload", "i__ready", "o__valid", "o__payload", "o__ready", *COUNTERS)


def cpp_port(name):
    """Verilator's C++ name of a Verilog port (it encodes ``__`` as ``___05F``)."""
    return name.replace("__", "___05F")


def links_header(cases):
    """link_tb_links.h: the links' parameters and their port accessors."""
    drive, sample = [], []
    for k, case in enumerate(cases):
        words = -(-case.payload_bits // 32)
        port = {name: f"top->{cpp_port(f'l{k}_{name}')}" for name in PORTS}
        drive.append(f"    case {k}: {port['i__valid']} = valid; "
                     f"set_port({port['i__payload']}, payload, {words}); {port['o__ready']} = ready; break;")
        counters = " ".join(f"s.{counter} = {port[counter]};" for counter in COUNTERS)
        sample.append(f"    case {k}: s.in_ready = {port['i__ready']}; s.out_valid = {port['o__valid']}; "
                      f"{counters} get_port({port['o__payload']}, s.payload.data(), {words}); break;")
    params = ",\n".join(f"    {case.params.cpp_initializer()}" for case in cases)
    newline = "\n"
    return f"""// Generated by tests/test_link_model_cpp.py.
constexpr unsigned LINKS = {len(cases)};
static const gravfm::LinkParams kParams[LINKS] = {{
{params}
}};
static const unsigned kPayloadBits[LINKS] = {{{", ".join(str(case.payload_bits) for case in cases)}}};

template <class Top>
void tb_drive(Top* top, unsigned k, bool valid, const uint32_t* payload, bool ready) {{
  switch (k) {{
{newline.join(drive)}
  }}
}}

template <class Top>
void tb_sample(Top* top, unsigned k, Sample& s) {{
  switch (k) {{
{newline.join(sample)}
  }}
}}
"""


def build_bench(cases, cache_dir):
    """Compile the bench of ``cases`` (cached by its sources); return the executable's path."""
    package = resources.files("gravfm.sim")
    sources = {f"{TOP}.v": export_verilog(LinkBench(cases), name=TOP), "link_tb_links.h": links_header(cases),
               **cpp_sources("link_model.h", "splitmix.h"),
               "link_model_tb.cpp": package.joinpath("link_model_tb.cpp").read_text()}
    key = build_key({**sources, "flags": "\0".join(VERILATOR_FLAGS), "verilator": verilator_version()})

    def compile_into(folder):
        for name, text in sources.items():
            (folder / name).write_text(text)
        command, env = verilator_command(folder, flags=VERILATOR_FLAGS, top=TOP, main="link_model_tb.cpp",
                                         executable=EXECUTABLE)
        completed = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        assert completed.returncode == 0, (completed.stdout + completed.stderr)[-3000:]
        shutil.rmtree(folder / "obj")  # large, and useless once linked

    executable, _ = BuildCache(cache_dir).make("link-tb", key, EXECUTABLE, compile_into)
    return executable


def run_bench(executable, cycles, seed, inject=None):
    """Run the bench; return ``(exit code, output lines)``."""
    command = [str(executable), str(cycles), str(seed)] + ([] if inject is None else [str(inject)])
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return completed.returncode, (completed.stdout + completed.stderr).splitlines()


def check_identical(cases, executable, cycles, seed):
    """The bench finds no difference, and its stimulus exercised every feature of every link."""
    code, lines = run_bench(executable, cycles, seed)
    assert code == 0, "\n".join(lines[-5:])
    assert lines[-1] == f"OK {len(cases)} links, {cycles} cycles"
    for case, line in zip(cases, lines):
        stats, config = json.loads(line), case.config
        assert stats["items"] > 50, (case, stats)
        if case.dead_after == 0:   # dead from the start: takes everything, delivers nothing
            assert stats["delivered"] == 0 and stats["dropped"] == stats["items"], (case, stats)
            continue
        assert stats["delivered"] > 50, (case, stats)
        assert stats["refused"] > 0, (case, stats)                    # back-pressure reached the input
        slower = config.bits_per_cycle is not None and config.bits_per_cycle < case.item_bits
        assert (stats["link_bound"] > 0) == slower, (case, stats)   # waited for credit
        # A depth-1 FIFO never delivers two items in consecutive cycles, so every block has one.
        reorders = config.reorder_window > 1 and config.fifo_depth > 1
        if not any(case.faults.values()):   # a lost item makes the next ones look overtaken
            assert (stats["out_of_order"] > 0) == reorders, (case, stats)
        assert stats["max_in_flight"] >= config.fifo_depth, (case, stats)   # the FIFO was full
        for counter, expected in case.faults.items():
            assert (stats[counter] > 0) == expected, (case, counter, stats)


def test_params_are_the_gateware_values():
    assert mixed_seed(ZERO_MIX_SEED) == 1
    for seed in (0, 1, 65, 4097, ZERO_MIX_SEED, 3 * 64 + 6):
        link = LinkModel(shape=8, config=LinkConfig(), item_bits=8, seed=seed)
        silence_unused(link)  # built to read its seed, never elaborated
        assert mixed_seed(seed) == link._seed
    params = link_params(LinkConfig(bits_per_cycle=5.3, stall_probability=0.3), item_bits=40, seed=1, payload_bits=8)
    cost = 40 << link_config_module.FRACTION_BITS
    assert (params.rate_fixed, params.cost, params.credit_bits) == (1357, cost, cost.bit_length() + 2)
    assert (params.stall_threshold, params.time_bits) == (77, link_model_module.TIME_BITS)
    unlimited = link_params(LinkConfig(), item_bits=40, seed=1, payload_bits=8)
    assert (unlimited.rate_fixed, unlimited.credit_bits) == (0, 0)
    assert params.cpp_initializer().startswith("{/*rate_fixed*/ 1357u, /*cost*/ 10240u, ")
    header = inputs_header()   # the struct link_model.h uses, generated from the dataclass
    struct = re.search(r"struct LinkParams \{(.*?)\};", header, re.S).group(1)
    assert re.findall(r"uint32_t (\w+);", struct) == [field.name for field in fields(params)]
    assert "struct LinkParams" not in resources.files("gravfm.sim").joinpath("link_model.h").read_text()
    with pytest.raises(TypeError, match="item_bits must be a positive integer, not 0"):
        link_params(LinkConfig(), item_bits=0, seed=1, payload_bits=8)


@pytest.fixture(scope="module")
def quick_bench(build_cache):
    return build_bench(QUICK, build_cache)


@pytest.fixture(scope="module")
def full_bench(build_cache):
    return build_bench(FULL, build_cache)


def test_cpp_model_is_the_rtl(quick_bench):
    check_identical(QUICK, quick_bench, cycles=100_000, seed=1)


def test_bench_reports_a_difference(quick_bench):
    code, lines = run_bench(quick_bench, cycles=20_000, seed=1, inject=5_000)
    assert code == 1
    assert lines[-1].startswith("MISMATCH cycle ") and " link 0 items: rtl " in lines[-1], lines[-1]
    assert 5_000 < int(lines[-1].split()[2]) < 20_000


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_cpp_model_is_the_rtl_full_matrix(full_bench, seed):
    check_identical(FULL, full_bench, cycles=200_000, seed=seed)


def compile_plain_bench(folder, name):
    """gravfm/sim/NAME.cpp with the link headers, compiled with the C++ compiler Verilator uses."""
    compiler = shutil.which(os.environ.get("CXX", "c++"))
    assert compiler, "no C++ compiler (c++ or $CXX) on PATH"
    for source, text in cpp_sources("link_model.h", "link_split.h", f"{name}.cpp").items():
        (folder / source).write_text(text)
    command = [compiler, "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", str(folder / name),
               str(folder / f"{name}.cpp")]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return folder / name


@pytest.fixture(scope="module")
def split_bench(tmp_path_factory):
    """gravfm/sim/link_split_tb.cpp, compiled."""
    return compile_plain_bench(tmp_path_factory.mktemp("link-split"), "link_split_tb")


@pytest.fixture(scope="module")
def idle_bench(tmp_path_factory):
    """gravfm/sim/link_idle_tb.cpp, compiled."""
    return compile_plain_bench(tmp_path_factory.mktemp("link-idle"), "link_idle_tb")


def test_split_link_is_the_link(split_bench):
    """The harness's quantum schedule splits a link (link_split.h): on 2,000 random links and
    traffic, in quanta and cycle by cycle, it has the link's i.ready, o.valid, o.payload, items
    and link_bound in every cycle."""
    completed = subprocess.run([str(split_bench), "1", "2000"], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout
    counts = [int(word) for word in re.findall(r"\d+", completed.stdout)]
    assert counts[:2] == [2000, 8_000_000], completed.stdout
    assert counts[2] > 100_000 and counts[3] > 100_000, completed.stdout  # both ways ran often


def test_split_link_bench_finds_quanta_longer_than_the_fifo_allows(split_bench):
    completed = subprocess.run([str(split_bench), "1", "300", "unchecked"], capture_output=True, text=True,
                               timeout=600)
    assert completed.returncode == 1 and "i.ready differs at cycle" in completed.stdout, completed.stdout


def test_idle_is_single_clocks(idle_bench):
    """LinkModel::idle(k) and SplitLink::idle_cycles (the harness idles every link through the
    load's cycles with them) leave a link as k single clock edges would: on 600 random links (faults,
    dead links, reordering, stalls, credit, depth 1, 7..16-bit time), drained or with items in
    flight, idle stretches up to 300,000 cycles (past the LFSR's period and the time's wrap) and
    then random traffic give the same outputs and counters in every cycle; jumps up to 2^64 are
    checked by composition."""
    completed = subprocess.run([str(idle_bench), "1", "300"], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout
    links, idled, jumps = (int(word) for word in re.findall(r"\d+", completed.stdout))
    assert (links, jumps) == (600, 300) and idled > 10_000_000, completed.stdout


def test_idle_bench_finds_a_cycle_too_many(idle_bench):
    completed = subprocess.run([str(idle_bench), "1", "100", "off_by_one"], capture_output=True, text=True,
                               timeout=600)
    assert completed.returncode == 1 and "differs" in completed.stdout, completed.stdout
