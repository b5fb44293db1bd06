"""The contract every kernel keeps, checked on a short bench run (:mod:`gravfm.hw.kernel_bench`).

Rules (docs/kernels.md, "The kernel contract and its check"):

* gather and scatter emit one output per input, in order; a gather output carries its input's
  ``nodeid`` (the PE writes the state there), a scatter output its input's ``neighbor`` (the
  message goes there), and scatter passes each barrier item on as one item with ``barrier=1``;
* apply passes the barrier: after the barrier input, exactly one ``update_o`` item with
  ``barrier=1``, and no update or write-back after it; at most one update per vertex, sent by
  that vertex (``sender`` = its ``nodeid``), in order; write-backs only to the vertices given,
  and with ``sparse_apply`` to every one of them;
* an offered output stays offered, unchanged, until it is taken (the stream rule);
* a gather's declared ``latency`` (default 0) is at least its measured latency: the hazard unit
  holds ``max(hazard_slots, latency + 3)`` vertices in flight, and one smaller than the measured
  latency + 3 stalls messages to distinct vertices (a silent slowdown, so an error; a build
  whose ``hazard_slots`` covers the true latency gets a warning); a larger declaration only
  costs hazard slots (a warning). A gather declaring ``combinational = True`` answers in the
  cycle of its input, is ready whenever its output is, and keeps no state: no register and no
  memory (the forwarding gather stage relies on all three, and runs two instances side by
  side: an error). For apply and scatter, ``latency`` sizes nothing: a declaration that differs
  is a warning.

Latency is measured with every output ready in every cycle: cycles from an input's handshake
to its output's (apply: from the barrier's input to its ``update_o`` item); the largest seen
counts. Kernels written in Verilog are not benched (Amaranth's simulator cannot run them).
"""

import time
from dataclasses import dataclass

from amaranth.hdl import Fragment, MemoryInstance

from .kernel_bench import PATIENCE, NotSimulable, bench_kernel, field_value
from .kernels import kernel_traits

__all__ = ["KernelVerdict", "check_kernel_contract", "declared_latency", "RULES"]

RULES = {
    "one_output": "one output per input, in order",
    "destination": "an output carries its input's destination",
    "accepts": "the kernel takes its inputs",
    "hold": "an offered output is held until taken",
    "barrier": "the barrier passes",
    "updates": "at most one update per vertex, sent by it, in order",
    "writeback": "apply writes back only the vertices it is given",
    "sparse": "a sparse_apply kernel writes back every vertex it is given",
    "accumulator": "with an accumulator, apply writes back every vertex it is given, with 0 in it",
    "latency": "the declared latency covers the measured one",
    "combinational": "a combinational gather answers in its input's cycle, is ready when its output is and "
                     "keeps no state",
}

VERILOG_REASON = ("written in Verilog: Amaranth's simulator cannot run it, so only its ports are "
                  "checked; its behaviour is checked by the verified run")


@dataclass(frozen=True)
class KernelVerdict:
    """The outcome of one kernel's contract check.

    Attributes
    ----------
    kind, kernel : str
        ``"gather"``/``"apply"``/``"scatter"`` and the kernel's class name.
    checked : bool
        False when the kernel was not benched.
    reason : str
        Why it was not benched.
    latency : int or None
        Measured latency (the largest seen with every output ready).
    declared : object
        The kernel's ``latency`` attribute (None when it has none).
    violations : tuple of (rule key, detail)
        Broken rules (:data:`RULES`), the first of each in bench order.
    warnings : tuple of str
    cycles : int
        Cycles simulated.
    seconds : float
        Time the check took (elaborating and simulating the bench).
    """

    kind: str
    kernel: str
    checked: bool
    reason: str = ""
    latency: int | None = None
    declared: object = None
    violations: tuple = ()
    warnings: tuple = ()
    cycles: int = 0
    seconds: float = 0.0

    @property
    def ok(self):
        """No rule broken."""
        return not self.violations


def declared_latency(kernel):
    """The latency ``kernel`` declares on its signature (:class:`~gravfm.hw.kernels.KernelSignature`),
    or None when it declares none."""
    return kernel_traits(kernel)[0]


def _is_latency(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_kernel_contract(kind, component, layouts, *, sparse_apply=False, accumulator=None, hazard_slots=None):
    """Bench ``component`` (a freshly built ``kind`` kernel) and check it against the rules.

    Parameters
    ----------
    kind : {"gather", "apply", "scatter"}
    component : wiring.Component
    layouts : gravfm.hw.layouts.KernelLayouts
    sparse_apply : bool
        The algorithm's ``sparse_apply`` (apply must write back every vertex).
    accumulator : str or None
        The algorithm's ``accumulator`` (apply must write back every vertex with 0 in it: the
        PE keeps that field in two banks by round parity, and a bank left unclear would add
        one round's sums into the round after next).
    hazard_slots : int, optional
        The build's configured hazard unit size (``PeConfig.hazard_slots``): a gather latency
        declared too low that it covers anyway is a warning. None: always an error.

    Returns
    -------
    KernelVerdict
    """
    started = time.perf_counter()
    name = type(component).__name__
    declared = declared_latency(component)
    if getattr(component, "verilog_source", None) is not None:
        Fragment.get(component, None)  # elaborated all the same: its errors surface here
        return KernelVerdict(kind, name, checked=False, reason=VERILOG_REASON, declared=declared)
    if declared is not None and not _is_latency(declared):
        return KernelVerdict(kind, name, checked=True, declared=declared, violations=(
            ("latency", f"latency = {declared!r}; it must be a non-negative integer (cycles)"),))
    try:
        # A declared latency lengthens the wait for an output before it counts as missing.
        records = bench_kernel(kind, component, layouts, patience=PATIENCE + 2 * min(declared or 0, 512))
    except NotSimulable:
        return KernelVerdict(kind, name, checked=False, reason=VERILOG_REASON, declared=declared)
    found = []
    for record in records:
        found += (_apply_rules(layouts, record, sparse_apply, accumulator) if kind == "apply"
                  else _stream_rules(kind, layouts, record))
        found += [("hold", f"{port} withdrew or changed an offered item before it was taken (cycle "
                           f"{cycle - record.start} of a segment)") for port, cycle in record.withdrawn[:1]]
    # Latency from the random items only: the corners check outputs, as the paper's kernels' latency
    # is measured on ordinary data.
    latencies = [delay for record in records if not record.segment.backpressure and not record.segment.labels
                 for delay in _delays(kind, layouts, record)]
    latency = max(latencies) if latencies else None
    problems, warnings = _latency_rules(kind, component, records, latency, declared, hazard_slots)
    found += problems
    first = {}
    for rule, detail in found:
        first.setdefault(rule, detail)
    return KernelVerdict(kind, name, checked=True, latency=latency, declared=declared,
                         violations=tuple(first.items()), warnings=tuple(warnings),
                         cycles=records[-1].end if records else 0, seconds=time.perf_counter() - started)


def _key(kind, layouts, raw, *, output):
    """What pairs an output with its input: gather the nodeid, scatter the barrier flag and
    (not for a barrier) the neighbour."""
    if kind == "gather":
        return ("nodeid", field_value(layouts.gather_out if output else layouts.gather_in, raw, "nodeid"))
    layout = layouts.scatter_out if output else layouts.scatter_in
    if field_value(layout, raw, "barrier"):
        return ("barrier",)
    return ("neighbor", field_value(layout, raw, "neighbor"))


def _describe_key(key):
    return "the barrier" if key == ("barrier",) else f"{key[0]} {key[1]}"


def _where(record, layouts, kind):
    """The segment, as a phrase for a message."""
    if record.segment.labels:
        return "on the field corners (with its outputs always ready)"
    pressure = "under back-pressure" if record.segment.backpressure else "with its outputs always ready"
    if kind == "apply":
        return f"in round {field_value(layouts.apply_in, record.segment.items[0], 'round')} ({pressure})"
    return pressure


def _not_accepted(record, where):
    return [("accepts", f"{where}, it took {len(record.inputs)} of {len(record.segment.items)} inputs in "
                        f"{record.end - record.start} cycles (i.ready)")]


def _stream_rules(kind, layouts, record):
    """Gather and scatter: one output per input, in order, to its input's destination."""
    where = _where(record, layouts, kind)
    if len(record.inputs) < len(record.segment.items):
        return _not_accepted(record, where)
    ins = [_key(kind, layouts, raw, output=False) for _, raw in record.inputs]
    outs = [_key(kind, layouts, raw, output=True) for _, raw in record.outputs["o"]]
    labels = record.segment.labels

    def _describe(key, k=None):  # the input's key, and which corner it is
        return _describe_key(key) + (f", {labels[k]}" if labels and k is not None and k < len(labels) else "")

    for k, key in enumerate(ins):
        # A lost barrier is named as such: the rounds after it would never end.
        lost = "barrier" if key == ("barrier",) else "one_output"
        if k >= len(outs):
            return [(lost, f"{where}, {len(ins)} inputs gave {len(outs)} outputs: input {k} "
                           f"({_describe(key, k)}) has none (nothing came out for {record.patience} cycles)")]
        if outs[k] == key:
            continue
        if k + 1 < len(ins) and outs[k] == ins[k + 1]:
            return [(lost, f"{where}, input {k} ({_describe(key, k)}) has no output: output {k} "
                           f"belongs to input {k + 1}")]
        if ("barrier",) in (key, outs[k]):
            return [("barrier", f"{where}, input {k} is {_describe(key)} but output {k} is "
                                f"{_describe(outs[k])}: scatter passes each barrier item on, in its place, "
                                f"as one item with barrier=1")]
        name = "nodeid" if kind == "gather" else "neighbor"
        return [("destination", f"{where}, output {k} has {_describe(outs[k])} but its input has "
                                f"{_describe(key, k)}: the PE sends an output by its {name}")]
    if len(outs) > len(ins):
        return [("one_output", f"{where}, {len(ins)} inputs gave {len(outs)} outputs")]
    return []


def _first_out_of_order(senders, vertices):
    """The first sender that is not the next of ``vertices`` in order (each at most once)."""
    position = 0
    for sender in senders:
        while position < len(vertices) and vertices[position] != sender:
            position += 1
        if position == len(vertices):
            return sender
        position += 1
    return None


def _apply_rules(layouts, record, sparse_apply, accumulator=None):
    """Apply: the barrier passes last; updates and write-backs belong to the vertices given."""
    where = _where(record, layouts, "apply")
    if len(record.inputs) < len(record.segment.items):
        return _not_accepted(record, where)
    state, update = layouts.apply_state, layouts.apply_update
    vertices = [field_value(layouts.apply_in, raw, "nodeid") for raw in record.segment.items[:-1]]
    barrier_in = record.inputs[-1][0]
    updates = [(cycle, raw, field_value(update, raw, "barrier")) for cycle, raw in record.outputs["update_o"]]
    barriers = [cycle for cycle, _, barrier in updates if barrier]
    if not barriers:
        return [("barrier", f"{where}, no update_o item with barrier=1 came within {record.patience} cycles of "
                            f"the barrier input: apply must pass the barrier on update_o after the round's updates "
                            f"and write-backs")]
    found = []
    passed = barriers[0]
    if passed < barrier_in:
        found.append(("barrier", f"{where}, update_o carried barrier=1 {barrier_in - passed} cycle(s) before "
                                 f"the barrier went in: only the barrier input may come out with barrier=1"))
    elif len(barriers) > 1:
        found.append(("barrier", f"{where}, the barrier came out {len(barriers)} times"))
    late = [cycle for cycle, _, barrier in updates if not barrier and cycle > passed]
    if late:
        found.append(("barrier", f"{where}, an update came {late[0] - passed} cycle(s) after the barrier: the "
                                 f"barrier follows the round's updates"))
    writes = [(cycle, field_value(state, raw, "nodeid")) for cycle, raw in record.outputs["state_o"]
              if not field_value(state, raw, "barrier")]
    late = [cycle for cycle, _ in writes if cycle > passed]
    if late:
        found.append(("barrier", f"{where}, a write-back came {late[0] - passed} cycle(s) after the barrier: "
                                 f"the barrier follows the round's last write-back"))
    stray = _first_out_of_order([field_value(update, raw, "sender") for _, raw, barrier in updates if not barrier],
                                vertices)
    if stray is not None:
        what = "came twice or out of order" if stray in vertices else "is not a vertex apply was given"
        found.append(("updates", f"{where}, an update's sender {stray} {what} (sender = the vertex's nodeid, "
                                 f"whose edges scatter follows)"))
    written = [nodeid for _, nodeid in writes]
    strangers = [nodeid for nodeid in written if nodeid not in vertices]
    if strangers:
        found.append(("writeback", f"{where}, a write-back went to nodeid {strangers[0]}, which apply was not "
                                   f"given (the PE writes the state to state_o.nodeid)"))
    missing = [nodeid for nodeid in vertices if nodeid not in written]
    if sparse_apply and missing:
        found.append(("sparse", f"{where}, vertex {missing[0]} was not written back (state_o.valid)"))
    if accumulator is not None:
        kept = [(nodeid, value) for _, raw in record.outputs["state_o"]
                if not field_value(state, raw, "barrier")
                for nodeid, value in [(field_value(state, raw, "nodeid"),
                                       field_value(layouts.vertex, field_value(state, raw, "state"), accumulator))]
                if value]
        if missing:
            found.append(("accumulator", f"{where}, vertex {missing[0]} was not written back (state_o.valid): "
                                         f"the write-back clears the accumulator {accumulator!r}"))
        elif kept:
            found.append(("accumulator", f"{where}, vertex {kept[0][0]} was written back with "
                                         f"{accumulator}={kept[0][1]:#x}: apply must clear the accumulator"))
    return found


def _kept_state(fragment):
    """What state ``fragment`` or a fragment in it keeps: ``"registers in domain D"`` or
    ``"a memory"``; None when it has none (an ``Instance`` inside cannot be seen into)."""
    if isinstance(fragment, MemoryInstance):
        return "a memory"
    for domain, statements in fragment.statements.items():
        if domain != "comb" and len(statements):
            return f"registers in domain {domain!r}"
    for subfragment, *_ in fragment.subfragments:
        state = _kept_state(subfragment)
        if state:
            return state
    return None


def _delays(kind, layouts, record):
    """Cycles from each input to its output in ``record`` (apply: the barrier's)."""
    if kind == "apply":
        update = layouts.apply_update
        barrier_in = record.inputs[-1][0] if len(record.inputs) == len(record.segment.items) else None
        passed = [cycle for cycle, raw in record.outputs["update_o"]
                  if field_value(update, raw, "barrier") and barrier_in is not None and cycle >= barrier_in]
        return passed[:1] and [passed[0] - barrier_in]
    delays = []
    for (in_cycle, in_raw), (out_cycle, out_raw) in zip(record.inputs, record.outputs["o"]):
        if _key(kind, layouts, in_raw, output=False) != _key(kind, layouts, out_raw, output=True):
            break
        delays.append(out_cycle - in_cycle)
    return delays


def _latency_rules(kind, component, records, latency, declared, hazard_slots):
    """Violations and warnings about the declared latency (module docstring)."""
    name = type(component).__name__
    if latency is None:  # nothing came out: the rules above say why
        return [], []
    if kind == "gather" and kernel_traits(component)[1]:
        problems = []
        if latency > 0:
            problems.append(("combinational", f"it declares combinational = True, but its output comes "
                                              f"{latency} cycle(s) after its input: the forwarding gather stage "
                                              f"would miss results in flight (declare latency = {latency} "
                                              f"instead)"))
        not_ready = sum(record.not_ready for record in records if not record.segment.backpressure)
        if not_ready:
            problems.append(("combinational", f"it declares combinational = True, but i.ready was low in "
                                              f"{not_ready} cycle(s) with o.ready high: the forwarding gather "
                                              f"stage never waits"))
        state = _kept_state(Fragment.get(component, None))
        if state:
            problems.append(("combinational", f"it declares combinational = True, but it keeps state ({state}): "
                                              f"the forwarding gather stage runs two instances, each seeing "
                                              f"only some of the messages"))
        return problems, []
    if kind == "gather":
        if latency > (declared or 0):
            said = "declares no latency (0)" if declared is None else f"declares latency = {declared}"
            slots = None if hazard_slots is None else max(hazard_slots, (declared or 0) + 3)
            if slots is not None and slots >= latency + 3:
                return [], [f"gather kernel {name} {said}, but its output comes {latency} cycle(s) after its "
                            f"input: declare latency = {latency} (this build's {slots} hazard slots cover it)"]
            return [("latency", f"it {said}, but its output comes {latency} cycle(s) after its input: declare "
                                f"latency = {latency} (the hazard unit holds max(hazard_slots, latency + 3) = "
                                f"{slots or (declared or 0) + 3} vertices in flight; fewer than {latency + 3} "
                                f"stall messages to distinct vertices)")], []
        if declared is not None and declared > latency:
            return [], [f"gather kernel {name} declares latency = {declared}, but its output comes {latency} "
                        f"cycle(s) after its input: its hazard unit may be {declared - latency} slot(s) larger "
                        f"than needed"]
        return [], []
    if declared is not None and declared != latency:
        return [], [f"{kind} kernel {name} declares latency = {declared}, measured {latency} (nothing is sized "
                    f"by it)"]
    return [], []
