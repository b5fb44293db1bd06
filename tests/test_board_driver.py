"""The host driver and the window protocol against a model of the board (no LiteX, no build):
records packed as the core cuts them, reads unpacked in order, and every transport or board
fault one line naming the board and the step."""

import types

import numpy as np
import pytest

from gravfm.board.driver import BoardDriver, BoardError
from gravfm.board.sim import DramGeometry
from gravfm.board.window import READ_STREAM, STREAM_WORDS, WRITE_STREAM, RecordLayout

WINDOW, DRAM = 0x3000_0000, 0x4000_0000
#: A wide host port: records of 4 words, reads of 3.
LAYOUT = RecordLayout(pe_bits=2, addr_bits=12, wr_data_bits=90, rd_data_bits=70)
DESIGN = {"design_id": 0x1234_5678, "host": {"pe_bits": 2, "addr_bits": 12, "wr_data_bits": 90, "rd_data_bits": 70}}


def read_value(mem, pe, addr):
    """What the model's top answers to a host read: every field visible, 70 bits wide."""
    return ((addr * 0x9E3779B97F4A7C15) ^ (mem << 66) ^ (pe << 60)) & ((1 << 70) - 1)


class Register:
    def __init__(self, board, name):
        self.board, self.name = board, name

    def read(self):
        return self.board.csr_read(self.name)

    def write(self, value):
        self.board.csr_write(self.name, value)


class ModelBoard:
    """The core's window in Python: the record stream, the read stream, the CSRs, a DRAM."""

    def __init__(self, *, design_id=DESIGN["design_id"], lose_record=None, corrupt_word=None):
        self.design_id, self.lose_record, self.corrupt_word = design_id, lose_record, corrupt_word
        self.received = 0
        self.pending, self.records, self.writes, self.started = [], 0, [], False
        self.read_queue, self.request = [], {}
        self.dram = {}
        self.regs = types.SimpleNamespace(**{f"gravfm_{name}": Register(self, name) for name in (
            "design_id", "records", "status", "superstep", "cycles", "read_mem", "read_pe", "read_addr", "read_count",
            "write_word", "read_word", "read_ready", "read_pop")})

    def csr_read(self, name):
        return {"design_id": self.design_id, "records": self.records, "status": int(self.started),
                "superstep": 3, "cycles": 1234, "read_ready": int(bool(self.read_queue)),
                "read_word": self.read_queue[0] if self.read_queue else 0}[name]

    def csr_write(self, name, value):
        if name == "write_word":   # the streams through CSRs (as over PCIe): a word at a time
            return self.write(WINDOW + 4 * WRITE_STREAM, [value])
        if name == "read_pop":
            return self.read_queue.pop(0)
        self.request[name] = value
        if name == "read_count":
            for k in range(value):
                word = read_value(self.request["read_mem"], self.request["read_pe"], self.request["read_addr"] + k)
                self.read_queue += [(word >> (32 * w)) & 0xFFFFFFFF for w in range(LAYOUT.read_words)]

    def write(self, addr, words):
        if addr >= DRAM:
            for k, word in enumerate(words):
                self.dram[addr + 4 * k] = word
            return
        offset = (addr - WINDOW) // 4
        assert WRITE_STREAM <= offset and offset + len(words) <= WRITE_STREAM + STREAM_WORDS
        for word in words:
            self.pending.append(word)
            if len(self.pending) == LAYOUT.words:
                record = sum(w << (32 * i) for i, w in enumerate(self.pending))
                self.pending = []
                self.received += 1
                if self.received == self.lose_record:
                    continue
                self.records += 1
                if record & 1:
                    self.started = True
                else:
                    self.writes.append({name: (record >> offset) & ((1 << width) - 1)
                                        for name, offset, width in LAYOUT.fields})

    def read(self, addr, length=None):
        if addr >= DRAM:
            word = self.dram.get(addr, 0)
            return word ^ 1 if self.corrupt_word is not None and addr == DRAM + 4 * self.corrupt_word else word
        assert (addr - WINDOW) // 4 >= READ_STREAM
        out, self.read_queue = self.read_queue[:length], self.read_queue[length:]
        return out


def driver(board, **options):
    return BoardDriver(board, board.regs, DESIGN, window=WINDOW, dram=DRAM, board="model", **options)


def fake_load(n, rng):
    data = [int(x) for x in rng.integers(0, 1 << 62, n)]
    data = [d << 28 | 0xABCDEF1 for d in data]   # 90-bit words
    return types.SimpleNamespace(pe=rng.integers(0, 4, n), mem=rng.integers(0, 8, n), addr=rng.integers(0, 4096, n),
                                 data=np.array(data, dtype=object), __len__=None), data


def test_records_carry_every_field_of_wide_writes_in_order():
    rng = np.random.default_rng(1)
    load, data = fake_load(700, rng)

    class Load(types.SimpleNamespace):
        def __len__(self):
            return len(self.pe)

    load = Load(pe=load.pe, mem=load.mem, addr=load.addr, data=load.data)
    board = ModelBoard()
    driver(board).load_writes(load)
    assert len(board.writes) == 700
    assert [w["data"] for w in board.writes] == data
    assert [w["pe"] for w in board.writes] == load.pe.tolist()
    assert [w["mem"] for w in board.writes] == load.mem.tolist()
    assert [w["addr"] for w in board.writes] == load.addr.tolist()


def test_the_streams_through_csrs_carry_the_same_records_and_reads():
    """A bridge that reaches the CSRs only (LitePCIe's BAR0): a word per CSR access, same result."""
    class Load(types.SimpleNamespace):
        def __len__(self):
            return len(self.pe)

    rng = np.random.default_rng(2)
    plain, data = fake_load(40, rng)
    load = Load(pe=plain.pe, mem=plain.mem, addr=plain.addr, data=plain.data)
    board = ModelBoard()
    pcie = driver(board, csr_streams=True)
    pcie.load_writes(load)
    assert [w["data"] for w in board.writes] == data and [w["addr"] for w in board.writes] == load.addr.tolist()
    assert pcie.read(mem=3, pe=1, addr=7, count=90) == [read_value(3, 1, 7 + k) for k in range(90)]
    pcie.run(max_cycles=1)
    assert board.started


def test_reads_come_back_in_order_across_bursts():
    board = ModelBoard()
    got = driver(board).read(mem=5, pe=2, addr=10, count=300)
    assert got == [read_value(5, 2, 10 + k) for k in range(300)]


def test_a_lost_record_is_named_not_ignored():
    class Load(types.SimpleNamespace):
        def __len__(self):
            return len(self.pe)

    load = Load(pe=np.zeros(100, int), mem=np.zeros(100, int), addr=np.arange(100), data=np.arange(100))
    with pytest.raises(BoardError, match=r"^model: host writes: the core applied 99 records, 100 were sent"):
        driver(ModelBoard(lose_record=50)).load_writes(load)


def test_another_design_on_the_board_is_refused():
    with pytest.raises(BoardError, match=r"^model: carries design 0x0badcafe, not this run's 0x12345678"):
        driver(ModelBoard(design_id=0x0BADCAFE)).check_design()


def test_a_corrupt_image_word_is_found_by_the_check():
    image = np.arange(4096, dtype=np.uint32).view(np.uint8)
    report = driver(ModelBoard()).load_image(image)
    assert report["written"] and report["checked_words"] > 500
    with pytest.raises(BoardError, match=r"^model: edge image word 4095 reads 0x00000ffe, 0x00000fff was written"):
        driver(ModelBoard(corrupt_word=4095)).load_image(image)


def test_a_transport_failure_is_one_line_naming_the_step():
    board = ModelBoard()

    def broken(*args):
        raise ConnectionResetError(104, "Connection reset by peer")

    board.csr_read = broken
    with pytest.raises(BoardError, match=r"^model: reading the design id: ConnectionResetError"):
        driver(board).check_design()


def test_the_backdoor_splits_an_image_over_banks_as_row_bank_col_does():
    dram = DramGeometry(banks=2, rows=4, column_words=2, word_bits=32)
    image = np.arange(40, dtype=np.uint8)   # 10 words of 4 bytes: chunks of 2 words, banks in turn
    bank0, bank1 = dram.bank_lines(image)
    words = [image[4 * k:4 * k + 4][::-1].tobytes().hex() for k in range(10)]
    assert bank0.split() == [words[0], words[1], words[4], words[5], words[8], words[9]]
    assert bank1.split() == [words[2], words[3], words[6], words[7]]
