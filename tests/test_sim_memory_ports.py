"""Edge-memory ports through both back-ends: the compiled harness and Amaranth's simulator.

A tiny probe top (the host interface and a ``mem`` array of AXI read ports, no PE) has every
port read one burst from a host-written address after ``start``, with some back-pressure, and
exposes the beats through host reads. The same system runs as one top served by the harness's
memories, as one Amaranth top served by the Python models, and as two per-FPGA tops in two
threads (with tied-off link ports): the cycles, the words read, the memory statistics and the
reported errors must agree, and the words must be the images' (little-endian).
"""

import subprocess

import numpy as np
import pytest
from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gravfm.errors import SimulatorError
from gravfm.hw.axi import axi_read_signature
from gravfm.hw.host import HostGeometry, host_ports
from gravfm.hw.host_read import delayed
from gravfm.hw.protocol import HOST_READ_LATENCY
from gravfm.hw.link import LinkConfig
from gravfm.sim.amaranth_backend import host_read, host_writes, run_to_done
from gravfm.sim.harness_header import HostInterface
from gravfm.sim.link_params import LinkEnds, link_params
from gravfm.sim.named_fields import named_line
from gravfm.sim.memory_bench import memory_testbench
from gravfm.sim.memory_params import MemoryLoad, MemoryParams
from gravfm.sim.verilator import HostWrites, ReadRegion, build_simulator, run_simulator
from gravfm.hw.unused import silence_unused

BEATS, WORD_BYTES, PORTS_PER_FPGA, FPGAS = 4, 16, 2, 2
PARAMS = MemoryParams(word_bytes=WORD_BYTES, bytes_per_cycle=9.5, latency=6, jitter=3, banks=2, bank_depth=2,
                      reorder=True, seed=11)
IMAGES = tuple(np.random.default_rng(seed).integers(0, 256, 64 * WORD_BYTES, dtype=np.uint8) for seed in (1, 2))
#: The byte address each global port reads from; port 3's lies beyond its image (DECERR).
BASES = (0x40, 0x40, 0x230, 64 * WORD_BYTES + 0x20)
LINK_BITS = 12


class MemoryProbe(wiring.Component):
    """Host interface plus ``ports`` AXI read ports; port i reads BEATS words from the byte address
    written to (pe i, mem 0, addr 0) once ``start`` has pulsed. Host read (pe i, addr 2b + h):
    half h of beat b; addr 2 * BEATS: the OR of its rresp. ``links``: tied-off link ports."""

    def __init__(self, ports, *, links=0):
        self._ports = ports
        geometry = HostGeometry(pe_bits=max(1, (ports - 1).bit_length()), addr_bits=4, wr_data_bits=32,
                                rd_data_bits=64)
        members = host_ports(geometry)
        members["mem"] = Out(axi_read_signature(addr_bits=20, word_bits=8 * WORD_BYTES, id_bits=2)).array(ports)
        if links:
            members["link_out"] = Out(stream.Signature(LINK_BITS)).array(links)
            members["link_in"] = In(stream.Signature(LINK_BITS)).array(links)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        started, tick = Signal(), Signal()
        m.d.sync += tick.eq(~tick)
        with m.If(self.start):
            m.d.sync += started.eq(1)
        finished, read_words = [], []
        for i, port in enumerate(self.mem):
            base, issued, count, resps = Signal(20), Signal(), Signal(range(BEATS + 1)), Signal(2)
            beats = [Signal(8 * WORD_BYTES, name=f"beat{i}_{b}") for b in range(BEATS)]
            with m.If(self.host_wr_en & (self.host_wr_pe == i) & (self.host_wr_mem == 0)):
                m.d.sync += base.eq(self.host_wr_data)
            m.d.comb += [port.araddr.eq(base), port.arid.eq(i % 4), port.arlen.eq(BEATS - 1),
                         port.arsize.eq(WORD_BYTES.bit_length() - 1), port.arburst.eq(1),
                         port.arvalid.eq(started & ~issued),
                         port.rready.eq(tick | (i % 2 == 0))]   # odd ports take a beat every other cycle
            with m.If(port.arvalid & port.arready):
                m.d.sync += issued.eq(1)
            with m.If(port.rvalid & port.rready):
                m.d.sync += [Array(beats)[count].eq(port.rdata), count.eq(count + 1), resps.eq(resps | port.rresp)]
            finished.append(count == BEATS)
            read_words.append(Array([half for beat in beats for half in (beat[:64], beat[64:])] + [resps]))
        # The word exactly HOST_READ_LATENCY cycles after its address, as a real top's (the harness
        # streams the final reads, one address a cycle).
        selected = Signal(64)
        m.d.comb += [self.done.eq(started & Cat(finished).all()), self.superstep.eq(0),
                     selected.eq(Array(read_words)[self.host_rd_pe][self.host_rd_addr]),
                     self.host_rd_data.eq(delayed(m, selected, HOST_READ_LATENCY, name="rd_data"))]
        for link_in in getattr(self, "link_in", ()):
            m.d.comb += link_in.ready.eq(1)
        return m


def expected_words(port):
    """What a host read of port ``port`` (global) must return: the image's words, then the rresp."""
    image, base = IMAGES[port // PORTS_PER_FPGA], BASES[port]
    if base + BEATS * WORD_BYTES > image.size:
        return [0] * (2 * BEATS) + [3]
    data = image[base:base + BEATS * WORD_BYTES].tobytes()
    return [int.from_bytes(data[8 * h:8 * h + 8], "little") for h in range(2 * BEATS)] + [0]


def memory_load():
    return MemoryLoad(PARAMS, IMAGES, ports_per_memory=PORTS_PER_FPGA)


def run_amaranth():
    """The whole system as one probe in Amaranth's simulator: ``(cycles, words per port, models)``."""
    from amaranth.sim import Simulator

    top = MemoryProbe(FPGAS * PORTS_PER_FPGA)
    serve, models = memory_testbench(top, memory_load())
    result = {}

    async def host(ctx):
        await host_writes(ctx, top, [(g, 0, 0, base) for g, base in enumerate(BASES)])
        result["cycles"] = await run_to_done(ctx, top, max_cycles=10_000)
        result["words"] = [[await host_read(ctx, top, g, 0, addr) for addr in range(2 * BEATS + 1)]
                           for g in range(len(BASES))]

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(host)
    sim.add_testbench(serve, background=True)
    sim.run()
    return result["cycles"], result["words"], models


def system_text():
    """The SYSTEM file of two probe FPGAs whose (idle) link ports are joined by default links."""
    params = link_params(LinkConfig(), item_bits=LINK_BITS, seed=1, payload_bits=LINK_BITS)
    links = [named_line("link", LinkEnds(source=a, target=1 - a, port_out=0, port_in=0, item_bits=LINK_BITS,
                                         barrier_bit=0), params) for a in range(FPGAS)]
    return "\n".join([f"fpgas {FPGAS}", f"pes {PORTS_PER_FPGA}", *links]) + "\n"


def run_harness(top, cache, **options):
    build = build_simulator(top, cache_dir=cache)
    writes = HostWrites.from_values(range(len(BASES)), [0] * len(BASES), [0] * len(BASES), BASES, data_bits=32)
    reads = [ReadRegion(f"port{g}", g, 0, 0, 2 * BEATS + 1) for g in range(len(BASES))]
    outcome = run_simulator(build, writes, reads=reads, memory=memory_load(), **options)
    assert outcome.status == "done"
    return outcome, [[int(w) for w in outcome.reads[f"port{g}"]] for g in range(len(BASES))]


def _unelaborated(probe):
    """A probe built only to read its signature (never elaborated: no "created but never used")."""
    silence_unused(probe)
    return probe


def test_interface_reads_the_memory_ports():
    interface = HostInterface.from_component(_unelaborated(MemoryProbe(3)))
    assert (interface.mem_ports, interface.mem_addr_bits, interface.mem_word_bits, interface.mem_id_bits,
            interface.link_ports) == (3, 20, 8 * WORD_BYTES, 2, 0)
    members = dict(_unelaborated(MemoryProbe(1)).signature.members)
    members["mem"] = Out(wiring.Signature({"araddr": Out(8), "arvalid": Out(1)})).array(1)
    with pytest.raises(SimulatorError, match="lack AXI members: arid, arlen"):
        HostInterface.from_component(wiring.Signature(members).create())


@pytest.fixture(scope="module")
def amaranth_run():
    return run_amaranth()


def check_agrees(outcome, words, amaranth_run):
    cycles, amaranth_words, models = amaranth_run
    assert words == amaranth_words == [expected_words(g) for g in range(len(BASES))]
    assert outcome.cycles == cycles
    assert outcome.memory == [model.stats() for model in models]
    assert all(stats["beats"] == PORTS_PER_FPGA * BEATS for stats in outcome.memory)
    assert outcome.memory_errors == {"count": BEATS, "first_port": 3, "first_address": BASES[3]}


def test_harness_serves_memory_ports_as_the_amaranth_backend(build_cache, amaranth_run):
    outcome, words = run_harness(MemoryProbe(FPGAS * PORTS_PER_FPGA), build_cache)
    check_agrees(outcome, words, amaranth_run)


@pytest.mark.slow   # a second Verilator build (about 15 s)
def test_per_fpga_harness_threads_serve_each_fpga_its_memory(build_cache, amaranth_run):
    top = MemoryProbe(PORTS_PER_FPGA, links=FPGAS - 1)
    outcome, words = run_harness(top, build_cache, system=system_text(), threads=2)
    check_agrees(outcome, words, amaranth_run)


def test_memory_is_required_exactly_with_memory_ports(build_cache, tmp_path):
    build = build_simulator(MemoryProbe(FPGAS * PORTS_PER_FPGA), cache_dir=build_cache)
    writes = HostWrites.from_values([], [], [], [], data_bits=32)
    with pytest.raises(SimulatorError, match="4 AXI memory ports: run_simulator needs memory="):
        run_simulator(build, writes)
    (tmp_path / "plan.txt").write_text("")
    command = [str(build.executable), "load.bin", str(tmp_path / "plan.txt"), "out.bin", "result.json"]
    completed = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert completed.returncode == 2
    assert "4 AXI memory ports: --memory MEMORY is needed" in completed.stderr
    wrong = MemoryLoad(PARAMS, IMAGES[:1], ports_per_memory=PORTS_PER_FPGA)
    completed = subprocess.run(command + ["--memory", str(wrong.write(tmp_path))], capture_output=True, text=True,
                               cwd=tmp_path)
    assert completed.returncode == 2 and "1 images for 2 memories" in completed.stderr
