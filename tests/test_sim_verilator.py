"""The compiled (Verilator) simulator back-end, proven on a small mock system top.

The mock has exactly the host interface of docs/host-interface.md and does a computation whose
result, counters and cycle count are known in closed form, so every read-back is checked.
"""

import json
import subprocess
import threading

import numpy as np
import pytest
from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from hypothesis import given
from hypothesis import strategies as st

from gravfm.hw.host_read import delayed
from gravfm.hw.protocol import HOST_READ_LATENCY, join_words, split_words
from gravfm.sim.harness_header import words
from gravfm.sim.verilator import (
    HostWrites, ReadRegion, SimulatorError, WatchItem, build_simulator, run_simulator,
    simulator_sources, write_plan,
)
from gravfm.hw.unused import silence_unused

COUNTER_NAMES = ("messages", "busy", "wait_barrier")


class MockTop(wiring.Component):
    """Mock system top with the host interface of docs/host-interface.md

    Each PE holds ``depth`` vertex words: low half = countdown c, high half = accumulator.
    Round r: every PE sweeps its local vertices; a vertex with c > 0 does c -= 1, acc += r and
    counts one message.  When no PE counted a message in a round, ``done`` rises.
    PE register 1 = 1 makes that PE hang in round 1 (to test the watchdog).
    Counters per PE: 0 messages, 1 busy cycles, 2 cycles waiting at the round barrier.
    """

    def __init__(self, *, n_pes=2, depth=16, data_width=72, init=0):
        self.n_pes, self.depth, self.data_width, self.init = n_pes, depth, data_width, init
        pe_bits = max(1, (n_pes - 1).bit_length())
        addr_bits = max(1, (depth - 1).bit_length())
        super().__init__({
            "host_wr_en": In(1), "host_wr_pe": In(pe_bits), "host_wr_mem": In(3),
            "host_wr_addr": In(addr_bits), "host_wr_data": In(data_width),
            "host_rd_pe": In(pe_bits), "host_rd_mem": In(3), "host_rd_addr": In(addr_bits),
            "host_rd_data": Out(data_width),
            "start": In(1), "done": Out(1), "superstep": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        half = self.data_width // 2
        running = Signal()
        pe_done = Signal(self.n_pes)
        rd_pe = Signal.like(self.host_rd_pe)
        rd_mem = Signal.like(self.host_rd_mem)
        m.d.sync += [rd_pe.eq(self.host_rd_pe), rd_mem.eq(self.host_rd_mem)]
        rd_words = []
        any_msg = []
        for g in range(self.n_pes):
            mem = memory.Memory(shape=self.data_width, depth=self.depth, init=[self.init] * self.depth)
            m.submodules[f"mem{g}"] = mem
            wp = mem.write_port()
            pe_rp = mem.read_port()
            host_rp = mem.read_port()
            n_local = Signal(range(self.depth + 1), name=f"n_local{g}")
            hang = Signal(name=f"hang{g}")
            counters = Array(Signal(64, name=f"c{g}_{i}") for i in range(3))
            index = Signal(range(self.depth + 1), name=f"index{g}")
            phase = Signal(2, name=f"phase{g}")  # 0 read, 1 write, 2 finished
            msg = Signal(name=f"msg{g}")
            any_msg.append(msg)
            host_sel = self.host_wr_en & (self.host_wr_pe == g)
            with m.If(host_sel & (self.host_wr_mem == 3)):
                with m.Switch(self.host_wr_addr):
                    with m.Case(0):
                        m.d.sync += n_local.eq(self.host_wr_data)
                    with m.Case(1):
                        m.d.sync += hang.eq(self.host_wr_data[0])
            m.d.comb += [host_rp.addr.eq(self.host_rd_addr), pe_rp.addr.eq(index)]
            state = Signal(self.data_width, name=f"state{g}")
            m.d.comb += state.eq(pe_rp.data)
            count = state[:half]
            acc = state[half:]
            with m.If(~running):
                m.d.comb += [wp.en.eq(host_sel & (self.host_wr_mem == 0)),
                             wp.addr.eq(self.host_wr_addr), wp.data.eq(self.host_wr_data)]
            with m.Else():
                m.d.sync += counters[1].eq(counters[1] + 1)
                with m.Switch(phase):
                    with m.Case(0):
                        with m.If(index == n_local):
                            m.d.sync += phase.eq(2)
                        with m.Elif(~(hang & (self.superstep == 1))):
                            m.d.sync += phase.eq(1)
                    with m.Case(1):
                        with m.If(count != 0):
                            m.d.comb += [wp.en.eq(1), wp.addr.eq(index),
                                         wp.data.eq(Cat((count - 1)[:half], (acc + self.superstep)[:self.data_width - half]))]
                            m.d.sync += [msg.eq(1), counters[0].eq(counters[0] + 1)]
                        m.d.sync += [index.eq(index + 1), phase.eq(0)]
                    with m.Case(2):
                        m.d.sync += counters[2].eq(counters[2] + 1)
            m.d.comb += pe_done[g].eq(phase == 2)
            with m.If(running & pe_done.all()):
                m.d.sync += [index.eq(0), phase.eq(0), msg.eq(0)]
            counter_q = Signal(64, name=f"counter_q{g}")
            m.d.sync += counter_q.eq(counters[self.host_rd_addr[:2]])
            word = Signal(self.data_width, name=f"rd_word{g}")
            m.d.comb += word.eq(Mux(rd_mem == 3, counter_q, host_rp.data))
            rd_words.append(word)
        # The word comes exactly HOST_READ_LATENCY cycles after its address, as a real top's does:
        # the read path is a pipeline (the harness streams the final reads, one address a cycle).
        selected = Signal(self.data_width)
        m.d.comb += [selected.eq(Array(rd_words)[rd_pe]),
                     self.host_rd_data.eq(delayed(m, selected, HOST_READ_LATENCY - 1, name="rd_data"))]
        with m.If(self.start):
            m.d.sync += [running.eq(1), self.superstep.eq(0), self.done.eq(0)]
        with m.If(running & pe_done.all()):
            with m.If(Cat(*any_msg).any()):
                m.d.sync += self.superstep.eq(self.superstep + 1)
            with m.Else():
                m.d.sync += [running.eq(0), self.done.eq(1)]
        return m


def mock_writes(counts, accumulators, *, data_width, hang=()):
    """Host writes loading ``counts[pe][i]`` / ``accumulators[pe][i]`` and the PE registers."""
    half = data_width // 2
    pe, mem, addr, data = [], [], [], []
    for g, (pe_counts, pe_accs) in enumerate(zip(counts, accumulators)):
        for i, (count, acc) in enumerate(zip(pe_counts, pe_accs)):
            pe.append(g), mem.append(0), addr.append(i), data.append(count | (acc << half))
        pe += [g, g]
        mem += [3, 3]
        addr += [0, 1]
        data += [len(pe_counts), int(g in hang)]
    return HostWrites.from_values(pe, mem, addr, data, data_bits=data_width)


def mock_expected(counts, accumulators):
    """Closed form of the mock: a vertex with countdown c adds rounds 0..c-1 to its accumulator."""
    states = [[acc + c * (c - 1) // 2 for c, acc in zip(pc, pa)] for pc, pa in zip(counts, accumulators)]
    messages = [sum(pc) for pc in counts]
    rounds = max(max(pc, default=0) for pc in counts) + 1
    return states, messages, rounds


def counter_watch(n_pes):
    return [WatchItem(f"pe{g}.{name}", g, 3, i, progress=(name == "messages"))
            for g in range(n_pes) for i, name in enumerate(COUNTER_NAMES)]


MOCK_PES, MOCK_DEPTH, MOCK_WIDTH = 3, 16, 72


@pytest.fixture(scope="session")
def mock_build(tmp_path_factory):
    """One Verilator build of the mock, shared by the tests of this file (about 10 s)."""
    cache = tmp_path_factory.mktemp("gravfm-cache")
    top = MockTop(n_pes=MOCK_PES, depth=MOCK_DEPTH, data_width=MOCK_WIDTH)
    return build_simulator(top, cache_dir=cache), cache


def run_mock(build, counts, accumulators, **options):
    writes = mock_writes(counts, accumulators, data_width=MOCK_WIDTH, hang=options.pop("hang", ()))
    reads = [ReadRegion(f"state{g}", g, 0, 0, len(c)) for g, c in enumerate(counts)]
    return run_simulator(build, writes, reads=reads, watch=counter_watch(len(counts)), **options)


def decode_states(outcome, n_pes):
    half = MOCK_WIDTH // 2
    return [[int(word) >> half for word in outcome.reads[f"state{g}"]] for g in range(n_pes)]


def test_mock_run_matches_closed_form(mock_build):
    build, _ = mock_build
    counts = [[3, 0, 5, 1], [2, 7], [1, 1, 1, 4, 0, 2]]
    accumulators = [[100, 7, 2**35, 0], [1, 2], [3, 4, 5, 6, 7, 8]]
    progress = []
    outcome = run_mock(build, counts, accumulators, progress_cycles=8,
                       on_progress=lambda cycle, step, values: progress.append((cycle, step, values)))
    states, messages, rounds = mock_expected(counts, accumulators)
    assert outcome.status == "done"
    assert decode_states(outcome, MOCK_PES) == states
    # Countdowns are all zero again (the low half of every word).
    assert all(int(w) & ((1 << 36) - 1) == 0 for g in range(MOCK_PES) for w in outcome.reads[f"state{g}"])
    assert [outcome.watch[f"pe{g}.messages"] for g in range(MOCK_PES)] == messages
    assert outcome.superstep == rounds - 1
    # Each round sweeps the largest PE at two cycles per vertex plus two for the barrier; the
    # count includes the cycle whose clock edge samples `start`.
    longest = max(len(c) for c in counts)
    assert outcome.cycles == rounds * (2 * longest + 2) + 1
    # The hardware's own busy counter (running from the cycle after `start`) agrees.
    assert [outcome.watch[f"pe{g}.busy"] for g in range(MOCK_PES)] == [outcome.cycles - 1] * MOCK_PES
    # Progress lines arrive in order and carry the watched counters.
    assert progress and [p[0] for p in progress] == sorted(p[0] for p in progress)
    assert set(progress[-1][2]) == {w.name for w in counter_watch(MOCK_PES)}
    assert outcome.cycles_per_s > 0


def test_unwritten_memory_words_read_zero(mock_build):
    build, _ = mock_build
    outcome = run_simulator(build, mock_writes([[2], [0], [0]], [[9], [0], [0]], data_width=MOCK_WIDTH),
                            reads=[ReadRegion("pe0", 0, 0, 0, MOCK_DEPTH)])
    words = [int(w) for w in outcome.reads["pe0"]]
    assert words[0] == (9 + 1) << (MOCK_WIDTH // 2)  # countdown 2: rounds 0 and 1 added
    assert words[1:] == [0] * (MOCK_DEPTH - 1)


def test_memory_contents_are_exported_unless_all_zero():
    zero = simulator_sources(MockTop(n_pes=1, depth=4, data_width=16)).verilog
    ones = simulator_sources(MockTop(n_pes=1, depth=4, data_width=16, init=0xABCD)).verilog
    assert "abcd" in ones.lower()
    # Zero contents are left to the simulator (it zeroes every uninitialized variable).
    assert ones.count("initial") > zero.count("initial")


def test_second_build_is_served_by_the_cache(mock_build):
    build, cache = mock_build
    again = build_simulator(MockTop(n_pes=MOCK_PES, depth=MOCK_DEPTH, data_width=MOCK_WIDTH),
                            cache_dir=cache)
    assert again.cached and not build.cached
    assert again.key == build.key and again.executable == build.executable
    assert again.build_s < 5
    # The compilers' CPU time is counted for a new build (at least a second for any C++ model),
    # not for one the cache served.
    assert build.build_cpu_s > 1 and again.build_cpu_s is None


def test_build_key_follows_the_design():
    small = simulator_sources(MockTop(n_pes=2, depth=16, data_width=40))
    same = simulator_sources(MockTop(n_pes=2, depth=16, data_width=40))
    deeper = simulator_sources(MockTop(n_pes=2, depth=32, data_width=40))
    assert small.key == same.key
    assert small.key != deeper.key
    assert "top->host_wr_data = (static_cast<uint64_t>(w[1]) << 32) | w[0];" in small.header


def test_watchdog_stops_a_deadlock_and_names_the_waiting(mock_build):
    build, _ = mock_build
    counts = [[3, 2], [4], [1, 1, 1]]
    accumulators = [[0, 0], [0], [0, 0, 0]]
    outcome = run_mock(build, counts, accumulators, hang=(1,), watchdog_cycles=500, progress_cycles=50)
    assert outcome.status == "stalled"
    # Detected within the watchdog window plus one progress interval and one scan's reads
    # (one read of HOST_READ_LATENCY cycles per watched counter).
    scan_cycles = len(counter_watch(MOCK_PES)) * HOST_READ_LATENCY
    assert 500 <= outcome.cycles - outcome.last_progress_cycle <= 500 + 50 + scan_cycles + 1
    assert outcome.superstep == 1

    def grew(name):
        return outcome.watch[name] - outcome.watch_before[name]

    # PEs 0 and 2 wait at the barrier for the whole gap; the hung PE 1 never reaches it.
    assert grew("pe0.wait_barrier") == outcome.scan_gap_cycles
    assert grew("pe2.wait_barrier") == outcome.scan_gap_cycles
    assert grew("pe1.wait_barrier") == 0
    assert all(grew(f"pe{g}.messages") == 0 for g in range(MOCK_PES))


def test_max_cycles_stops_the_run(mock_build):
    build, _ = mock_build
    outcome = run_mock(build, [[9], [9], [9]], [[0], [0], [0]], max_cycles=20)
    assert outcome.status == "max_cycles"
    assert outcome.cycles == 20


def test_interrupt_stops_the_simulator_process(mock_build):
    build, _ = mock_build
    processes_before = threading.active_count()

    def interrupt(cycle, step, values):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        # The hung PE keeps the run going forever; only the interrupt can end it.
        run_mock(build, [[1], [5], [1]], [[0], [0], [0]], hang=(1,), watchdog_cycles=1 << 40,
                 progress_cycles=1000, on_progress=interrupt)
    assert threading.active_count() == processes_before


def test_a_reader_gone_stops_the_simulator(mock_build, tmp_path):
    """A progress line that cannot be written (the reader closed its pipe: EPIPE) stops the
    run as ``interrupted``; the harness still writes its results and exits, instead of
    simulating a hung design forever or dying of SIGPIPE."""
    build, _ = mock_build
    writes = mock_writes([[1], [5], [1]], [[0], [0], [0]], data_width=MOCK_WIDTH, hang=(1,))
    load, plan = tmp_path / "load.bin", tmp_path / "plan.txt"
    writes.write_load_file(load, words(build.interface.data_bits))
    write_plan(plan, [], counter_watch(MOCK_PES))
    result = tmp_path / "result.json"
    command = [str(build.executable), str(load), str(plan), str(tmp_path / "out.bin"), str(result),
               "--watchdog", str(1 << 40), "--progress", "1000"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout.readline().startswith("@progress ")
        process.stdout.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("the simulator went on after its reader closed the pipe")
        stderr = process.stderr.read()
    assert process.returncode == 0, stderr
    assert json.loads(result.read_text())["status"] == "interrupted"


def test_load_file_of_another_width_is_refused(mock_build):
    build, _ = mock_build
    narrow = HostWrites.from_values([0], [0], [0], [1], data_bits=16)
    with pytest.raises(SimulatorError, match="data words"):
        run_simulator(build, narrow)


def test_top_without_host_interface_is_refused():
    class NotATop(wiring.Component):
        start: In(1)

        def elaborate(self, platform):
            return Module()

    top = NotATop()
    silence_unused(top)  # refused before elaboration, on purpose
    with pytest.raises(SimulatorError, match="lacks host-interface ports: host_wr_en"):
        simulator_sources(top)


@given(st.integers(1, 130).flatmap(lambda bits: st.tuples(
    st.just(bits), st.lists(st.integers(0, 2**bits - 1), max_size=20))))
def test_split_and_join_words_round_trip(case):
    bits, values = case
    words = split_words(values if values else np.zeros(0, dtype=np.uint64), bits)
    assert words.shape == (len(values), max(1, -(-bits // 32)))
    assert [int(v) for v in join_words(words, bits)] == values


@pytest.mark.slow
@pytest.mark.parametrize("width", [16, 40])
def test_narrow_data_ports(width, tmp_path):
    build = build_simulator(MockTop(n_pes=2, depth=4, data_width=width), cache_dir=tmp_path)
    half = width // 2
    counts, accs = [[2, 3], [1]], [[5, 1], [2]]
    outcome = run_simulator(build, mock_writes(counts, accs, data_width=width),
                            reads=[ReadRegion("s0", 0, 0, 0, 2), ReadRegion("s1", 1, 0, 0, 1)])
    states, _, _ = mock_expected(counts, accs)
    assert outcome.status == "done"
    assert [[int(w) >> half for w in outcome.reads[n]] for n in ("s0", "s1")] == states
