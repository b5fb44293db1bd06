"""Where the gather stage's messages wait for their vertex: parking slots, and combining in them.

A message whose vertex is in flight (between its state read and its write-back, the gather
kernel's latency + 3 cycles) moves aside into a parking slot, so the messages behind it, to
other vertices, keep flowing; a parked message issues, with priority, once its vertex is
written back. Without a combiner there is one slot, and a message to the parked vertex waits
behind it: a vertex's messages are gathered in arrival order (on one PE, the reference's).

With the algorithm's combiner (``Algorithm.combiner``, Pregel's) there are several slots. A
message to a vertex that waits in a slot is added into the waiting message by the combiner
instead of stalling the stream; while that slot's sum is in the combiner, the next message to
the vertex parks in a free slot, and later ones are added into whichever of the vertex's slots
is not busy; two parked messages of one vertex are added together whenever the head leaves the
combiner free. Parked messages issue only in cycles the head cannot use, so a hub's parked sum
keeps absorbing the hub's messages and costs the stream no cycle of its own. So a vertex takes
up to one message per cycle instead of one per write-back. This
is what the PE holding a power-law graph's hubs needs when its messages come from many PEs: on
RMAT scale 16 at 4 FPGAs x 9 PEs one vertex gets 19% of its PE's messages, more than the
1/7 a vertex can take one write-back at a time, and the broadcast holds every PE behind that one.
Combining changes how a vertex's messages are grouped (PageRank: how its float sum is
associated), so a one-PE system, whose messages arrive in the reference's order and almost
never meet an in-flight vertex, keeps the single slot and its exact sums.
"""

from amaranth.hdl import Cat, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO

from ..kernels import check_kernel, kernel_traits
from ..skid_buffer import SkidBuffer
from ..selection import any_of, one_hot_select
from ..unused import silence_unused

__all__ = ["COMBINING_SLOTS", "ParkingSlots", "parking_for"]

#: Slots with a combiner: a slot is busy for the combiner's latency after each addition, so
#: about that many slots let one vertex take a message per cycle.
COMBINING_SLOTS = 4


def parking_for(layouts, config):
    """``(combiner, slots)`` for a gather stage: the algorithm's combiner kernel (or None) and
    the number of parking slots (module docstring)."""
    factory = getattr(config.algorithm, "combiner", None)
    if factory is None or config.total_pes == 1:
        return None, 1
    combiner = factory(layouts)
    name = getattr(config.algorithm, "name", "?")
    check_kernel("combiner", combiner, layouts, name)
    latency = kernel_traits(combiner)[0] or 0
    if latency < 1:
        silence_unused(combiner)
        raise TypeError(f"algorithm {name!r}: the combiner must declare a latency of at least 1 cycle "
                        f"(its result's slot is looked up behind it), not {latency!r}")
    return combiner, COMBINING_SLOTS


def _first(flags):
    """One-hot: the lowest set flag of ``flags``."""
    return [flags[k] & ~any_of(flags[:k]) for k in range(len(flags))]


class ParkingSlots:
    """The parking slots of a :class:`~gravfm.hw.pe.gather.GatherUnit` (an elaboration helper).

    Per slot: ``valid``, the message ``item`` (``scatter_out``), ``blocked`` (its vertex is in
    flight: a register, computed a cycle ahead), ``busy`` (its message is in the combiner) and
    ``head_on`` (the head message's vertex is the slot's: a register). The gather stage calls
    :meth:`arbitrate`, :meth:`take`, :meth:`chosen` and :meth:`update` in that order.
    """

    def __init__(self, m, *, layouts, local_bits, count, combiner):
        self._m = m
        self._combiner = combiner
        self.count = count
        self.valid = [Signal(name=f"parked{k}_valid") for k in range(count)]
        self.item = [Signal(layouts.scatter_out, name=f"parked{k}") for k in range(count)]
        self.address = [item.neighbor[:local_bits] for item in self.item]
        self.blocked = [Signal(name=f"parked{k}_blocked") for k in range(count)]
        self.busy = [Signal(name=f"parked{k}_busy") for k in range(count)]
        self.head_on = [Signal(name=f"head_on_parked{k}") for k in range(count)]
        self.ready = [self.valid[k] & ~self.busy[k] & ~self.blocked[k] for k in range(count)]
        self.any_ready = any_of(self.ready)
        self.any_valid = any_of(self.valid)
        self.head_on_any = any_of([self.valid[k] & self.head_on[k] for k in range(count)])
        self._issue = [Signal(name=f"parked{k}_issue") for k in range(count)]
        self._into = [Signal(name=f"park_into{k}") for k in range(count)]
        self._add_into = [Signal(name=f"combine_into{k}") for k in range(count)]
        self._merged = [Signal(name=f"merged{k}") for k in range(count)]  # added into another slot
        # Slots j < k hold messages to one vertex (registers: the compare is made as a message
        # parks, against the head_on flags, not behind the pair choice in the combining path).
        self._pairs = [(j, k) for k in range(count) for j in range(k)]
        self._same = {(j, k): Signal(name=f"parked{j}_{k}_same", init=1) for j, k in self._pairs}
        self._done = [0] * count  # the combiner's result for the slot, this cycle
        self._result = None

    def arbitrate(self, *, can_issue, head_free):
        """Who issues when ``can_issue``: the lowest ready slot or the head (``head_free``: its
        vertex is neither in flight nor parked). Without a combiner a parked message goes first,
        as it has waited longer. With one the head goes first and a ready slot issues only in a
        cycle the head cannot use: a slot issue would otherwise cost the head a cycle for every
        parked message, and a parked hub sum that waits keeps absorbing the hub's messages.
        Returns ``(from_parked, from_head)``."""
        first = _first(self.ready)
        if self._combiner is None:
            slot_turn, from_head = can_issue, can_issue & head_free & ~self.any_ready
        else:
            slot_turn, from_head = can_issue & ~head_free, can_issue & head_free
        self._m.d.comb += [flag.eq(slot_turn & one) for flag, one in zip(self._issue, first)]
        return any_of(self._issue), from_head

    def issues_to(self, address):
        """A slot whose vertex is ``address`` issues this cycle."""
        return any_of([issue & (own == address) for issue, own in zip(self._issue, self.address)])

    @property
    def waiting(self):
        """A parked message does not issue this cycle."""
        return any_of([self.valid[k] & ~self._issue[k] for k in range(self.count)])

    def take(self, m, *, head, wants):
        """The head message (``wants``: it may not issue, its vertex being in flight or parked)
        is added into a parked message to its vertex that is neither busy nor about to issue,
        or else parked in a free slot. Returns whether it leaves the head register."""
        free = [~valid for valid in self.valid]
        park = Signal()
        if self._combiner is None:
            m.d.comb += park.eq(wants & any_of(free))
            m.d.comb += [into.eq(park & first) for into, first in zip(self._into, _first(free))]
            return park
        combiner = self._combiner
        m.submodules.combiner = combiner
        # The operands reach the combiner from flip-flops (timing plan, rule 2): the choice of
        # slots ran on into the combiner's first stage (PageRank's adder: 11 LUT levels in all).
        # A slot stays busy one cycle longer.
        m.submodules.combiner_entry = entry = SkidBuffer(shape=combiner.i.payload.shape())
        wiring.connect(m, entry.o, combiner.i)
        # The combiner keeps its inputs' order: the slot of each result waits in a FIFO beside it.
        m.submodules.combining = pending = SyncFIFO(width=max(1, (self.count - 1).bit_length()),
                                                    depth=self.count)
        # A slot takes an addition while its message is neither in the combiner nor free to issue
        # (its vertex in flight): all flip-flops. Excluding only the slot that does issue (the
        # first ready one, unless the head is free) ran the arbitration through the choice of
        # target into the head register's enable (PageRank's 4-PE top, f9a7539, router2 seed 1:
        # 87.9 MHz, 9 levels); a ready slot issues at the next free port cycle anyway.
        idle = [self.valid[k] & ~self.busy[k] & self.blocked[k] for k in range(self.count)]
        target = [idle[k] & self.head_on[k] for k in range(self.count)]
        first_target = _first(target)
        # When the head does not use the combiner, two idle slots of one vertex are added into
        # the first and the second freed: a hub then holds few slots, and other vertices park.
        pairs = self._pairs
        pair_flags = _first([idle[j] & idle[k] & self._same[j, k] for j, k in pairs])
        with_head = wants & any_of(target)
        combine, merge = Signal(), Signal()
        # Decided now, the operands chosen the next cycle, from registers (timing plan, rule 6):
        # the choice of slots (busy, blocked, head_on, the pair flags) ran on through the operand
        # multiplexers into the entry's register (PageRank's 4-PE top, 16cc7ac, router2 seed 1:
        # 84.0 MHz, 9.9 of its 11.9 ns routing). A slot stays busy one cycle longer. Operand a is
        # the slot the sum goes into, b the head's message or the merged slot's: neither slot
        # changes before the operands are read (the first is busy, the second is refilled at the
        # earliest a cycle after it frees), and the head's message is copied as it was.
        staged = Signal(name="combine_staged")
        staged_a = Signal(self.count, name="combine_a")
        staged_b = Signal(self.count, name="combine_b")
        staged_head = Signal(name="combine_head")
        messages = [item.message.as_value() for item in self.item]
        held_head = Signal(len(messages[0]), name="combine_head_message")
        # The staged pair must enter the next cycle: room for it behind the one staged now.
        room = entry.i.ready & (~staged | entry.o.ready | ~entry.o.valid)
        m.d.comb += [
            combine.eq(with_head & room),
            merge.eq(~with_head & any_of(pair_flags) & room),
            park.eq(wants & ~combine & any_of(free)),
            *(into.eq(park & first) for into, first in zip(self._into, _first(free))),
        ]
        for k in range(self.count):
            into_first = any_of([flag for (j, _), flag in zip(pairs, pair_flags) if j == k])
            into_second = any_of([flag for (_, j), flag in zip(pairs, pair_flags) if j == k])
            m.d.comb += [self._add_into[k].eq((combine & first_target[k]) | (merge & into_first)),
                         self._merged[k].eq(merge & into_second)]
        m.d.sync += [staged.eq(combine | merge), staged_a.eq(Cat(*self._add_into)), staged_b.eq(Cat(*self._merged)),
                     staged_head.eq(combine), held_head.eq(head.message.as_value())]
        m.d.comb += [
            entry.i.valid.eq(staged),
            entry.i.payload.a.eq(one_hot_select(list(staged_a), messages)),
            entry.i.payload.b.eq(Mux(staged_head, held_head, one_hot_select(list(staged_b), messages))),
        ]
        # The slot of an addition is queued as its operands enter the combiner (the result, a
        # latency of at least 1 behind, finds it there).
        m.d.comb += [
            pending.w_en.eq(staged),
            pending.w_data.eq(_encode(list(staged_a))),
            combiner.o.ready.eq(1),
            pending.r_en.eq(combiner.o.valid),
        ]
        self._done = [combiner.o.valid & (pending.r_data == k) for k in range(self.count)]
        self._result = combiner.o.payload
        return park | combine

    def chosen(self, head, *, head_free):
        """The message to issue: as :meth:`arbitrate` orders them."""
        choice = head.as_value()
        for k in reversed(range(self.count)):
            choice = Mux(self.ready[k], self.item[k].as_value(), choice)
        if self._combiner is not None:
            choice = Mux(head_free, head.as_value(), choice)
        chosen = Signal.like(head, name="chosen")
        self._m.d.comb += chosen.eq(choice)
        return chosen

    def update(self, m, *, head, head_next, next_head_address, in_flight_next):
        """Next cycle's slots: ``head`` parked (blocked as ``head_next``), issued slots freed,
        combiner results written; ``in_flight_next[k]`` is the slot's vertex in flight next
        cycle, ``next_head_address`` the head's vertex next cycle."""
        head_address = head.neighbor[:len(next_head_address)]
        for (j, k), same in self._same.items():
            # The head parks in one slot at most; its vertex against the other's is head_on.
            m.d.sync += same.eq(Mux(self._into[j], self.head_on[k], Mux(self._into[k], self.head_on[j], same)))
        for k in range(self.count):
            address_next = Mux(self._into[k], head_address, self.address[k])
            m.d.sync += self.head_on[k].eq(next_head_address == address_next)
            with m.If(self._into[k]):
                m.d.sync += [self.valid[k].eq(1), self.item[k].eq(head), self.blocked[k].eq(head_next)]
            with m.Else():
                m.d.sync += self.blocked[k].eq(in_flight_next[k])
                with m.If(self._issue[k] | self._merged[k]):
                    m.d.sync += self.valid[k].eq(0)
            with m.If(self._add_into[k]):
                m.d.sync += self.busy[k].eq(1)
            if self._result is not None:
                with m.If(self._done[k]):
                    m.d.sync += [self.busy[k].eq(0), self.item[k].message.eq(self._result)]


def _encode(one_hot):
    """Index of the set bit of a one-hot list of 1-bit values (0 when none is set)."""
    index = 0
    for k, bit in enumerate(one_hot):
        if k:
            index = index | Mux(bit, k, 0)
    return index
