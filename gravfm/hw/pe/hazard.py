"""Read-after-write hazard unit of the gather stage: a small CAM of vertices in flight.

A vertex enters the CAM when gather reads its state and leaves when its new state is written back;
optionally each entry also keeps data (gather keeps the state it read, to tell at the write-back
whether the kernel changed it). A message whose vertex is in the CAM must wait; every other message
passes. An entry that is being written back in this cycle already counts as free: the vertex
memory's gather read port is transparent for the write port, so a read issued in that cycle returns
the new state.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from ..selection import any_of
from ..unused import silence_unused

__all__ = ["HazardUnit"]


class HazardUnit(wiring.Component):
    """Track up to ``slots`` addresses in flight.

    Parameters
    ----------
    addr_bits : int
        Width of a (local) vertex address.
    slots : int
        Capacity; the gather stage holds a vertex for its kernel latency L plus three cycles
        (read, read-data register, write-back), so ``slots >= L + 3`` sustains one message per
        cycle.
    payload : ShapeLike or None
        Data kept per entry (see ``store``).
    remove_latency : 0 or 1
        With 1, ``remove``/``remove_addr`` announce a removal that takes effect one cycle
        later (the entry counts as free, and ``remove_data`` shows its data, in that cycle).
    lookahead : int
        Number of look-ahead checks (``ahead_addr``/``ahead``); needs ``remove_latency=1``.
    by_slot : bool
        Removals and stores name the entry's slot (``remove_slot``, ``store_slot``; the slot an
        insert took is ``insert_slot``) instead of its address: the user carries the slot beside
        the vertex, and the announcement decodes it rather than comparing an address with every
        slot (the address ``remove_addr`` and ``store_addr`` are then not read).

    Ports
    -----
    check_addr : In(addr_bits)
        Address of the candidate message.
    hazard : Out(1)
        ``check_addr`` is in flight (and not being removed this cycle).
    check2_addr, hazard2 : In(addr_bits), Out(1)
        A second, independent check (the gather stage's parked message).
    ahead_addr, ahead : In(ArrayLayout(addr_bits, lookahead)), Out(lookahead)
        Look-ahead checks, for a hazard flag kept in a register: bit ``i`` of ``ahead`` is set
        when ``ahead_addr[i]`` is in flight and its entry is neither freeing in this cycle nor
        announced for removal (so it still counts as in flight in the next cycle). This cycle's
        ``insert`` is not included: the user compares it against ``insert_addr`` itself.
    full : Out(1)
        No slot is free this cycle.
    insert, insert_addr : In(1), In(addr_bits)
        Record an address (only when ``~full``).
    remove, remove_addr : In(1), In(addr_bits)
        Forget an address (its write-back happens this cycle).
    empty : Out(1)
        Nothing in flight.
    store, store_addr, store_data : In(1), In(addr_bits), In(payload)
        Attach ``store_data`` to the in-flight entry of ``store_addr`` (when ``payload`` is given).
    insert_slot, remove_slot, store_slot : Out(range(slots)), In(range(slots)), In(range(slots))
        With ``by_slot``: the slot this cycle's insert takes, and the slots a removal and a
        store name.
    remove_data : Out(payload)
        Data attached to the entry of ``remove_addr`` (``store_data`` itself when stored in the
        same cycle, for a kernel without latency); with ``remove_latency=1`` a register, valid
        in the cycle after the announcement.
    """

    def __init__(self, *, addr_bits, slots, payload=None, remove_latency=0, lookahead=0, by_slot=False):
        if not isinstance(slots, int) or slots < 1:
            raise TypeError(f"hazard slots must be a positive integer, not {slots!r}")
        self._slots = slots
        self._payload = payload
        if remove_latency not in (0, 1):
            silence_unused(self)  # never elaborated: do not warn about it
            raise TypeError(f"hazard remove latency must be 0 or 1, not {remove_latency!r}")
        self._remove_latency = remove_latency
        if not isinstance(lookahead, int) or lookahead < 0 or (lookahead and not remove_latency):
            silence_unused(self)
            raise TypeError(f"hazard look-ahead needs remove_latency=1 and a count >= 0, not {lookahead!r}")
        self._lookahead = lookahead
        self._by_slot = bool(by_slot)
        members = {
            "check_addr": In(addr_bits), "hazard": Out(1), "full": Out(1),
            "check2_addr": In(addr_bits), "hazard2": Out(1),
            "insert": In(1), "insert_addr": In(addr_bits),
            "remove": In(1), "remove_addr": In(addr_bits),
            "empty": Out(1),
        }
        if lookahead:
            members.update({"ahead_addr": In(data.ArrayLayout(addr_bits, lookahead)),
                            "ahead": Out(lookahead)})
        if by_slot:
            members.update({"insert_slot": Out(range(slots)), "remove_slot": In(range(slots)),
                            "store_slot": In(range(slots))})
        if payload is not None:
            members.update({"store": In(1), "store_addr": In(addr_bits), "store_data": In(payload),
                            "remove_data": Out(payload)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        width = len(self.check_addr)
        valid = [Signal(name=f"valid{k}") for k in range(self._slots)]
        addr = [Signal(width, name=f"addr{k}") for k in range(self._slots)]
        freeing = [Signal(name=f"freeing{k}") for k in range(self._slots)]
        free = []
        announced = []
        for k in range(self._slots):
            names = (self.remove_slot == k) if self._by_slot else (addr[k] == self.remove_addr)
            match = self.remove & valid[k] & names
            announced.append(match)
            if self._remove_latency:
                # Compare a cycle ahead so that the write-back stage sees one flip-flop per slot
                # (the address compare and data mux were the PE's critical path).
                match_q = Signal(name=f"removing{k}")
                m.d.sync += match_q.eq(match)
                match = match_q
            m.d.comb += freeing[k].eq(match)
            free.append(~valid[k] | freeing[k])
        m.d.comb += [
            self.hazard.eq(any_of([valid[k] & ~freeing[k] & (addr[k] == self.check_addr)
                                    for k in range(self._slots)])),
            self.hazard2.eq(any_of([valid[k] & ~freeing[k] & (addr[k] == self.check2_addr)
                                    for k in range(self._slots)])),
            self.full.eq(~any_of(free)),
            self.empty.eq(~any_of(valid)),
        ]
        for i in range(self._lookahead):
            # In flight next cycle (apart from this cycle's insert): not freeing now and not
            # announced now (announced entries free in the next cycle).
            m.d.comb += self.ahead[i].eq(any_of([
                valid[k] & ~freeing[k] & ~announced[k] & (addr[k] == self.ahead_addr[i])
                for k in range(self._slots)]))
        for k in range(self._slots):
            with m.If(freeing[k]):
                m.d.sync += valid[k].eq(0)
        # Insert into the lowest free slot; a later assignment wins over the removal above.
        with m.If(self.insert):
            for k in range(self._slots):
                with (m.If if k == 0 else m.Elif)(free[k]):
                    m.d.sync += [valid[k].eq(1), addr[k].eq(self.insert_addr)]
        if self._by_slot:
            for k in reversed(range(self._slots)):   # the lowest free slot's index
                with m.If(free[k]):
                    m.d.comb += self.insert_slot.eq(k)
        if self._payload is not None:
            data = [Signal(self._payload, name=f"data{k}") for k in range(self._slots)]
            for k in range(self._slots):
                names = (self.store_slot == k) if self._by_slot else (addr[k] == self.store_addr)
                with m.If(self.store & valid[k] & names):
                    m.d.sync += data[k].eq(self.store_data)
            # A store and the removal of the same entry in one cycle: a kernel without latency.
            same = ((self.store_slot == self.remove_slot) if self._by_slot
                    else (self.store_addr == self.remove_addr))
            bypass = self.store & same
            if self._remove_latency:
                # Pick the entry's data when the removal is announced and register it, so the
                # write-back stage compares against a flip-flop, not a slot mux.
                domain, chosen_by = m.d.sync, announced
            else:
                domain, chosen_by = m.d.comb, freeing
            with m.If(bypass):
                domain += self.remove_data.eq(self.store_data)
            with m.Else():
                for k in range(self._slots):
                    with m.If(chosen_by[k]):
                        domain += self.remove_data.eq(data[k])
        return m

