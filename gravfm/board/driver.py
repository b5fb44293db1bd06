"""The host driver: load, start, follow, read back — over any LiteX host bridge.

:class:`BoardDriver` talks to a :class:`~gravfm.board.core.GravfmCore` through a LiteX
``RemoteClient`` (``litex_server`` in front of UARTBone, Etherbone or PCIe; or the whole-SoC
simulation's simulated UART). It uses only 32-bit bus reads and writes in bursts of at most
:data:`BURST_WORDS`, the CSRs by name from the build's ``csr.csv``, and the window of
:mod:`gravfm.board.window`:

1. ``check_design``: the board carries the design the driver was built for (``design_id``);
2. ``load_image``: the off-chip edge image into DRAM (unless already placed there), then a
   sample of it read back and compared: a bad transport cannot give a silent wrong answer;
3. ``load_writes``: every host write of the :class:`~gravfm.sim.loader.LoadPlan` as records,
   then the ``records`` CSR compared with the number sent;
4. ``run``: the start record, then ``status``/``superstep``/``cycles`` and the PEs' message
   counters polled until done, a cycle limit, a watchdog or a wall-clock limit;
5. ``readback``: states, counters and round logs through the read stream, as a
   :class:`~gravfm.sim.readback.Readback` that the flow verifies and reports like any other.

Every failure of the transport or of the board is a :class:`BoardError`: one line naming the
board and the step.
"""

import csv
import time
import types
from contextlib import contextmanager

import numpy as np

from ..errors import GravfmError
from ..hw.protocol import COUNTER_NAMES, ROUND_LOGS, HostReadMem
from ..sim.readback import Readback, logged_rounds
from .window import CORE_STATUS, READ_STREAM, WRITE_STREAM, RecordLayout, flag

__all__ = ["BoardDriver", "BoardError", "follow", "read_back", "BURST_WORDS", "IMAGE_SAMPLE_WORDS",
           "registers_from_csv"]

#: Words per bus burst: Etherbone records count them in 8 bits.
BURST_WORDS = 255
#: Single-word CSR writes sent before waiting for them to land (settle_bursts): about 10 bytes each
#: on a serial bridge, so well inside the simulated line's 2 KiB.
_SETTLE_WRITES = 100
#: Words of the edge image read back and compared after loading (plus the first and last).
IMAGE_SAMPLE_WORDS = 1024


class BoardError(GravfmError):
    """A board (or its transport) failed a step: the message names both."""


class _Register:
    """One CSR of ``length`` bus words, most significant first (LiteX's CSR layout)."""

    def __init__(self, bus, address, length, width):
        self.bus, self.address, self.length, self.width = bus, address, length, width

    def read(self):
        words = self.bus.read(self.address, self.length)
        value = 0
        for word in words:
            value = value << self.width | word
        return value

    def write(self, value):
        mask = (1 << self.width) - 1
        self.bus.write(self.address,
                       [(value >> (self.width * (self.length - 1 - i))) & mask for i in range(self.length)])


def registers_from_csv(path, bus):
    """The SoC's CSRs by name (``regs.gravfm_cycles.read()``) from the build's ``csr.csv``."""
    with open(path, newline="") as text:
        rows = [row for row in csv.reader(text) if row and not row[0].startswith("#")]
    width = next((int(row[2]) for row in rows if row[:2] == ["constant", "config_csr_data_width"]), 32)
    return types.SimpleNamespace(**{row[1]: _Register(bus, int(row[2], 16), int(row[3]), width)
                                    for row in rows if row[0] == "csr_register"})


class BoardDriver:
    """Drive one board's gravfm core through ``bus`` (module docstring).

    Parameters
    ----------
    bus : litex.tools.litex_client.RemoteClient
        Open; 32-bit ``read(address, length)`` and ``write(address, words)``.
    registers : namespace
        The CSRs by name (:func:`registers_from_csv`).
    design : dict
        The design's figures (:meth:`gravfm.board.design.BoardDesign.describe`).
    window : int
        Bus address of the gravfm window; ``dram``: of the DRAM (LiteX's ``main_ram``).
    board : str
        The board's name in messages.
    settle_bursts : bool
        Wait for each burst to land (a CSR read behind it) before sending the next: for a
        transport that drops what it cannot buffer (LiteX's simulated serial line keeps 2 KiB).
    csr_streams : bool
        Move the record and read streams a word at a time through the core's CSRs instead of its
        bus window: for a bridge that reaches the CSRs only (LitePCIe's BAR0).
    """

    def __init__(self, bus, registers, design, *, window, dram, board, settle_bursts=False, csr_streams=False):
        self.bus, self.registers, self.design, self.board = bus, registers, design, board
        self.settle_bursts, self.csr_streams = settle_bursts, csr_streams
        self.window, self.dram = window, dram
        host = design["host"]
        self.layout = RecordLayout(host["pe_bits"], host["addr_bits"], host["wr_data_bits"], host["rd_data_bits"])

    @contextmanager
    def step(self, name):
        """Any failure inside becomes one :class:`BoardError` line naming the board and ``name``."""
        try:
            yield
        except BoardError:
            raise
        except (OSError, EOFError, ValueError, AttributeError, KeyError) as error:
            raise BoardError(f"{self.board}: {name}: {type(error).__name__}: {error}") from None

    def _reg(self, name):
        return getattr(self.registers, f"gravfm_{name}")

    # -- 1. identity ------------------------------------------------------------------------------------

    def check_design(self):
        with self.step("reading the design id"):
            found = self._reg("design_id").read()
        if found != self.design["design_id"]:
            raise BoardError(f"{self.board}: carries design {found:#010x}, "
                             f"not this run's {self.design['design_id']:#010x} "
                             f"(load the bitstream built for this design)")

    # -- 2. the edge image --------------------------------------------------------------------------------

    def load_image(self, image, *, base=0, write=True, seed=0):
        """Write ``image`` (bytes) at DRAM offset ``base`` (``write=False``: it is there already), then
        read back a sample and compare. Returns ``{"bytes", "written", "write_s", "checked_words"}``."""
        words = np.frombuffer(np.asarray(image, dtype=np.uint8).tobytes() + b"\0" * (-len(image) % 4), dtype="<u4")
        started = time.perf_counter()
        if write:
            with self.step("writing the edge image"):
                self._write_words(self.dram + base, words)
        write_s = time.perf_counter() - started
        rng = np.random.default_rng(seed)
        sample = np.unique(np.concatenate([[0, words.size - 1], rng.integers(0, words.size, IMAGE_SAMPLE_WORDS)]))
        with self.step("checking the edge image"):
            for index in sample:
                found = self.bus.read(self.dram + base + 4 * int(index))
                if found != int(words[index]):
                    raise BoardError(f"{self.board}: edge image word {int(index)} reads {found:#010x}, "
                                     f"{int(words[index]):#010x} was written (transport or DRAM fault)")
        return {"bytes": int(len(image)), "written": bool(write), "write_s": write_s, "checked_words": int(sample.size)}

    def _write_words(self, address, words, *, stream=False):
        """``words`` in bursts; with ``stream``, every burst starts at ``address`` again
        (a stream region: the address inside it does not matter, only that the burst stays inside)."""
        for at in range(0, len(words), BURST_WORDS):
            burst = [int(w) for w in words[at:at + BURST_WORDS]]
            self.bus.write(address if stream else address + 4 * at, burst)
            if self.settle_bursts:
                self._reg("records").read()   # answered only after the burst went through

    def _send_records(self, words):
        """Record words into the write stream: through the window, or a CSR write each."""
        if not self.csr_streams:
            self._write_words(self.window + 4 * WRITE_STREAM, words, stream=True)
            return
        for count, word in enumerate(words, 1):
            self._reg("write_word").write(int(word))
            if self.settle_bursts and count % _SETTLE_WRITES == 0:
                self._reg("records").read()   # answered only after the writes before it went through

    def _receive_words(self, count, *, timeout_s=10.0):
        """``count`` words of the read stream: through the window, or CSR by CSR."""
        if not self.csr_streams:
            return self.bus.read(self.window + 4 * READ_STREAM, count)
        words, deadline = [], time.monotonic() + timeout_s
        while len(words) < count:
            if not self._reg("read_ready").read():
                if time.monotonic() > deadline:
                    raise BoardError(f"{self.board}: the read stream gave {len(words)} of {count} words")
                continue
            words.append(self._reg("read_word").read())
            self._reg("read_pop").write(1)
        return words

    # -- 3. host writes --------------------------------------------------------------------------------------

    def load_writes(self, load):
        """All of ``load``'s host writes as records; check the core applied every one. Returns seconds."""
        started = time.perf_counter()
        with self.step("reading the record count"):
            before = self._reg("records").read()
        words = self.layout.pack(load.pe, load.mem, load.addr, load.data)
        with self.step("sending host writes"):
            self._send_records(words)
        self._expect_records(before + len(load), "host writes")
        return time.perf_counter() - started

    def _expect_records(self, expected, what, *, timeout_s=10.0):
        deadline = time.monotonic() + timeout_s
        while True:
            with self.step(f"counting {what}"):
                applied = self._reg("records").read()
            if applied == expected % (1 << 32):
                return
            if time.monotonic() > deadline:
                raise BoardError(f"{self.board}: {what}: the core applied {applied:,} records, {expected:,} were sent "
                                 f"(lost on the transport)")
            time.sleep(0.01)

    # -- 4. the run ---------------------------------------------------------------------------------------

    def start(self):
        """Send the start record (with several FPGAs it arms the board: :mod:`gravfm.board.rack`)."""
        with self.step("starting"):
            before = self._reg("records").read()
            self._send_records(self.layout.start_record())
        self._expect_records(before + 1, "the start record")

    def sample(self, pes):
        """``{done, link_error, cycles, superstep, messages}`` now (messages of ``pes`` PEs while running)."""
        with self.step("following the run"):
            status = self._reg("status").read()
            done = flag(status, CORE_STATUS, "done")
            return {"done": done, "link_error": flag(status, CORE_STATUS, "link_error"),
                    "cycles": self._reg("cycles").read(),
                    "superstep": self._reg("superstep").read(),
                    "messages": None if done else sum(self.counters(pe)["messages"] for pe in range(pes))}

    def run(self, *, pes=1, **limits):
        """Start and wait (:func:`follow`). Returns ``(status, cycles, run_s)``."""
        self.start()
        return follow([self], pes=pes, **limits)

    # -- 5. reading back -------------------------------------------------------------------------------------

    def read(self, mem, pe, addr, count):
        """``count`` host reads from ``(mem, pe, addr..)``: their words (Python ints)."""
        out = []
        per = self.layout.read_words
        # A request at a time no larger than a burst of data words, so nothing waits long in the FIFO.
        step = max(1, BURST_WORDS // per)
        with self.step(f"reading memory {int(mem)} of PE {pe}"):
            for at in range(0, count, step):
                n = min(step, count - at)
                self._reg("read_mem").write(int(mem))
                self._reg("read_pe").write(pe)
                self._reg("read_addr").write(addr + at)
                self._reg("read_count").write(n)
                words = self._receive_words(n * per)
                out.extend(self.layout.unpack_reads(words))
        return out

    def counters(self, pe):
        return dict(zip(COUNTER_NAMES, self.read(HostReadMem.COUNTERS, pe, 0, len(COUNTER_NAMES))))

    def readback(self, load, **run):
        """The run as a :class:`~gravfm.sim.readback.Readback` (:func:`read_back`)."""
        return read_back(self.read, load, **run)


def follow(drivers, *, pes=1, max_cycles=None, watchdog_cycles=1 << 24, timeout_s=3600.0, poll_s=0.05,
           on_progress=None):
    """Wait for the started ``drivers``' boards (``pes`` each). Returns ``(status, cycles, run_s)``:
    status ``done`` (every board), ``link_error`` (a board's link check latched an error),
    ``max_cycles``, ``stalled`` (no superstep or message moved for ``watchdog_cycles``) or ``timeout``."""
    started = time.perf_counter()
    last_moved_cycle, last = 0, None
    while True:
        samples = [driver.sample(pes) for driver in drivers]
        cycles = max(sample["cycles"] for sample in samples)
        if all(sample["done"] for sample in samples):
            return "done", cycles, time.perf_counter() - started
        if any(sample["link_error"] for sample in samples):
            return "link_error", cycles, time.perf_counter() - started
        superstep = samples[0]["superstep"]
        messages = sum(sample["messages"] or 0 for sample in samples)
        if on_progress is not None:
            on_progress(cycles, superstep, messages)
        if (superstep, messages) != last:
            last, last_moved_cycle = (superstep, messages), cycles
        if max_cycles is not None and cycles >= max_cycles:
            return "max_cycles", cycles, time.perf_counter() - started
        if cycles - last_moved_cycle >= watchdog_cycles:
            return "stalled", cycles, time.perf_counter() - started
        if time.perf_counter() - started > timeout_s:
            return "timeout", cycles, time.perf_counter() - started
        time.sleep(poll_s)


def read_back(read, load, *, status, cycles, run_s, vertex_bits, max_rounds, extra=None):
    """A run as a :class:`~gravfm.sim.readback.Readback`: states, counters and round logs of every
    PE ``g`` of ``load`` through ``read(mem, g, addr, count)`` (states decoded by ``load``)."""
    pes = len(load.num_local)
    mask = (1 << vertex_bits) - 1
    words = [[w & mask for w in read(HostReadMem.VERTEX, g, 0, int(load.num_local[g]))] for g in range(pes)]
    per_pe = [dict(zip(COUNTER_NAMES, read(HostReadMem.COUNTERS, g, 0, len(COUNTER_NAMES)))) for g in range(pes)]
    counters = {name: np.array([c[name] for c in per_pe], dtype=np.int64) for name in COUNTER_NAMES}
    rounds = logged_rounds(counters, max_rounds)
    round_log = {name: np.array([read(code, g, 0, rounds) for g in range(pes)], dtype=np.int64)
                 .reshape(pes, rounds) for name, code in ROUND_LOGS.items()}
    return Readback(status=status, cycles=int(cycles), load_cycles=len(load), state=load.decode_states(words),
                    counters=counters, round_log=round_log, run_s=run_s, **(extra or {}))
