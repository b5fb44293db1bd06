"""On-chip message network for many PEs: a butterfly of small buffered switches.

GraVF's crossbar (:class:`~gravfm.hw.gravf.GravfNetwork`) holds one FIFO per (source,
destination) and one per-source counter pair per endpoint: ``p**2`` of each, fine at 4-16 PEs,
not at 64-128. This network has the same local ports (``src[p]``: each source's messages and
one barrier per round; ``dst[p]``: each destination's messages, then ONE barrier per round;
``terminated``, ``waiting``), with ``p * radix * log_radix(p)`` small FIFOs.

Layout of the stages (``p = 8``, radix 2: three stages of four 2 x 2 switches)::

    src ─ skid ─┬─ stage 0 ─┬─ stage 1 ─┬─ stage 2 ─ dst
                 digit 2      digit 1      digit 0      (bits of the destination PE)

Positions ``0 .. p-1`` are numbered in the mixed radix of the stages (stage ``j`` of radix
``r_j`` owns digit ``j``, most significant first). A switch of stage ``j`` joins the positions
that differ only in digit ``j`` and sends each message to the position whose digit ``j`` is the
destination's: after the last stage the position is the destination PE (the bits of the
message's ``neighbor``, a hardware id, above ``local_bits``, as in
:class:`~gravfm.hw.gravf.MessageRouter`). The path from a source to a destination is unique.
Each switch (:class:`~gravfm.hw.network.switch.RoundSwitch`) has a FIFO per (input, output) and
a registered output per output; ``p <= crossbar_max`` (default 4) gives one stage of radix
``p``: a full crossbar. Stages of ``radix`` (default 4: a 4:1 multiplexer per bit is one LUT6)
follow, the last one smaller when ``log2(p)`` is not a multiple of ``log2(radix)``.

Order and the floating barrier. Every stream in the network is *round-sorted*: a round's
messages, then one barrier, then the next round. A source's is, as it sends it; a switch copies
each barrier into every output's crosspoint FIFO, and each output's
:class:`~gravfm.hw.network.combiner.RoundCombiner` sends one barrier for round ``r`` only after
taking every input's round-``r`` barrier, holding back an input's next round until then; so its
output is round-sorted again. At the destination the barrier of round ``r`` therefore follows
every round-``r`` message of every source that could reach it, i.e. of all sources; a silent
round (no barrier with ``sent_any``) terminates instead. Per (source, destination) the path is
unique and every buffer and arbiter keeps its inputs' order, so that order is kept too.
Barriers are thus combined on the way (one barrier item per link per round, instead of ``p``
unicast copies per source each taking a cycle at every destination), and no counting is needed:
nothing of a round can be behind the round's barrier. The network ignores ``count``.

Why combining, not per-source counting at the destinations with an
:class:`~gravfm.hw.network.Endpoint` of ``p`` sources: the endpoint needs one in-order stream
per source (``p**2`` FIFOs again, and ``p**2`` counters), and shared buffers carrying two rounds
can deadlock: a source a round ahead (its PE has finished round ``r``) fills a buffer towards a
destination that still waits for a slow source's round-``r`` barrier queued behind it. Here a
round-``r`` item is never behind a round-``r+1`` item in any buffer, so the oldest round always
drains (given that each destination takes its current round's messages).

Throughput: every port takes and delivers one message per cycle; traffic whose paths do not
share a switch output in a cycle (a permutation such as ``s -> s``) moves one message per port
per cycle. Other traffic contends at switch outputs. Simulated at 8 PEs with 40 messages per
source, each destination receiving 40 (``tests/test_hw_multistage.py``): 0.87 of a message
per port per cycle at radix 4, 0.82 at radix 2 (GraVF's crossbar: 0.98). The cycle-level model
of ``benchmarks/bench_msgnet.py`` (radix 4, depth 4, saturated sources) gives 0.94 / 0.87
(each cycle's destinations a permutation / drawn independently) at 8 and 16 PEs and 0.88 / 0.84
at 64; depth 2 loses about 0.1 more. A hot spot (many sources to one destination) fills the
FIFOs on its paths and back-pressures its sources through registered ``ready`` s: nothing is
dropped, the hot destination still takes one message per cycle, traffic not sharing those FIFOs
keeps moving, and a source whose head goes to the hot spot waits. Latency: one cycle at the
entry, two per stage (crosspoint FIFO, output register); a barrier leaves a combiner in the
cycle its last input barrier arrives, so it is no slower than a message.

Timing: ``src`` and ``dst`` are registered both ways (a skid buffer at the entry, the output
register of each last-stage combiner); inside, each path runs from one stage's registers
(crosspoint FIFO heads, output registers, fill counts) through one switch's logic (routing
digit and barrier copy, or round robin and payload multiplexer) to the next registers.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring

from ..skid_buffer import SkidBuffer
from ..unused import refusal
from .network import network_ports
from .switch import RoundSwitch

__all__ = ["MultistageNetwork", "stage_radices", "switch_positions"]


def stage_radices(pes, *, radix, crossbar_max):
    """The radix of each stage: ``[pes]`` (a crossbar) if ``pes <= crossbar_max``, else stages of
    ``radix`` with a smaller last one where ``log2(pes)`` needs it; their product is ``pes``."""
    if pes <= max(crossbar_max, 1):
        return [pes]
    bits, step = pes.bit_length() - 1, radix.bit_length() - 1
    return [1 << min(step, bits - low) for low in range(0, bits, step)]


def switch_positions(pes, radices, stage):
    """Positions (``0 .. pes-1``) of each switch of ``stage``: lists of ``radices[stage]``
    positions, the switch's port ``t`` at position ``t`` of its list (digit ``stage`` = ``t``)."""
    radix = radices[stage]
    weight = 1
    for later in radices[stage + 1:]:
        weight *= later
    return [[high * radix * weight + t * weight + low for t in range(radix)]
            for high in range(pes // (radix * weight)) for low in range(weight)]


class MultistageNetwork(wiring.Component):
    """Unicast message network between ``pes`` local PEs (no link ports).

    Parameters
    ----------
    layout : StructLayout
        ``net_message`` (:class:`~gravfm.hw.gravf.GravfLayouts`): ``neighbor``, ``barrier`` and
        ``sent_any`` are used; the rest is carried.
    pes : int
        Local PEs, a power of two.
    local_bits : int
        Local-index bits of a hardware id: the destination PE is ``neighbor``'s next
        ``log2(pes)`` bits above them (the local PE of a global PE index).
    radix : int
        Radix of the switches where ``pes > crossbar_max`` (a power of two, at least 2).
    depth : int
        Depth of each crosspoint FIFO (at least 2).
    crossbar_max : int
        Up to this many PEs the network is one crossbar switch.

    Ports
    -----
    src : In(array of ``pes`` streams)
        Each source's messages and one barrier per round (``sent_any``: the source sent
        something in the round; ``count`` ignored); ``ready`` registered.
    dst : Out(array of ``pes`` streams)
        Each destination's messages, then one barrier per round (``barrier`` set, the other
        fields zero) once every source's messages of the round are delivered; registered.
    terminated, waiting : Out(pes)
        Per destination: a silent round ended the run / the round waits for barriers.
    """

    def __init__(self, *, layout, pes, local_bits, radix=4, depth=4, crossbar_max=4):
        if not isinstance(pes, int) or pes < 1 or pes & (pes - 1):
            raise refusal(self, f"multistage network PEs must be a power of two, not {pes!r}")
        if not isinstance(radix, int) or radix < 2 or radix & (radix - 1):
            raise refusal(self, f"multistage network radix must be a power of two >= 2, not {radix!r}")
        if not isinstance(crossbar_max, int) or crossbar_max < 1:
            raise refusal(self, f"crossbar_max must be a positive integer, not {crossbar_max!r}")
        missing = {"neighbor", "barrier", "sent_any"} - set(dict(layout.members))
        if missing:
            raise refusal(self, f"message layout lacks the fields {sorted(missing)}")
        self._layout, self._pes, self._local_bits, self._depth = layout, pes, local_bits, depth
        self.radices = stage_radices(pes, radix=radix, crossbar_max=crossbar_max)
        super().__init__(network_ports(layout, pes=pes, remotes=0))

    def elaborate(self, platform):
        m = Module()
        p, radices = self._pes, self.radices
        links = []
        for s in range(p):
            # The source's ``ready`` from a flip-flop, not from the first switch's routing.
            m.submodules[f"entry{s}"] = entry = SkidBuffer(shape=self._layout)
            wiring.connect(m, wiring.flipped(self.src[s]), entry.i)
            links.append(entry.o)
        for j, radix in enumerate(radices):
            final = j == len(radices) - 1
            low_bit = self._local_bits
            for later in radices[j + 1:]:
                low_bit += later.bit_length() - 1
            following = [None] * p
            for group, positions in enumerate(switch_positions(p, radices, j)):
                switch = RoundSwitch(layout=self._layout, radix=radix, depth=self._depth, low_bit=low_bit,
                                     final=final)
                m.submodules[f"switch{j}_{group}"] = switch
                for t, x in enumerate(positions):
                    wiring.connect(m, links[x], switch.i[t])
                    following[x] = switch.o[t]
                    if final:
                        m.d.comb += [self.terminated[x].eq(switch.terminated[t]),
                                     self.waiting[x].eq(switch.waiting[t])]
            links = following
        for d in range(p):
            wiring.connect(m, links[d], wiring.flipped(self.dst[d]))
        return m
