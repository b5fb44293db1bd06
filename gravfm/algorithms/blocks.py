"""Kernel building blocks: the gather, apply and scatter kernels that algorithms keep repeating.

Most vertex-centric algorithms differ in one line of each kernel: what a message does to the
state, what an active vertex announces, what an edge does to the update. The blocks here hold
everything else (the ports, the handshakes, the fields passed through), so a kernel is one call::

    from gravfm.algorithms.blocks import EmitIfActiveApply, ExtremumGather, MapScatter

    gather = lambda layouts: ExtremumGather(layouts, field="label", keep="min")
    apply = lambda layouts: EmitIfActiveApply(layouts)          # update.label = state.label
    scatter = lambda layouts: MapScatter(layouts)               # message.label = update.label

Each block is an ``amaranth.lib.wiring.Component`` with the kernel signature of
:mod:`gravfm.hw.kernels`. The callables a block takes receive the payload view of its input
port (``i.message.label``, ``i.state.visited``, ``i.edge.weight``, ...) and return Amaranth
values; ``{field: value}`` dicts are assigned with ``.eq``, so a wider value is truncated to
the field. They are called once, when the block is built, so a wrong field name fails at once.

This module imports Amaranth; the built-in algorithms name their blocks through
:func:`gravfm.algorithms.kernel_factories.block_kernel`, which imports it only when the hardware
is built, so ``import gravfm.algorithms`` stays free of Amaranth.
"""

from collections.abc import Mapping

from amaranth.hdl import Module, Mux, Value
from amaranth.lib import wiring

from ..errors import ConfigError
from ..hw.kernels import apply_signature, gather_signature, scatter_signature
from ..hw.unused import silence_unused

__all__ = ["ConditionalGather", "ExtremumGather", "EmitIfActiveApply", "MapScatter"]


def _names(layout):
    return [name for name, _ in layout]


def _listing(layout):
    return ", ".join(repr(name) for name in _names(layout)) or "none"


class _Block(wiring.Component):
    """What every block shares: failing at construction with one ConfigError line."""

    def _fail(self, message):
        # A block refused at construction is never elaborated: silence Amaranth's
        # "created but never used" warning, which would only bury the error.
        silence_unused(self)
        raise ConfigError(f"{type(self).__name__}: {message}")

    def _call(self, function, *args):
        """``function(*args)``, silencing the warning above if it raises (e.g. a wrong field)."""
        try:
            return function(*args)
        except Exception:
            silence_unused(self)
            raise

    def _check_flag(self, name, value):
        if not isinstance(value, bool):
            self._fail(f"{name} must be True or False, not {value!r}")

    def _check_callable(self, name, value, meaning):
        if not callable(value):
            self._fail(f"{name} must be a callable ({meaning}), not {value!r}")

    def _check_field(self, what, name, layout, kind, *, one_bit=False):
        """``name`` must be a field of ``layout`` (the ``kind`` layout), 1 bit wide if asked."""
        if not isinstance(name, str) or name not in _names(layout):
            self._fail(f"{what} {name!r} is not a {kind} field ({kind} fields: {_listing(layout)})")
        if one_bit and layout[name].width != 1:
            self._fail(f"{what} {name!r} is {layout[name].width} bits wide; a flag must be 1 bit")

    def _values(self, what, result, layout, kind, *, complete):
        """Check ``result`` (returned by the callable ``what``) as ``{field of layout: value}``.

        ``complete``: every field of ``layout`` must be given (an output port's payload, where
        a forgotten field would silently stay 0).
        """
        if not isinstance(result, Mapping):
            self._fail(f"{what} must return a dict {{{kind} field: value}}, not {type(result).__name__}")
        values = {}
        for name, value in result.items():
            if name not in _names(layout):
                self._fail(f"{what} names {name!r}, which is not a {kind} field "
                           f"({kind} fields: {_listing(layout)})")
            try:
                values[name] = Value.cast(value)
            except TypeError as error:
                self._fail(f"{what} gives {kind} field {name!r} {value!r}, not an Amaranth value ({error})")
        missing = [name for name in _names(layout) if name not in values]
        if complete and missing:
            self._fail(f"{what} gives no value for {kind} field {missing[0]!r}")
        return {name: values[name] for name in _names(layout) if name in values}  # layout order

    def _copies(self, what, target, target_kind, source, source_kind, port_field):
        """Default ``what``: each ``target`` field copied from the ``source`` field of its name,
        found in the input payload's ``port_field``."""
        for name in _names(target):
            if name not in _names(source):
                self._fail(f"{target_kind} field {name!r} has no {source_kind} field of that name "
                           f"to copy; pass {what}=")
        return lambda i: {name: i[port_field][name] for name in _names(target)}


class _StateGather(_Block):
    """What both gathers share: ports, the active flag, and the state out in the input's cycle."""

    def __init__(self, layouts, *, active, combinational):
        self._check_flag("combinational", combinational)
        # output in the cycle of the input: the gather stage may forward results (on the signature)
        super().__init__(gather_signature(layouts, combinational=combinational))
        if active is not None:
            self._check_field("active", active, layouts.vertex, "vertex", one_bit=True)
        self._fields, self._active = _names(layouts.vertex), active

    @property
    def combinational(self):
        """What the signature declares (:class:`~gravfm.hw.kernels.KernelSignature`)."""
        return self.signature.combinational

    def _replace(self, what, changes, taken):
        """Build ``state = changes ? taken : state`` (fields absent from ``taken`` kept)."""
        if self._active in taken:
            self._fail(f"{what} names the active flag {self._active!r}, which the block sets itself")
        self._changes, self._taken = changes, taken

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        changes = self._changes
        m.d.comb += o.nodeid.eq(i.nodeid)
        for name in self._fields:
            if name == self._active:
                m.d.comb += o.state[name].eq(changes | i.state[name])
            elif name in self._taken:
                m.d.comb += o.state[name].eq(Mux(changes, self._taken[name], i.state[name]))
            else:
                m.d.comb += o.state[name].eq(i.state[name])
        m.d.comb += [
            self.o.valid.eq(self.i.valid),
            self.i.ready.eq(self.o.ready),
        ]
        return m


class ConditionalGather(_StateGather):
    """Gather that replaces state fields when the message satisfies a condition.

    One state out per message, in the same cycle (combinational): when ``condition(i)`` holds,
    the fields named by ``take(i)`` get their new values and the ``active`` flag is set; every
    other field, and every field when the condition fails, keeps its state. BFS: the first
    message a vertex receives makes its sender the parent.

    Parameters
    ----------
    layouts : gravfm.hw.KernelLayouts
    condition : callable
        ``(i) -> 1-bit value``: the message changes the state. ``i`` is the ``gather_in``
        payload (``level``, ``nodeid``, ``sender``, ``message``, ``state``).
    take : callable
        ``(i) -> {vertex field: value}``: the new values of the fields the message replaces.
    active : str or None
        1-bit vertex field set when the condition holds (cleared by
        :class:`EmitIfActiveApply`); None: no flag.
    combinational : bool
        Declare the kernel combinational (the attribute of that name), so the PE forwards an
        in-flight result to the next message for the same vertex instead of waiting for its
        write-back (docs/kernels.md). False: the PE's plain hazard wait.

    Raises
    ------
    gravfm.errors.ConfigError
        A bad argument, naming it (and the field, for a field that is not in the layout).
    """

    def __init__(self, layouts, *, condition, take, active="active", combinational=True):
        super().__init__(layouts, active=active, combinational=combinational)
        self._check_callable("condition", condition, "gather input -> 1-bit value")
        self._check_callable("take", take, "gather input -> {vertex field: value}")
        i = self.i.payload
        changes = self._call(condition, i)
        try:
            changes = Value.cast(changes)
        except TypeError:
            self._fail(f"condition must return an Amaranth value, not {changes!r}")
        if len(changes) != 1:
            self._fail(f"condition must return a 1-bit value, not {len(changes)} bits "
                       f"(compare, or reduce with .any())")
        taken = self._values("take", self._call(take, i), layouts.vertex, "vertex", complete=False)
        self._replace("take", changes, taken)


class ExtremumGather(_StateGather):
    """Gather keeping the smaller (or larger) of the message's and the state's ``field``.

    A message that strictly improves ``field`` replaces it (and the fields given by ``also``)
    and sets the ``active`` flag; a tie keeps the state. WCC: the smaller label; SSSP: the
    shorter distance, with the sender as parent. Fields compare as unsigned integers.
    Combinational, like :class:`ConditionalGather`.

    Parameters
    ----------
    layouts : gravfm.hw.KernelLayouts
    field : str
        A field of both the message and the vertex layout.
    keep : {"min", "max"}
    also : callable or None
        ``(i) -> {vertex field: value}``: further fields an improving message replaces
        (SSSP: ``lambda i: {"parent": i.sender}``).
    active, combinational
        As in :class:`ConditionalGather`.

    Raises
    ------
    gravfm.errors.ConfigError
        A bad argument, naming it (and the field, for a field that is not in the layout).
    """

    def __init__(self, layouts, *, field, keep="min", also=None, active="active", combinational=True):
        super().__init__(layouts, active=active, combinational=combinational)
        self._check_field("field", field, layouts.message, "message")
        self._check_field("field", field, layouts.vertex, "vertex")
        if field == active:
            self._fail(f"field {field!r} is the active flag; keep the {keep} of another field")
        if keep not in ("min", "max"):
            self._fail(f"keep must be 'min' or 'max', not {keep!r}")
        i = self.i.payload
        new, old = i.message[field], i.state[field]
        extra = {}
        if also is not None:
            self._check_callable("also", also, "gather input -> {vertex field: value}")
            extra = self._values("also", self._call(also, i), layouts.vertex, "vertex", complete=False)
            if field in extra:
                self._fail(f"also names {field!r}, the field the block keeps the {keep} of")
        self._replace("also", new < old if keep == "min" else new > old, {field: new, **extra})


class EmitIfActiveApply(_Block):
    """Apply that lets an active vertex announce itself once.

    Every vertex is written back unchanged but for its ``active`` flag, which is cleared; an
    active vertex emits ``update(i)`` (with its id as sender), an inactive one emits nothing;
    the round's barrier passes through. Suits ``sparse_apply`` algorithms (it writes back every
    vertex it is given).

    Parameters
    ----------
    layouts : gravfm.hw.KernelLayouts
    update : callable or None
        ``(i) -> {update field: value}`` giving every update field; ``i`` is the ``apply_in``
        payload (``nodeid``, ``state``, ``round``, ``barrier``). None: each update field is the
        vertex field of its name.
    active : str
        The 1-bit vertex field that marks an active vertex.

    Raises
    ------
    gravfm.errors.ConfigError
        A bad argument, naming it (and the field, for a field that is not in the layout).
    """

    def __init__(self, layouts, *, update=None, active="active"):
        super().__init__(apply_signature(layouts))
        self._check_field("active", active, layouts.vertex, "vertex", one_bit=True)
        if update is None:
            update = self._copies("update", layouts.update, "update", layouts.vertex, "vertex", "state")
        self._check_callable("update", update, "apply input -> {update field: value}")
        values = self._call(update, self.i.payload)
        self._update = self._values("update", values, layouts.update, "update", complete=True)
        self._fields, self._active = _names(layouts.vertex), active

    def elaborate(self, platform):
        m = Module()
        i, st, up = self.i.payload, self.state_o.payload, self.update_o.payload
        m.d.comb += st.nodeid.eq(i.nodeid)
        for name in self._fields:
            m.d.comb += st.state[name].eq(0 if name == self._active else i.state[name])
        m.d.comb += [
            st.barrier.eq(i.barrier),
            self.state_o.valid.eq(self.i.valid),
        ]
        m.d.comb += [up.update[name].eq(value) for name, value in self._update.items()]
        m.d.comb += [
            up.sender.eq(i.nodeid),
            up.round.eq(i.round),
            up.barrier.eq(i.barrier),
            self.update_o.valid.eq(self.i.valid & (i.state[self._active] | i.barrier)),
            # The write-back has no handshake; repeating it while the update stalls is harmless.
            self.i.ready.eq(self.update_o.ready | ~self.update_o.valid),
        ]
        return m


class MapScatter(_Block):
    """Scatter sending ``message(i)`` to each neighbour, through one pipeline register or none.

    Neighbour, sender, round and barrier pass through unchanged. Registered (the default), the
    output is a register that takes a new item whenever it is empty or being read
    (``i.ready = o.ready | ~o.valid``): one item per cycle, and no combinational path from the
    message function to the network. Unregistered, the message is combinational and
    ``i.ready`` follows ``o.ready``.

    Parameters
    ----------
    layouts : gravfm.hw.KernelLayouts
    message : callable or None
        ``(i) -> {message field: value}`` giving every message field; ``i`` is the
        ``scatter_in`` payload (``update``, ``sender``, ``round``, ``barrier``, ``neighbor``,
        ``num_neighbors``, ``edge``). None: each message field is the update field of its name.
    registered : bool

    Raises
    ------
    gravfm.errors.ConfigError
        A bad argument, naming it (and the field, for a field that is not in the layout).
    """

    def __init__(self, layouts, *, message=None, registered=True):
        super().__init__(scatter_signature(layouts))
        self._check_flag("registered", registered)
        if message is None:
            message = self._copies("message", layouts.message, "message", layouts.update, "update", "update")
        self._check_callable("message", message, "scatter input -> {message field: value}")
        values = self._call(message, self.i.payload)
        self._message = self._values("message", values, layouts.message, "message", complete=True)
        self._registered = registered

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        outputs = [o.message[name].eq(value) for name, value in self._message.items()] + [
            o.neighbor.eq(i.neighbor),
            o.sender.eq(i.sender),
            o.round.eq(i.round),
            o.barrier.eq(i.barrier),
            self.o.valid.eq(self.i.valid),
        ]
        if self._registered:
            m.d.comb += self.i.ready.eq(self.o.ready | ~self.o.valid)
            with m.If(self.i.ready):
                m.d.sync += outputs
        else:
            m.d.comb += outputs
            m.d.comb += self.i.ready.eq(self.o.ready)
        return m
