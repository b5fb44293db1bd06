"""Gather stage of a PE: read the destination's state, run the gather kernel, write it back.

A message issues its state read only when its vertex is not in flight (:class:`HazardUnit`). A
message that conflicts moves aside into a parking slot (:mod:`gravfm.hw.pe.parking`), so the
messages behind it (to other vertices) keep flowing; a parked message issues, with priority, as
soon as its vertex is written back. Without a combiner there is one slot: a second conflict
stalls the stream, and a message to the parked vertex waits, which keeps the messages of one
vertex in order. With the algorithm's combiner (on several PEs) a message to a parked vertex is
added into the parked message instead. A barrier message waits until the pipeline is empty,
then is consumed: ``apply_start`` pulses and the stage pauses until ``apply_done``, which the
PE gives when apply is done or, where the next round's gather may run beside apply's pass, as
the pass starts (the forwarding stage with a sparse algorithm, :mod:`gravfm.hw.pe.gather_forward`;
any stage when the algorithm's accumulator is kept apart, :mod:`gravfm.hw.pe.vertex_memory`);
either way it takes the next barrier only once the pass is done. The stage also starts paused:
round 0's apply runs first.
The head message and the parked one wait in registers together with their hazard flags, which
are computed a cycle ahead, so the choice of the message to issue starts at flip-flops.

Every vertex word carries a ``touched`` flag: when the gather kernel changes a vertex's state,
gather sets the flag on write-back and, if it was clear, reports the vertex on ``touch`` (once
per vertex and round), so a sparse apply can visit only the vertices whose state changed. The
state read is kept beside the vertex's hazard entry until the write-back, for the comparison.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ..memory_ports import read_port_signature, write_port_signature
from .hazard import HazardUnit
from .parking import ParkingSlots, parking_for
from ..unused import silence_unused
from ..kernels import kernel_traits

__all__ = ["GatherStage", "GatherUnit", "hazard_slots_for", "kernel_inputs"]


def hazard_slots_for(configured, kernel):
    """Hazard CAM size for a gather ``kernel``: ``configured``, raised to cover its latency.

    A vertex is in flight from its state read (one cycle), through the read-data register (one
    cycle) and the kernel's ``latency`` cycles (an optional class attribute, 0 for a
    combinational kernel) and the write-back register (one cycle) until it is written; with
    fewer slots than ``latency + 3`` even messages to distinct vertices stall on a full CAM.
    """
    latency = kernel_traits(kernel)[0] or 0   # checked by KernelSignature
    return max(configured, latency + 3)


class GatherStage(wiring.Component):
    """What both gather stages (:class:`GatherUnit`, :class:`~gravfm.hw.pe.gather_forward.ForwardingGatherUnit`)
    share: arguments, ports and the round control (paused at a barrier until apply is done).

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
    kernel : wiring.Component
        The algorithm's gather kernel.
    write_latency : 0 or 1
        Cycles between ``wr`` and the write reaching the vertex memory (1: the PE registers the
        write port). With 1, a read issued in the cycle its vertex is written back takes the
        word being written instead of the memory's (the old word), and a read issued as that
        write lands takes it too, so the read port need not be transparent; with 0 it must be.

    Ports
    -----
    messages : In(stream scatter_out)
        Messages for this PE's vertices; a barrier closes a round.
    rd : Out(read port, vertex_word)
        Vertex-state read (transparent for ``wr`` when ``write_latency`` is 0).
    wr : Out(write port, vertex_word)
        Vertex-state write-back (always accepted), with ``touched`` set.
    touch : Out(stream of local index)
        A vertex whose state gather changed for the first time since its last apply (its
        ``touched`` flag was clear); the receiver must always be ready (a FIFO with room for
        every local vertex).
    apply_start : Out(1)
        Pulse: the round's messages are all gathered and written back.
    apply_done : In(1)
        Pulse: resume (apply has finished, or apply's pass has started and may run beside the
        next round's gather: a stage that overlaps, or the PE's accumulator kept apart).
    apply_busy, apply_full : In(1)
        Apply's pass runs; it is a full pass. No barrier is taken while a pass runs.
    applied_upto : In(local_bits + 1)
        Apply's ``applied_upto`` (a full pass has written the vertices below it).
    hazard_stall : Out(1)
        A message waits for its vertex (or for a free hazard slot).
    active : Out(1)
        Messages are in flight (or one waits in the head register).
    """

    def __init__(self, *, layouts, config, kernel, write_latency=0, overlap=False):
        if write_latency not in (0, 1):
            silence_unused(self)  # never elaborated: do not warn about it
            raise TypeError(f"gather write latency must be 0 or 1, not {write_latency!r}")
        self._write_latency = write_latency
        self._overlap = overlap
        #: Whether the stage runs beside apply (resumed when a pass starts).
        self.overlaps = overlap
        self._layouts = layouts
        self._config = config
        self._kernel = kernel
        local_bits = config.pe.local_bits
        super().__init__({
            "messages": In(stream.Signature(layouts.scatter_out)),
            "rd": Out(read_port_signature(local_bits, layouts.vertex_word)),
            "wr": Out(write_port_signature(local_bits, layouts.vertex_word)),
            "touch": Out(stream.Signature(local_bits)),
            "apply_start": Out(1),
            "apply_done": In(1),
            "apply_busy": In(1),
            "apply_full": In(1),
            "applied_upto": In(local_bits + 1),
            "hazard_stall": Out(1),
            "active": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.kernel = self._kernel
        # Paused from a barrier taken until apply is done (and from reset); level = the round.
        paused = Signal(init=1)
        level = Signal(self._config.pe.round_bits)
        take_barrier = Signal()
        with m.If(take_barrier):
            m.d.sync += [paused.eq(1), level.eq(level + 1)]
        with m.If(self.apply_done):
            m.d.sync += paused.eq(0)
        self._pipeline(m, self._layouts, self._config.pe.local_bits, self._kernel, paused=paused, level=level,
                       take_barrier=take_barrier)
        return m

    def _pipeline(self, m, layouts, local_bits, kernel, *, paused, level, take_barrier):
        """The stage's datapath; it drives ``take_barrier`` (comb) in the cycle it takes a barrier."""
        raise NotImplementedError


def newest_write(m, *, valid, address, word, read_address):
    """With a registered write port (``write_latency=1``): whether a read of ``read_address``
    issued now must take a word the memory cannot return yet, and that word.

    The write-back now (``valid``, ``address``, ``word``) lands next cycle; the previous cycle's
    lands now. The vertex memory's read port is not transparent (a block RAM emulates
    transparency with a compare and a multiplexer behind its already late output), so either
    one of the read's vertex is forwarded, the newer first. Returns ``(hit, word)``.
    """
    land_valid = Signal()
    land_address = Signal.like(address, reset_less=True)
    land_word = Signal.like(word, reset_less=True)
    m.d.sync += [land_valid.eq(valid), land_address.eq(address), land_word.eq(word)]
    now_hit = valid & (address == read_address)
    return now_hit | (land_valid & (land_address == read_address)), Mux(now_hit, word, land_word)


def read_data_registers(m, *, advance, memory_word, forward=None, forward_word=None):
    """The read-data registers of a gather pipeline: the vertex word read, and beside it whether
    a forwarded word replaces it (``forward``) and that word. Loads while ``advance``; returns
    ``(word read, forwarded, forwarded word)``, the last two None without ``forward``.

    The memory's output lands in a register of its own, with nothing in front (synthesis can
    make it the block RAM's output register); the choice of ``forward_word`` is registered
    beside it and made behind.
    """
    from_memory = Signal.like(memory_word, name="r_memory_word", reset_less=True)
    with m.If(advance):
        m.d.sync += from_memory.eq(memory_word)
    if forward is None:
        return from_memory, None, None
    forwarded = Signal(name="r_forwarded")
    forwarded_word = Signal.like(memory_word, name="r_forwarded_word", reset_less=True)
    with m.If(advance):
        m.d.sync += [forwarded.eq(forward), forwarded_word.eq(forward_word)]
    return from_memory, forwarded, forwarded_word


def read_data_register(m, *, advance, memory_word, forward=None, forward_word=None):
    """The read-data register of a gather pipeline: the vertex word read, or a forwarded one
    (:func:`read_data_registers`, the choice made behind the registers). Returns the word."""
    from_memory, forwarded, forwarded_word = read_data_registers(
        m, advance=advance, memory_word=memory_word, forward=forward, forward_word=forward_word)
    if forward is None:
        return from_memory
    word = Signal.like(memory_word, name="r_word")
    m.d.comb += word.eq(Mux(forwarded, forwarded_word, from_memory))
    return word


def kernel_inputs(kernel, *, valid, level, item, state):
    """Assignments feeding the gather ``kernel`` the message ``item`` and the vertex ``state``;
    the write-back always accepts its output."""
    k = kernel.i.payload
    return [
        kernel.i.valid.eq(valid),
        k.level.eq(level),
        k.nodeid.eq(item.neighbor),
        k.sender.eq(item.sender),
        k.message.eq(item.message),
        k.state.eq(state),
        kernel.o.ready.eq(1),
    ]


class GatherUnit(GatherStage):
    """Gather with its hazard unit: a message waits while an earlier message to its vertex is in
    flight. Parameters and ports as :class:`GatherStage`; the kernel's ``latency`` attribute (if
    any) sizes the hazard unit.

    Attributes
    ----------
    hazard_slots : int
        Size of the hazard CAM, :func:`hazard_slots_for` of ``config.pe.hazard_slots``.
    """

    def __init__(self, *, layouts, config, kernel, write_latency=0, overlap=False):
        if overlap:
            silence_unused(self)
            raise TypeError("GatherUnit does not overlap with apply; use ForwardingGatherUnit")
        self.hazard_slots = hazard_slots_for(config.pe.hazard_slots, kernel)
        self._combiner, self.parking_slots = parking_for(layouts, config)
        super().__init__(layouts=layouts, config=config, kernel=kernel, write_latency=write_latency)

    def _pipeline(self, m, layouts, local_bits, kernel, *, paused, level, take_barrier):
        slots = self.parking_slots
        m.submodules.hazard = hazard = HazardUnit(addr_bits=local_bits, slots=self.hazard_slots,
                                                  payload=layouts.vertex_word, remove_latency=1,
                                                  lookahead=2 + slots, by_slot=True)

        incoming = self.messages.payload
        incoming_address = incoming.neighbor[:local_bits]

        # Head stage: the message at the head of the stream, in a register, with its hazard
        # flags computed a cycle ahead (registered), as are the parked messages'. The issue
        # decision (a parked message or the head, and the slot the hazard unit writes) then
        # starts at flip-flops instead of running from the CAM compare through the choice of
        # message into the hazard slot address and the read address (the PE's critical path).
        # The stage adds one cycle of pipeline fill per superstep, not a cycle per message: it
        # loads whenever its message leaves.
        h_valid = Signal()
        h = Signal(layouts.scatter_out)
        h_address = h.neighbor[:local_bits]
        h_blocked = Signal()    # the head's vertex is in flight (hazard unit)

        # Parking slots (gravfm.hw.pe.parking): messages whose vertex is in flight.
        park = ParkingSlots(m, layouts=layouts, local_bits=local_bits, count=slots, combiner=self._combiner)

        # Read stage: the message whose state is being read (data arrives one cycle later).
        s_valid = Signal()
        s_item = Signal(layouts.scatter_out)
        # Read-data register: the vertex memory's output (block RAM clock-to-out, or a LUT-RAM
        # mux tree) ends at a flip-flop instead of running on through the gather kernel into the
        # write-back register (the PE's critical path). It adds one cycle to a vertex's time in
        # flight (hazard_slots_for) and one cycle of pipeline fill per superstep.
        r_valid = Signal()
        r_item = Signal(layouts.scatter_out)
        r_advance = ~r_valid | kernel.i.ready
        s_advance = ~s_valid | r_advance
        candidate = ~paused & h_valid & ~h.barrier
        # One message issues per cycle: a parked one first, or with a combiner the head first
        # (gravfm.hw.pe.parking); both terms come from registers, so neither choice waits for
        # the other.
        can_issue = ~paused & ~hazard.full & s_advance
        head_conflict = h_blocked | park.head_on_any
        from_parked, from_head = park.arbitrate(can_issue=can_issue, head_free=candidate & ~head_conflict)
        moves_aside = park.take(m, head=h, wants=candidate & head_conflict)
        issue = from_parked | from_head
        # The message to issue, if any: selected by registers alone (when nothing issues, the
        # read and the read stage's item are ignored).
        chosen = park.chosen(h, head_free=candidate & ~head_conflict)
        chosen_address = chosen.neighbor[:local_bits]
        flushed = hazard.empty & ~park.any_valid
        m.d.comb += take_barrier.eq(~paused & h_valid & h.barrier & flushed & ~self.apply_busy)
        h_leaves = from_head | moves_aside | take_barrier
        h_load = ~h_valid | h_leaves
        waiting = park.waiting | (candidate & ~from_head & ~moves_aside)
        m.d.comb += [
            hazard.insert.eq(issue),
            hazard.insert_addr.eq(chosen_address),
            self.rd.addr.eq(chosen_address),
            self.rd.en.eq(s_advance),
            self.messages.ready.eq(h_load),
            self.apply_start.eq(take_barrier),
            self.hazard_stall.eq(~issue & waiting),
            self.active.eq(h_valid | ~flushed),
        ]

        # Next cycle's hazard flags. An address is in flight next cycle when its entry stays
        # (hazard.ahead) or when this cycle issues it: the head or a slot, each compared with the
        # address on its own (registers, beside the arbitration) rather than one compare behind
        # the choice of message, which put the multiplexer and the compare in series after it.
        def in_flight_next(i, address):
            m.d.comb += hazard.ahead_addr[i].eq(address)
            return hazard.ahead[i] | (from_head & (h_address == address)) | park.issues_to(address)
        incoming_next = in_flight_next(0, incoming_address)
        h_next = in_flight_next(1, h_address)
        with m.If(h_load):
            m.d.sync += [h_valid.eq(self.messages.valid), h.eq(incoming), h_blocked.eq(incoming_next)]
        with m.Else():
            m.d.sync += h_blocked.eq(h_next)
        park.update(m, head=h, head_next=h_next, next_head_address=Mux(h_load, incoming_address, h_address),
                    in_flight_next=[in_flight_next(2 + k, park.address[k]) for k in range(slots)])

        # Each message carries the hazard slot it took, so that its store and its removal name
        # the slot instead of comparing its vertex with every slot's.
        s_slot = Signal.like(hazard.insert_slot)
        r_slot = Signal.like(hazard.insert_slot)
        with m.If(s_advance):
            m.d.sync += [s_valid.eq(issue), s_item.eq(chosen), s_slot.eq(hazard.insert_slot)]
        with m.If(r_advance):
            m.d.sync += [r_valid.eq(s_valid), r_item.eq(s_item), r_slot.eq(s_slot)]

        self._write_back(m, layouts, local_bits, kernel, hazard, level=level, chosen_address=chosen_address,
                         s_advance=s_advance, r_advance=r_advance, r_valid=r_valid, r_item=r_item, r_slot=r_slot)

    def _slots_in_kernel(self, m, kernel, hazard, *, r_valid, r_slot):
        """The hazard slot of the kernel's output: the kernel keeps its inputs' order, so the
        slots of the messages inside it wait in a FIFO beside it, in LUT RAM (one output per
        input; an output in its input's own cycle takes the slot from R). The removal's address
        compare with every slot, behind the kernel's output register, was the path of
        PageRank's 4-PE top (9b2ba09, router2 seed 1: 89.6 MHz, 11.2 ns into the parking slots'
        blocked flags)."""
        m.submodules.kernel_slots = fifo = SyncFIFO(width=len(r_slot), depth=self.hazard_slots)
        taken = r_valid & kernel.i.ready
        same_cycle = kernel.o.valid & ~fifo.r_rdy
        m.d.comb += [
            fifo.w_en.eq(taken & ~same_cycle),
            fifo.w_data.eq(r_slot),
            fifo.r_en.eq(kernel.o.valid & fifo.r_rdy),
            hazard.remove_slot.eq(Mux(fifo.r_rdy, fifo.r_data, r_slot)),
            hazard.store_slot.eq(r_slot),
        ]

    def _write_back(self, m, layouts, local_bits, kernel, hazard, *, level, chosen_address, s_advance, r_advance,
                    r_valid, r_item, r_slot):
        """The read data (forwarded from a write not yet landed) into the kernel, and its result
        through the write-back register into the vertex memory, the touched list and the hazard unit."""
        # Write-back register: the kernel's result is written one cycle after it leaves the
        # kernel, so the vertex memory read -> kernel path ends at a flip-flop instead of running
        # on into the write port, the touched flag compare and the hazard CAM (the PE's critical
        # path). The vertex stays in the hazard unit until this stage writes it.
        wb_valid = Signal()
        wb = Signal(layouts.gather_out)
        m.d.sync += [wb_valid.eq(kernel.o.valid), wb.eq(kernel.o.payload)]
        wb_address = wb.nodeid[:local_bits]
        before = hazard.remove_data  # the vertex word as read, for the entry being written back
        changed = wb.state.as_value() != before.state.as_value()
        if self._write_latency:
            # The entry frees as the write-back stage writes, but a registered write reaches the
            # memory a cycle later: a read issued now of the vertex written back now gets the
            # word being written, and one issued as a write lands gets that word.
            hit, newest = newest_write(m, valid=wb_valid, address=wb_address, word=self.wr.data,
                                       read_address=chosen_address)
            s_forward = Signal()
            s_forward_word = Signal(layouts.vertex_word, reset_less=True)
            with m.If(s_advance):
                m.d.sync += [s_forward.eq(hit), s_forward_word.eq(newest)]
            r_data = read_data_register(m, advance=r_advance, memory_word=self.rd.data,
                                        forward=s_forward, forward_word=s_forward_word)
        else:
            r_data = read_data_register(m, advance=r_advance, memory_word=self.rd.data)
        m.d.comb += kernel_inputs(kernel, valid=r_valid, level=level, item=r_item, state=r_data.state)
        m.d.comb += [
            hazard.store.eq(r_valid & kernel.i.ready),
            hazard.store_data.eq(r_data),
            self.wr.en.eq(wb_valid),
            self.wr.addr.eq(wb_address),
            self.wr.data.state.eq(wb.state),
            self.wr.data.touched.eq(before.touched | changed),
            self.wr.data.epoch.eq(Mux(before.touched, before.epoch, level[0])),
            self.touch.valid.eq(wb_valid & changed & ~before.touched),
            self.touch.payload.eq(wb_address),
            # Announced a cycle ahead: the entry frees as the write-back stage writes it.
            hazard.remove.eq(kernel.o.valid),
        ]
        self._slots_in_kernel(m, kernel, hazard, r_valid=r_valid, r_slot=r_slot)
