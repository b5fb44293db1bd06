"""The FPGA-to-FPGA links of board SoCs: each link port of the top on a serial PHY of LiteICLink.

Per peer, a :class:`LinkPort` on the PHY its board gives (:attr:`gravfm.board.boards.Board.links`):

- **PHY**: 32-bit words each way in ``sys``, ``ready``/``error``, a ``master`` role and a
  ``restart``. On ECP5 boards :class:`SerwbPhy`, LiteICLink's generic SERWB PHY
  (``liteiclink.serwb.genphy``): one data pin each way, a bit per ``sys`` cycle, 8b10b, word
  alignment by commas at bring-up; on Xilinx boards a transceiver lane
  (:class:`gravfm.board.transceiver.TransceiverPhy`), on the ECPIX-5 also its SERDES lane
  (:class:`gravfm.board.ecp5_serdes.EcpSerdesPhy`). The role is a CSR (the lower FPGA index is
  the master), so every board of a rack carries the same bitstream.
- **Framing**: every frame of the top's link port (the link check's ``retransmit`` frame) is a
  SERWB packet (LiteICLink's packetizer: preamble, port, length) of ``ceil(bits / 32)`` words on
  port :data:`FRAMES`; control packets on port :data:`CONTROL` carry ``HELLO`` (this board's
  FPGA index and design id, after each lock) and ``ARMED`` (the start barrier: a board's top
  starts when it and every peer are armed), each sent :data:`CONTROL_REPEATS` times.
- **No back-pressure on the wire**: the PHY cannot stall its receiver, so a frame that finds the
  design's FIFO full, or arrives malformed, is dropped and counted; the link check's go-back-N
  replays it. Hence the link check ``retransmit`` on every real link.

:class:`SimWire` stands in for the cable in the whole-SoC simulation: latency, bit errors at a
rate the host sets, and a cut.
"""

from functools import partial
from types import SimpleNamespace

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSR, CSRField, CSRStatus, CSRStorage
from litex.soc.interconnect.packet import Arbiter
from liteiclink.serwb import genphy
from liteiclink.serwb.packet import Depacketizer, Packetizer, packet_description
from migen import Cat, If, Mux, ResetInserter, Signal

from .serwb import CONTROL_WORDS, frame_words
from .window import DESIGN_DOMAIN, LINK_STATUS

__all__ = ["SerwbPhy", "pin_phys", "LinkPort", "SimWire", "FRAMES", "CONTROL", "HELLO", "ARMED", "CONTROL_REPEATS"]

#: SERWB packet ports: the top's frames, and the link's own control packets.
FRAMES, CONTROL = 0, 1
#: Control packet kinds (bits 8-15 of its first word; bits 0-7: the sender's FPGA index).
HELLO, ARMED = 1, 2
#: Each control packet goes out this many times: a bit error may cost one copy, never the barrier.
CONTROL_REPEATS = 4
#: Cycles the bring-up waits at each step (LiteICLink's ``init_timeout``): long enough for the
#: slave to see 32 idle words (1,280 cycles at a bit per cycle).
INIT_TIMEOUT_CYCLES = 1 << 12


def _init_view(serdes):
    """What one of LiteICLink's bring-up state machines drives and sees of the SerDes: its own
    drive signals (the role picks whose reach the SerDes), the SerDes's status shared."""
    return SimpleNamespace(tx=SimpleNamespace(idle=Signal(), comma=Signal()),
                           rx=SimpleNamespace(idle=serdes.rx.idle, comma=serdes.rx.comma, shift=Signal()))


class SerwbPhy(LiteXModule):
    """LiteICLink's generic SERWB PHY with its role chosen at run time.

    ``pads`` has ``tx`` and ``rx`` (one bit each). ``master`` (1: this end leads the bring-up),
    ``restart`` (a pulse: the master begins again); ``ready`` once aligned both ways, ``error``
    when no alignment was found. ``sink``/``source``: 32-bit words; the source never waits.
    """

    def __init__(self, pads, *, init_timeout=INIT_TIMEOUT_CYCLES):
        self.sink = sink = stream.Endpoint([("data", 32)])
        self.source = source = stream.Endpoint([("data", 32)])
        self.master, self.restart = Signal(), Signal()
        self.ready, self.error = Signal(), Signal()

        self.serdes = serdes = genphy._Serdes(pads)   # LiteICLink's SerDes and bring-up, used as they are
        lead, follow = _init_view(serdes), _init_view(serdes)
        self.lead = genphy._SerdesMasterInit(lead, init_timeout)
        self.follow = genphy._SerdesSlaveInit(follow, init_timeout)
        master = self.master
        self.comb += [
            serdes.tx.idle.eq(Mux(master, lead.tx.idle, follow.tx.idle)),
            serdes.tx.comma.eq(Mux(master, lead.tx.comma, follow.tx.comma)),
            serdes.rx.shift.eq(Mux(master, lead.rx.shift, follow.rx.shift)),
            self.ready.eq(Mux(master, self.lead.ready, self.follow.ready)),
            self.error.eq(Mux(master, self.lead.error, self.follow.error)),
        ]
        # As LiteICLink's control: the master starts over when asked; the slave (and its SerDes)
        # whenever the master sends idle, which is how a master's restart reaches it.
        self.sync += [
            self.lead.reset.eq(self.restart | ~master),
            self.follow.reset.eq(master | serdes.rx.idle),
            serdes.reset.eq(~master & serdes.rx.idle),
        ]
        # Always transmitting (zeros when there is nothing to send), always receiving.
        self.comb += [
            serdes.tx.sink.valid.eq(1),
            If(self.ready & sink.valid, serdes.tx.sink.data.eq(sink.data), sink.ready.eq(serdes.tx.sink.ready)),
            serdes.rx.source.ready.eq(1),
            source.valid.eq(self.ready & serdes.rx.source.valid),
            source.data.eq(serdes.rx.source.data),
        ]


def pin_phys(platform, pins):
    """Per link, a factory of its :class:`SerwbPhy` on the connector pins ``pins`` (``[(tx, rx), ...]``)."""
    from litex.build.generic_platform import IOStandard, Pins, Subsignal  # deferred: only boards have pins

    platform.add_extension([("gravfm_link", k, Subsignal("tx", Pins(tx)), Subsignal("rx", Pins(rx)),
                             IOStandard("LVCMOS33")) for k, (tx, rx) in enumerate(pins)])
    return [partial(SerwbPhy, platform.request("gravfm_link", k)) for k in range(len(pins))]


class LinkPort(LiteXModule):
    """One link port of the top on a serial link (module docstring).

    Parameters
    ----------
    make_phy : callable
        Makes the link's PHY (no arguments): :class:`SerwbPhy` on its pads, a transceiver lane.
    frame_bits : int
        Width of the top's link port payload.
    identity : int
        The design id sent in ``HELLO``.

    Attributes
    ----------
    frames_out, frames_in : stream.Endpoint
        In the design's domain: from the top's ``link_out`` port, to its ``link_in`` port.
    fpga : Signal(8), in
        This board's FPGA index (``HELLO``).
    armed : Signal, in
        This board is armed (``ARMED`` goes out when it rises).
    peer_armed : Signal, out
        An ``ARMED`` came from the peer.
    """

    def __init__(self, make_phy, *, frame_bits, identity):
        self.words = words = frame_words(frame_bits)
        self.frames_out = stream.Endpoint([("data", frame_bits)])
        self.frames_in = stream.Endpoint([("data", frame_bits)])
        self.fpga, self.armed, self.peer_armed = Signal(8), Signal(), Signal()

        self.role = CSRStorage(1, description="1: this end leads the bring-up (the lower FPGA index of the pair)")
        self.restart = CSR()   # writing it starts the bring-up again (at the master)
        self.status = CSRStatus(fields=[CSRField(name, size=1, description=text) for name, text in LINK_STATUS.items()])
        self.peer_fpga = CSRStatus(8, description="The FPGA index the peer sent in its HELLO")
        self.peer_design = CSRStatus(32, description="The design id the peer sent in its HELLO")
        self.frames_sent = CSRStatus(32, description="Frames of the top put on the wire")
        self.frames_received = CSRStatus(32, description="Frames handed to the top")
        self.frames_dropped = CSRStatus(32, description="Whole frames dropped: the design's FIFO was full")
        self.bad_packets = CSRStatus(32, description="Packets dropped: wrong port or length, or cut short")

        self.phy = phy = make_phy()
        self.comb += [phy.master.eq(self.role.storage), phy.restart.eq(self.restart.re),
                      self.status.fields.ready.eq(phy.ready), self.status.fields.error.eq(phy.error),
                      self.status.fields.peer_armed.eq(self.peer_armed)]
        self._transmit(frame_bits, identity)
        self._receive(frame_bits)

    # -- out: frames and control packets -> packets -> PHY --------------------------------------------

    def _transmit(self, frame_bits, identity):
        words = self.words
        crossing = stream.ClockDomainCrossing([("data", words * 32)], cd_from=DESIGN_DOMAIN, cd_to="sys", depth=8)
        to_words = stream.Converter(words * 32, 32)
        frames = stream.Endpoint(packet_description(32))
        control = self._control_packets(identity)
        self.packetizer = packetizer = Packetizer()
        self.submodules += crossing, to_words, Arbiter([control, frames], packetizer.sink)
        held = control.valid   # frames wait until every pending control packet is out (ARMED first)
        self.comb += [
            self.frames_out.connect(crossing.sink, omit={"data"}),
            crossing.sink.data.eq(self.frames_out.data),
            crossing.source.connect(to_words.sink, omit={"last"}),
            to_words.sink.last.eq(1),
            frames.valid.eq(to_words.source.valid & ~held),
            to_words.source.ready.eq(frames.ready & ~held),
            frames.data.eq(to_words.source.data),
            frames.last.eq(to_words.source.last),
            frames.port.eq(FRAMES),
            frames.length.eq(4 * words),
            packetizer.source.connect(self.phy.sink),
        ]
        self.sync += If(frames.valid & frames.ready & frames.last,
                        self.frames_sent.status.eq(self.frames_sent.status + 1))

    def _control_packets(self, identity):
        """HELLO after each lock, ARMED when the board arms; each :data:`CONTROL_REPEATS` times."""
        control = stream.Endpoint(packet_description(32))
        hellos, armeds = Signal(max=CONTROL_REPEATS + 1), Signal(max=CONTROL_REPEATS + 1)
        ready_before, armed_before, second = Signal(), Signal(), Signal()
        hello = hellos != 0
        self.comb += [
            control.valid.eq(hello | (armeds != 0)),
            control.port.eq(CONTROL),
            control.length.eq(4 * CONTROL_WORDS),
            control.last.eq(second),
            control.data.eq(Mux(second, Mux(hello, identity, 0), Cat(self.fpga, Mux(hello, HELLO, ARMED)))),
        ]
        sent = control.valid & control.ready
        self.sync += [
            ready_before.eq(self.phy.ready), armed_before.eq(self.armed),
            If(sent, second.eq(~second)),
            If(sent & second, If(hello, hellos.eq(hellos - 1)).Else(armeds.eq(armeds - 1))),
            If(self.phy.ready & ~ready_before, hellos.eq(CONTROL_REPEATS)),
            If(self.armed & ~armed_before, armeds.eq(CONTROL_REPEATS)),
        ]
        return control

    # -- in: PHY -> packets -> frames for the top, control for the link -------------------------------

    def _receive(self, frame_bits):
        words = self.words
        self.depacketizer = depacketizer = ResetInserter()(Depacketizer(clk_freq=1024, timeout=8))
        source = depacketizer.source
        expected = Mux(source.port == FRAMES, 4 * words, 4 * CONTROL_WORDS)
        # A corrupt header is dropped at once (else its length could swallow the packets behind it).
        bad = source.valid & ((source.port > CONTROL) | (source.length != expected))
        word = source.valid & ~bad
        self.comb += [self.phy.source.connect(depacketizer.sink), source.ready.eq(1), depacketizer.reset.eq(bad)]
        held = max(words, CONTROL_WORDS)
        count = Signal(max=held + 1)
        collected = Signal(32 * held)
        whole = Cat(collected[32:], source.data)   # shifted in at the top: a frame's first word lowest
        frame = whole[32 * (held - words):][:frame_bits]
        crossing = stream.ClockDomainCrossing([("data", frame_bits)], cd_from="sys", cd_to=DESIGN_DOMAIN, depth=16)
        self.submodules += crossing
        frame_ends = word & (source.port == FRAMES) & source.last
        complete = frame_ends & (count == words - 1)
        self.comb += [
            crossing.sink.valid.eq(complete),
            crossing.sink.data.eq(frame),
            crossing.source.connect(self.frames_in),
        ]
        status = (self.frames_received.status, self.frames_dropped.status, self.bad_packets.status)
        self.sync += [
            If(word, collected.eq(whole), count.eq(Mux(source.last, 0, count + 1))).Elif(bad, count.eq(0)),
            If(complete & crossing.sink.ready, status[0].eq(status[0] + 1)),
            If(complete & ~crossing.sink.ready, status[1].eq(status[1] + 1)),
            If(bad | (frame_ends & ~complete), status[2].eq(status[2] + 1)),
        ]
        self._control_received(word & (source.port == CONTROL) & source.last, collected[-32:], source.data)

    def _control_received(self, ends, first, second):
        kind, index = first[8:16], first[:8]
        fields = self.status.fields
        self.sync += If(ends,
            If(kind == HELLO, fields.hello.eq(1), self.peer_fpga.status.eq(index), self.peer_design.status.eq(second)),
            If(kind == ARMED, self.peer_armed.eq(1)),
        )


class SimWire(LiteXModule):
    """One direction of a cable, in the simulation: ``latency`` cycles, bit errors, a cut.

    A bit is flipped when a 32-bit xorshift draw falls below ``error_threshold`` (a rate of r is
    ``round(r * 2**32)``); ``cut`` delivers nothing (an absent peer, a pulled cable); ``flipped``
    counts the flipped bits.
    """

    def __init__(self, *, latency, seed):
        self.i, self.o = Signal(), Signal()
        self.error_threshold = CSRStorage(32, description="Flip a bit when the 32-bit draw is below this")
        self.cut = CSRStorage(1, description="1: the wire delivers nothing")
        self.flipped = CSRStatus(32, description="Bits flipped so far")
        draw = Signal(32, reset=(seed * 0x9E3779B1) & 0xFFFFFFFF or 1)
        a, b = Signal(32), Signal(32)
        line = Signal(max(1, latency))
        flip = Signal()
        self.comb += [
            a.eq(draw ^ (draw << 13)), b.eq(a ^ (a >> 17)),
            flip.eq(draw < self.error_threshold.storage),
            self.o.eq(~self.cut.storage & (line[-1] ^ flip)),
        ]
        self.sync += [
            draw.eq(b ^ (b << 5)),
            line.eq(Cat(self.i, line[:-1])),
            If(flip, self.flipped.status.eq(self.flipped.status + 1)),
        ]
