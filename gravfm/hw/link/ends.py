"""An FPGA's link ends: per peer a sender and a receiver, with the link check between them and the
link when it is on.

:func:`build_link_ends` is what :class:`gravfm.hw.FpgaTop` adds for its link ports. Without the
check (``check.mode == "off"``) it builds exactly the sender and receiver of old; with it, each
port gets a :class:`~gravfm.hw.link.check_tx.CheckedSender` and a
:class:`~gravfm.hw.link.check_rx.CheckedReceiver`, wired to each other (the acknowledgements of
one direction travel in the frames of the other), and the top learns whether any receiver
latched an error and can read each port's counters
(:data:`~gravfm.hw.protocol.LINK_END_COUNTER_NAMES`).
"""

from amaranth.hdl import Cat, Signal
from amaranth.lib import wiring

from ..host_read import delayed
from ..protocol import HOST_READ_LATENCY, LINK_COUNTER_NAMES, LINK_END_COUNTER_NAMES, HostReadMem, link_counter_address
from .check_rx import CheckedReceiver
from .check_tx import CheckedSender
from .endpoints import LinkReceiver, LinkSender, link_word_layout
from .frame import frame_layout
from .lanes import LanePacker, LaneSplitter

__all__ = ["build_link_ends", "link_port_layout", "end_counter_read"]


def link_port_layout(item_layout, check, lanes=1):
    """What an FPGA's link ports carry: the link word (of ``lanes`` lanes), or its frame with the
    check on."""
    word = link_word_layout(item_layout, lanes)
    return frame_layout(word, check) if check.enabled else word


def build_link_ends(m, *, item_layout, local_pes, receiver_depth, check, start, done, remote_out, remote_in,
                    link_out, link_in, lanes=1):
    """Add the link ends of every port to ``m`` (``start``, ``done``: the FPGA's; the link check's
    counters and error latch stop at ``done``). With ``lanes`` lanes, ``remote_out[k lanes + l]``
    and ``remote_in[k lanes + l]`` are lane ``l`` of port ``k``, each lane its own sender (for
    ``local_pes / lanes`` PEs) and receiver, the lanes side by side in one link word.

    Returns
    -------
    (Signal or None, list of dict)
        Whether a receiver latched an error (None without the check), and per port the values of
        :data:`~gravfm.hw.protocol.LINK_END_COUNTER_NAMES` (empty without the check).
    """
    word = link_word_layout(item_layout, lanes)
    counters = []
    failed = Signal(name="link_failed") if check.enabled else None
    anything_failed = 0
    for k in range(len(link_out)):
        sender_o, receiver_i, count_error = _lane_ends(
            m, k, item_layout=item_layout, local_pes=local_pes, receiver_depth=receiver_depth, check=check,
            remote_out=remote_out[k * lanes:(k + 1) * lanes], remote_in=remote_in[k * lanes:(k + 1) * lanes],
            link_out=link_out[k], link_in=link_in[k])
        if not check.enabled:
            continue
        tx = CheckedSender(word_layout=word, check=check)
        rx = CheckedReceiver(word_layout=word, check=check)
        m.submodules[f"link_check_tx{k}"], m.submodules[f"link_check_rx{k}"] = tx, rx
        wiring.connect(m, sender_o, tx.i)
        wiring.connect(m, tx.o, wiring.flipped(link_out[k]))
        wiring.connect(m, wiring.flipped(link_in[k]), rx.i)
        wiring.connect(m, rx.o, receiver_i)
        m.d.comb += [tx.start.eq(start), rx.start.eq(start), tx.frozen.eq(done), rx.frozen.eq(done),
                     rx.count_error.eq(count_error)]
        if check.retransmit:
            m.d.comb += [tx.ack_out.eq(rx.ack_out), tx.nak_out.eq(rx.nak_out), rx.nak_sent.eq(tx.nak_sent),
                         tx.peer_ack.eq(rx.peer_ack), tx.peer_ack_valid.eq(rx.peer_ack_valid),
                         tx.peer_nak.eq(rx.peer_nak)]
        anything_failed = anything_failed | rx.failed
        counters.append({"retransmissions": tx.retransmissions, "discarded_in": rx.discarded,
                         "error_in": rx.error})
    if failed is not None:
        m.d.comb += failed.eq(anything_failed)
    return failed, counters


def _lane_ends(m, k, *, item_layout, local_pes, receiver_depth, check, remote_out, remote_in, link_out, link_in):
    """Port ``k``'s senders and receivers, one per lane (``remote_out``, ``remote_in``: the port's
    lanes): ``(sender side, receiver side, count error)``, the link word's two ends (connected to
    ``link_out[k]`` and ``link_in[k]`` here without the check) and whether a receiver counts more
    updates than its round's barrier (0 without the check)."""
    lanes = len(remote_out)
    senders, receivers = [], []
    for lane in range(lanes):
        suffix = f"{k}" if lanes == 1 else f"{k}_{lane}"
        sender = LinkSender(layout=item_layout, local_pes=local_pes // lanes)
        m.submodules[f"link_sender{suffix}"] = sender
        wiring.connect(m, remote_out[lane], sender.i)
        receiver = LinkReceiver(layout=item_layout, depth=receiver_depth, check_counts=check.enabled)
        if not check.enabled and lanes == 1:   # in the order of old, so that the Verilog (and the build key) stays
            wiring.connect(m, sender.o, wiring.flipped(link_out))
            m.submodules[f"link_receiver{suffix}"] = receiver
            wiring.connect(m, wiring.flipped(link_in), receiver.i)
            wiring.connect(m, receiver.o, remote_in[lane])
            return None, None, 0
        m.submodules[f"link_receiver{suffix}"] = receiver
        wiring.connect(m, receiver.o, remote_in[lane])
        senders.append(sender)
        receivers.append(receiver)
    if not check.enabled:
        count_error = 0
    else:
        count_error = receivers[0].count_error if lanes == 1 else Cat(r.count_error for r in receivers).any()
    if lanes == 1:
        sender_o, receiver_i = senders[0].o, receivers[0].i
    else:
        lane_word = link_word_layout(item_layout)
        m.submodules[f"link_packer{k}"] = packer = LanePacker(word_layout=lane_word, lanes=lanes)
        m.submodules[f"link_splitter{k}"] = splitter = LaneSplitter(word_layout=lane_word, lanes=lanes)
        for lane in range(lanes):
            wiring.connect(m, senders[lane].o, packer.i[lane])
            wiring.connect(m, splitter.o[lane], receivers[lane].i)
        sender_o, receiver_i = packer.o, splitter.i
    if not check.enabled:
        wiring.connect(m, sender_o, wiring.flipped(link_out))
        wiring.connect(m, wiring.flipped(link_in), receiver_i)
    return sender_o, receiver_i, count_error


def end_counter_read(m, *, counters, rd_mem, rd_addr):
    """The host read of the link ends' counters: ``(word, selected)``, both ``HOST_READ_LATENCY``
    cycles after ``rd_mem``/``rd_addr`` (``selected``: the read is one of them)."""
    word = Signal(64, name="link_end_word")
    end = len(LINK_COUNTER_NAMES) - len(LINK_END_COUNTER_NAMES)
    m.d.sync += word.eq(0)
    for k, values in enumerate(counters):
        for c, name in enumerate(LINK_END_COUNTER_NAMES):
            with m.If(rd_addr == link_counter_address(k, end + c)):
                m.d.sync += word.eq(values[name])
    selected = delayed(m, rd_mem == HostReadMem.LINK_COUNTERS, HOST_READ_LATENCY, name="rd_link_end")
    return delayed(m, word, HOST_READ_LATENCY - 1, name="link_end_word"), selected
