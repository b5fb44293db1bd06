"""Drive one kernel alone in Amaranth's simulator and record what it does.

The kernel contract check (:mod:`gravfm.hw.kernel_contract`) runs each kernel of an algorithm
here, as the algorithm builds it with its layouts, on a few dozen pseudo-random items (a fixed
seed: the same kernel always gets the same bench). A bench is a list of segments, each a run
of items offered on ``i``:

* gather and scatter: 12 items with every output ready in every cycle, then 12 with random
  back-pressure and gaps between inputs (scatter: two of each 12 are barriers), then the
  corners (:func:`corner_items`): every field 0, every field all ones, every field equal, and
  each field alone at 0 and at all ones, where random items rarely go;
* apply: one round of 6 vertices and the barrier per segment (rounds 0 and 1 with
  ``update_o`` always ready, round 2 with back-pressure); the next round starts only after
  the barrier has come out, as in the PE.

For every segment the bench records each handshake on ``i`` and each output beat (cycle and
raw payload), the cycles in which an offered output was withdrawn before it was taken, and the
cycles in which ``i.ready`` was low although the outputs were ready. A segment ends a few
cycles after its last expected output, or when nothing moves for ``patience`` cycles (a
stuck or swallowing kernel) or it has run ``patience`` + 16 cycles per item; the bench then
stops.
"""

import random
from dataclasses import dataclass, field

from amaranth.hdl import ClockDomain, Fragment, Instance, Module
from amaranth.lib import data
from amaranth.sim import Simulator

__all__ = ["Segment", "SegmentRecord", "NotSimulable", "bench_kernel", "bench_segments", "corner_items",
           "field_value", "with_fields", "OUTPUT_PORTS", "PATIENCE", "KEY_FIELDS"]

#: The output ports of each kernel kind.
OUTPUT_PORTS = {"gather": ("o",), "scatter": ("o",), "apply": ("state_o", "update_o")}
#: Cycles without any handshake after which a segment is given up.
PATIENCE = 64
#: Cycles a segment runs on after its last expected output, to catch extra outputs.
GRACE = 4
SEED = 22
#: Fields the bench sets itself (which vertex, which round, barrier or not): not data corners.
KEY_FIELDS = ("nodeid", "neighbor", "barrier", "round")
#: Single-field corners benched at most (two items each): wide layouts keep a short bench.
MAX_FIELD_CORNERS = 8


class NotSimulable(Exception):
    """The kernel contains an ``Instance`` (Verilog), which Amaranth's simulator cannot run."""


@dataclass(frozen=True)
class Segment:
    """Items offered to ``i`` in order (raw payload ints); with ``backpressure``, outputs are
    ready in a random half of the cycles and inputs come with random gaps."""

    items: tuple
    backpressure: bool
    #: What each item is, for a message (corner items: "every field 0", ...); empty for random ones.
    labels: tuple = ()


@dataclass
class SegmentRecord:
    """What a kernel did in one segment.

    Attributes
    ----------
    inputs : list of (cycle, raw payload)
        Handshakes on ``i``.
    outputs : dict
        ``{port: [(cycle, raw payload)]}``: beats taken (``state_o``: every valid cycle).
    withdrawn : list of (port, cycle)
        An output offered and not taken, then dropped or changed in the next cycle.
    not_ready : int
        Cycles an input was offered, every output was ready, and ``i.ready`` was low.
    finished : bool
        Every item went in and the expected outputs came out.
    patience : int
        Cycles without a handshake after which the segment was (or would have been) given up.
    """

    segment: Segment
    start: int
    patience: int = PATIENCE
    inputs: list = field(default_factory=list)
    outputs: dict = field(default_factory=dict)
    withdrawn: list = field(default_factory=list)
    not_ready: int = 0
    finished: bool = False
    end: int = 0


def field_value(layout, raw, name):
    """Field ``name`` of the struct ``layout`` in the payload ``raw`` (an int)."""
    member = layout[name]
    return (raw >> member.offset) & ((1 << member.width) - 1)


def with_fields(layout, raw, **values):
    """``raw`` with the fields named set to ``values`` (truncated to their widths)."""
    for name, value in values.items():
        member = layout[name]
        mask = ((1 << member.width) - 1) << member.offset
        raw = (raw & ~mask) | ((value << member.offset) & mask)
    return raw


class _DistinctIds:
    """Pseudo-random vertex ids, all different (while the id width allows)."""

    def __init__(self, bits, rng):
        self._modulus = 1 << bits
        self._next = rng.getrandbits(bits)
        self._stride = rng.getrandbits(bits) | 1  # odd: visits every id before repeating

    def __call__(self):
        value, self._next = self._next, (self._next + self._stride) % self._modulus
        return value


def _leaves(layout, offset=0, prefix=""):
    """``(dotted name, offset, width)`` of every leaf field of a struct layout, key fields left out."""
    for name, member in layout:
        if not prefix and name in KEY_FIELDS:
            continue
        shape = member.shape
        if isinstance(shape, data.StructLayout):
            yield from _leaves(shape, offset + member.offset, f"{prefix}{name}.")
        elif member.width:
            yield f"{prefix}{name}", offset + member.offset, member.width


def corner_items(layout, rng):
    """``(payload, label)`` of the corner inputs of a kernel's input ``layout``: every data field
    0, all ones, all 1, all one random value (equal values: a message equal to the state), then
    each field alone at 0 and at all ones (the others random)."""
    leaves = list(_leaves(layout))

    def every(value):
        raw = 0
        for _, offset, width in leaves:
            raw |= (value & ((1 << width) - 1)) << offset
        return raw

    equal = rng.getrandbits(max([width for _, _, width in leaves] or [1]))
    items = [(every(0), "every field 0"), (every(-1), "every field all ones"), (every(1), "every field 1"),
             (every(equal), f"every field {equal} (equal values)")]
    for name, offset, width in leaves[:MAX_FIELD_CORNERS]:
        mask = ((1 << width) - 1) << offset
        base = rng.getrandbits(layout.size)
        items += [(base & ~mask, f"{name} = 0"), (base | mask, f"{name} all ones")]
    return items


def bench_segments(kind, layouts, rng):
    """The segments a ``kind`` kernel is benched with (module docstring)."""
    ids = _DistinctIds(layouts.vertexid_bits, rng)
    if kind == "apply":
        layout = layouts.apply_in

        def round_items(number):
            vertices = [with_fields(layout, rng.getrandbits(layout.size), nodeid=ids(), round=number, barrier=0)
                        for _ in range(6)]
            return (*vertices, with_fields(layout, rng.getrandbits(layout.size), nodeid=ids(), round=number,
                                           barrier=1))

        return [Segment(round_items(0), False), Segment(round_items(1), False), Segment(round_items(2), True)]
    if kind == "gather":
        layout = layouts.gather_in

        def items():
            return tuple(with_fields(layout, rng.getrandbits(layout.size), nodeid=ids()) for _ in range(12))

        def keyed(raw):
            return with_fields(layout, raw, nodeid=ids())
    else:
        layout = layouts.scatter_in

        def items():
            return tuple(with_fields(layout, rng.getrandbits(layout.size), neighbor=ids(),
                                     barrier=int(k in (4, 11))) for k in range(12))

        def keyed(raw):
            return with_fields(layout, raw, neighbor=ids(), barrier=0)
    corners = corner_items(layout, rng)
    return [Segment(items(), False), Segment(items(), True),
            Segment(tuple(keyed(raw) for raw, _ in corners), False, labels=tuple(label for _, label in corners))]


def _finished(kind, layouts):
    """``record -> bool``: the segment's expected outputs are out."""
    if kind == "apply":
        layout = layouts.apply_update
        return lambda record: any(field_value(layout, raw, "barrier") for _, raw in record.outputs["update_o"])
    return lambda record: len(record.outputs["o"]) >= len(record.segment.items)


def _contains_instance(fragment):
    if isinstance(fragment, Instance):
        return True
    return any(_contains_instance(sub) for sub, _, _ in getattr(fragment, "subfragments", ()))


def bench_kernel(kind, component, layouts, *, patience=PATIENCE, seed=SEED):
    """Run ``component`` (a ``kind`` kernel) through its bench; return the segment records.

    Parameters
    ----------
    kind : {"gather", "apply", "scatter"}
    component : wiring.Component
        A freshly built kernel (it is elaborated here).
    layouts : gravfm.hw.layouts.KernelLayouts
    patience : int
        Cycles without a handshake after which a segment is given up (and the bench stops).

    Returns
    -------
    list of SegmentRecord
        One per segment run (fewer than planned when one did not finish).

    Raises
    ------
    NotSimulable
        The kernel instantiates a Verilog module.
    """
    m = Module()
    m.domains.sync = ClockDomain()  # a combinational kernel has no clocked logic of its own
    m.submodules.kernel = component
    fragment = Fragment.get(m, None)
    if _contains_instance(fragment):
        raise NotSimulable(f"the {kind} kernel instantiates a Verilog module")
    rng = random.Random(seed)
    segments = bench_segments(kind, layouts, rng)
    finished = _finished(kind, layouts)
    outputs = [(name, getattr(component, name)) for name in OUTPUT_PORTS[kind]]
    records = []

    async def bench(ctx):
        cycle = 0
        for segment in segments:
            record = SegmentRecord(segment, start=cycle, patience=patience,
                                   outputs={name: [] for name, _ in outputs})
            records.append(record)
            cycle = await _run_segment(ctx, component.i, outputs, record, rng, cycle, finished=finished)
            if not record.finished:
                return

    simulator = Simulator(fragment)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    return records


async def _run_segment(ctx, source, outputs, record, rng, cycle, *, finished):
    """Drive one segment cycle by cycle (module docstring); return the next cycle number."""
    pending = list(record.segment.items)
    backpressure = record.segment.backpressure
    offering = None
    held = {}  # port -> payload offered but not taken in the previous cycle
    quiet = 0
    after = None  # cycles since the expected outputs were out
    while True:
        ready = 1 if not backpressure else int(rng.random() < 0.5)
        for _, port in outputs:
            if not port.signature.always_ready:
                ctx.set(port.ready, ready)
        if offering is None and pending and (not backpressure or rng.random() < 0.75):
            offering = pending.pop(0)
        ctx.set(source.valid, offering is not None)
        if offering is not None:
            ctx.set(source.payload.as_value(), offering)
        moved = False
        for name, port in outputs:
            valid = ctx.get(port.valid)
            payload = ctx.get(port.payload.as_value()) if valid else None
            if name in held and payload != held[name]:
                record.withdrawn.append((name, cycle))
            held.pop(name, None)
            if valid and (ready or port.signature.always_ready):
                record.outputs[name].append((cycle, payload))
                moved = True
            elif valid:
                held[name] = payload
        if offering is not None:
            if ctx.get(source.ready):
                record.inputs.append((cycle, offering))
                offering, moved = None, True
            elif ready:
                record.not_ready += 1
        await ctx.tick()
        cycle += 1
        quiet = 0 if moved else quiet + 1
        if after is None and offering is None and not pending and finished(record):
            after = 0
        if after is not None:
            after += 1
            if after > GRACE:
                record.finished = True
                break
        # Nothing moving, or outputs without end (e.g. a kernel repeating an item it never takes).
        if quiet >= record.patience or cycle - record.start >= record.patience + 16 * len(record.segment.items):
            break
    record.end = cycle
    return cycle
