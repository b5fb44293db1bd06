"""The rack driver against a model of boards and cables (no LiteX, no build): identities and roles,
link bring-up, and every wiring fault one line naming the board and the link; the SERWB link's
figures; each board's share of the host writes."""

import types
from contextlib import contextmanager

import numpy as np
import pytest

from gravfm.board.backend import drive_rack
from gravfm.board.driver import BoardError
from gravfm.board.rack import HostWrites, Rack
from gravfm.board.serwb import LINE_BITS_PER_WORD, cycles_per_frame, frame_words, serwb_link
from gravfm.errors import ConfigError
from gravfm.hw.protocol import peers_of

DESIGN = 0x00C0_FFEE


class Register:
    def __init__(self, read=None, write=None):
        self._read, self._write = read, write

    def read(self):
        return self._read()

    def write(self, value):
        self._write(value)


class ModelRack:
    """Boards whose link ``k`` ends in a cable; a link is up when both ends are wired, one leads
    and it was restarted; a HELLO then shows the other end's FPGA index and design."""

    def __init__(self, fpgas, *, designs=None, cables=None, misaligned=()):
        self.fpgas = fpgas
        self.designs = designs or [DESIGN] * fpgas
        # (board, link) -> (board, link); by default link k of board f reaches peers_of(f)[k]
        self.cables = cables if cables is not None else {
            (f, k): (peer, peers_of(peer, fpgas).index(f)) for f in range(fpgas) for k, peer in
            enumerate(peers_of(f, fpgas))}
        self.misaligned = set(misaligned)
        self.index = [None] * fpgas
        self.role = {}
        self.restarted = set()
        self.boards = [self._board(f) for f in range(fpgas)]

    def _up(self, f, k):
        other = self.cables.get((f, k))
        if other is None or self.cables.get(other) != (f, k):
            return False
        leaders = [end for end in ((f, k), other) if self.role.get(end)]
        return len(leaders) == 1 and leaders[0] in self.restarted

    def _status(self, f, k):
        if (f, k) in self.misaligned:
            return 0b10
        return 0b101 if self._up(f, k) else 0

    def _board(self, f):
        registers = {"gravfm_fpga": Register(write=lambda v: self.index.__setitem__(f, v))}
        for k in range(self.fpgas - 1):
            registers.update({
                f"gravfm_link{k}_role": Register(write=lambda v, k=k: self.role.__setitem__((f, k), v)),
                f"gravfm_link{k}_restart": Register(write=lambda v, k=k: self.restarted.add((f, k))),
                f"gravfm_link{k}_status": Register(read=lambda k=k: self._status(f, k)),
                f"gravfm_link{k}_peer_fpga": Register(read=lambda k=k: self.index[self.cables[f, k][0]]),
                f"gravfm_link{k}_peer_design": Register(read=lambda k=k: self.designs[self.cables[f, k][0]]),
            })
        return types.SimpleNamespace(**registers)


class ModelDriver:
    """What the rack asks of a :class:`~gravfm.board.driver.BoardDriver`."""

    def __init__(self, rack, f):
        self.registers, self.board, self.design = rack.boards[f], f"model board {f}", {"design_id": DESIGN}

    def check_design(self):
        pass

    @contextmanager
    def step(self, name):
        yield


def bring_up(model):
    rack = Rack([ModelDriver(model, f) for f in range(model.fpgas)], pes_per_fpga=1, bring_up_s=0.2)
    rack.bring_up()
    return rack


@pytest.mark.parametrize("fpgas", [2, 3, 4])
def test_every_link_comes_up_with_the_lower_index_leading(fpgas):
    model = ModelRack(fpgas)
    bring_up(model)
    assert model.index == list(range(fpgas))
    for f in range(fpgas):
        for k, peer in enumerate(peers_of(f, fpgas)):
            assert model.role[f, k] == int(f < peer)
    assert model.restarted == {(f, k) for f in range(fpgas) for k, peer in enumerate(peers_of(f, fpgas)) if f < peer}


def test_an_absent_peer_is_named_with_its_link():
    model = ModelRack(3)
    del model.cables[0, 1], model.cables[2, 0]   # the cable between FPGA 0 and FPGA 2 is out
    with pytest.raises(BoardError, match=r"^model board 0: link 1 to FPGA 2 did not come up \(no alignment: "
                                         r"is the cable in, is FPGA 2's board on and loaded\?\) after 0 s$"):
        bring_up(model)


def test_crossed_cables_are_named():
    model = ModelRack(3, cables={(0, 0): (2, 0), (2, 0): (0, 0), (0, 1): (1, 0), (1, 0): (0, 1),
                                 (1, 1): (2, 1), (2, 1): (1, 1)})
    with pytest.raises(BoardError, match=r"^model board 0: link 0 reaches FPGA 2, not FPGA 1 \(cables crossed"):
        bring_up(model)


def test_a_peer_with_another_design_is_named():
    model = ModelRack(2, designs=[DESIGN, 0x0BAD_0BAD])
    with pytest.raises(BoardError, match=r"^model board 0: link 0 reaches a board with design 0x0bad0bad, "
                                         r"not this run's 0x00c0ffee$"):
        bring_up(model)


def test_a_link_without_alignment_is_named():
    model = ModelRack(2, misaligned={(1, 0)})
    with pytest.raises(BoardError, match=r"^model board 1: link 0 to FPGA 0: the bring-up found no alignment"):
        bring_up(model)


def test_each_board_gets_its_share_of_the_host_writes_with_local_pe_numbers():
    load = types.SimpleNamespace(pe=np.array([0, 3, 1, 2, 5, 4]), mem=np.arange(6), addr=np.arange(6) * 10,
                                 data=np.arange(6, dtype=np.uint64) * 7)
    share = HostWrites.of_fpga(load, 1, pes_per_fpga=2)
    assert share.pe.tolist() == [1, 0] and share.mem.tolist() == [1, 3] and len(share) == 2
    assert share.data.tolist() == [7, 21]


def test_the_serwb_link_describes_its_frames():
    assert LINE_BITS_PER_WORD == 40 and frame_words(32) == 1 and frame_words(33) == 2
    assert cycles_per_frame(50) == (2 + 2) * 40   # two data words behind a preamble and a port/length word
    link = serwb_link(28, wire_latency=16)
    frame = 28 + link.link_check(item_bits=28).overhead_bits
    assert link.check == "retransmit"
    assert link.bits_per_cycle == pytest.approx(frame / cycles_per_frame(frame))
    assert link.latency_cycles == 16 + cycles_per_frame(frame) + 40 + 64
    # A longer wire: a longer latency, so the check waits longer before calling the link dead.
    slow = serwb_link(28, wire_latency=1000)
    assert slow.link_check(item_bits=28).silence_cycles > link.link_check(item_bits=28).silence_cycles


def test_an_edge_image_larger_than_a_boards_dram_is_refused_before_bring_up():
    model = ModelRack(2)
    rack = Rack([ModelDriver(model, f) for f in range(2)], pes_per_fpga=1, bring_up_s=0.2)
    load = types.SimpleNamespace(memory_images=[np.zeros(64, np.uint8), np.zeros(65, np.uint8)])
    with pytest.raises(ConfigError, match=r"^model board 1: the edge image \(65 bytes\) does not fit its DRAM "
                                          r"\(64 bytes\)$"):
        drive_rack(rack, None, load, write_images=True, dram_bytes=64, limits={}, on_progress=None,
                   total_messages=0, stage=None, extra={})
    assert model.restarted == set()   # refused before any link was touched
