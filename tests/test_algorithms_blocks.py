"""Kernel building blocks (gravfm.algorithms.blocks) in Amaranth's simulator, and their errors."""

import dataclasses
import subprocess
import sys

import pytest
from amaranth.sim import Simulator

from gravfm.algorithms import SSSP, WCC
from gravfm.algorithms.blocks import ConditionalGather, EmitIfActiveApply, ExtremumGather, MapScatter
from gravfm.errors import ConfigError
from gravfm.hw import KernelLayouts, SystemConfig
from gravfm.hw.pe.gather_forward import is_combinational


def layouts_of(vertex, update, message, edge=None):
    """Kernel layouts of a made-up algorithm with these layouts (8-bit vertex ids)."""
    base = SSSP if edge else WCC
    algorithm = dataclasses.replace(base, name="blocks", vertex=vertex, update=update, message=message,
                                    edge=edge or {}, vertexid_fields=())
    return KernelLayouts(algorithm, SystemConfig.of(algorithm=algorithm, pes_per_fpga=1, local_bits=8,
                                                 edges_per_pe=16))


WCC_LAYOUTS = layouts_of({"label": 8, "active": 1}, {"label": 8}, {"label": 8})
PATH_LAYOUTS = layouts_of({"distance": 8, "parent": 8, "active": 1}, {"distance": 8}, {"distance": 8},
                          edge={"weight": 8})
BFS_LAYOUTS = layouts_of({"parent": 8, "visited": 1, "active": 1}, {}, {})


def simulate(dut, bench, *, clocked=False):
    sim = Simulator(dut)
    if clocked:
        sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def state(ctx, port):
    return {name: ctx.get(port.payload.state[name]) for name, _ in port.payload.state.shape()}


# -- gather ---------------------------------------------------------------------------------

@pytest.mark.parametrize("message, label, active, expected", [
    (3, 5, 0, {"label": 3, "active": 1}),   # smaller: taken, vertex becomes active
    (7, 5, 0, {"label": 5, "active": 0}),   # larger: state kept
    (5, 5, 0, {"label": 5, "active": 0}),   # tie: state kept, not active
    (7, 5, 1, {"label": 5, "active": 1}),   # already active stays active
])
def test_min_gather(message, label, active, expected):
    dut = ExtremumGather(WCC_LAYOUTS, field="label", keep="min")

    async def bench(ctx):
        i = dut.i.payload
        ctx.set(i.nodeid, 9)
        ctx.set(i.message.label, message)
        ctx.set(i.state.label, label)
        ctx.set(i.state.active, active)
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.o.ready, 1)
        # Combinational: the new state is out in the cycle of the message.
        assert ctx.get(dut.o.valid) == 1 and ctx.get(dut.i.ready) == 1
        assert ctx.get(dut.o.payload.nodeid) == 9
        assert state(ctx, dut.o) == expected
        ctx.set(dut.o.ready, 0)  # back-pressure reaches the input at once
        assert ctx.get(dut.i.ready) == 0 and ctx.get(dut.o.valid) == 1
        ctx.set(dut.i.valid, 0)
        assert ctx.get(dut.o.valid) == 0

    simulate(dut, bench)
    assert dut.combinational is True and is_combinational(dut)


@pytest.mark.parametrize("message, distance, expected", [
    (9, 4, {"distance": 9, "parent": 2, "active": 1}),  # larger: taken with the sender as parent
    (3, 4, {"distance": 4, "parent": 7, "active": 0}),  # smaller: kept, parent too
])
def test_max_gather_takes_the_other_fields_along(message, distance, expected):
    dut = ExtremumGather(PATH_LAYOUTS, field="distance", keep="max", also=lambda i: {"parent": i.sender})

    async def bench(ctx):
        i = dut.i.payload
        ctx.set(i.sender, 2)
        ctx.set(i.message.distance, message)
        ctx.set(i.state.distance, distance)
        ctx.set(i.state.parent, 7)
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.o.ready, 1)
        assert state(ctx, dut.o) == expected

    simulate(dut, bench)


def test_conditional_gather_first_visit():
    dut = ConditionalGather(BFS_LAYOUTS, condition=lambda i: ~i.state.visited,
                            take=lambda i: {"parent": i.sender, "visited": 1}, combinational=False)

    async def bench(ctx):
        i = dut.i.payload
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.o.ready, 1)
        ctx.set(i.sender, 4)
        ctx.set(i.state.parent, 200)
        assert state(ctx, dut.o) == {"parent": 4, "visited": 1, "active": 1}
        ctx.set(i.state.visited, 1)  # a second message changes nothing
        assert state(ctx, dut.o) == {"parent": 200, "visited": 1, "active": 0}

    simulate(dut, bench)
    # Asked not to declare itself combinational: the PE then keeps its plain hazard wait.
    assert dut.combinational is False and not is_combinational(dut)


# -- apply ----------------------------------------------------------------------------------

def test_emit_if_active_apply():
    dut = EmitIfActiveApply(PATH_LAYOUTS)  # update.distance = state.distance by default

    async def bench(ctx):
        i, st, up = dut.i.payload, dut.state_o.payload, dut.update_o.payload
        ctx.set(i.nodeid, 6)
        ctx.set(i.round, 2)
        ctx.set(i.state.distance, 42)
        ctx.set(i.state.parent, 3)
        ctx.set(i.state.active, 1)
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.update_o.ready, 1)
        # Active: written back with the flag cleared, and announced.
        assert ctx.get(dut.state_o.valid) == 1 and ctx.get(st.nodeid) == 6
        assert state(ctx, dut.state_o) == {"distance": 42, "parent": 3, "active": 0}
        assert ctx.get(dut.update_o.valid) == 1 and ctx.get(dut.i.ready) == 1
        assert (ctx.get(up.update.distance), ctx.get(up.sender), ctx.get(up.round)) == (42, 6, 2)
        # A full update queue holds the active vertex back.
        ctx.set(dut.update_o.ready, 0)
        assert ctx.get(dut.i.ready) == 0 and ctx.get(dut.update_o.valid) == 1
        # An inactive vertex is written back, emits nothing and is never held.
        ctx.set(i.state.active, 0)
        assert ctx.get(dut.state_o.valid) == 1 and ctx.get(dut.update_o.valid) == 0
        assert ctx.get(dut.i.ready) == 1
        # The barrier is passed on as an update.
        ctx.set(i.barrier, 1)
        ctx.set(dut.update_o.ready, 1)
        assert ctx.get(dut.update_o.valid) == 1 and ctx.get(up.barrier) == 1 and ctx.get(st.barrier) == 1
        ctx.set(dut.i.valid, 0)
        assert ctx.get(dut.update_o.valid) == 0 and ctx.get(dut.state_o.valid) == 0

    simulate(dut, bench)


def test_apply_with_an_update_function_and_no_update_fields():
    doubled = EmitIfActiveApply(WCC_LAYOUTS, update=lambda i: {"label": i.state.label * 2})
    empty = EmitIfActiveApply(BFS_LAYOUTS)

    async def bench(ctx):
        ctx.set(doubled.i.payload.state.label, 21)
        assert ctx.get(doubled.update_o.payload.update.label) == 42
        ctx.set(empty.i.valid, 1)
        ctx.set(empty.i.payload.state.active, 1)
        assert ctx.get(empty.update_o.valid) == 1

    from amaranth.hdl import Module
    top = Module()
    top.submodules.doubled, top.submodules.empty = doubled, empty
    simulate(top, bench)


# -- scatter --------------------------------------------------------------------------------

def _present(ctx, dut, *, distance, weight, neighbor):
    i = dut.i.payload
    ctx.set(i.update.distance, distance)
    ctx.set(i.edge.weight, weight)
    ctx.set(i.neighbor, neighbor)
    ctx.set(i.sender, 1)
    ctx.set(i.round, 3)


def _out(ctx, dut):
    o = dut.o.payload
    return ctx.get(o.message.distance), ctx.get(o.neighbor), ctx.get(o.sender), ctx.get(o.round)


def test_registered_scatter_holds_its_output_under_backpressure():
    dut = MapScatter(PATH_LAYOUTS, message=lambda i: {"distance": i.update.distance + i.edge.weight})

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        _present(ctx, dut, distance=10, weight=5, neighbor=7)
        ctx.set(dut.i.valid, 1)
        assert ctx.get(dut.i.ready) == 1 and ctx.get(dut.o.valid) == 0  # nothing until the clock
        await ctx.tick()
        assert ctx.get(dut.o.valid) == 1 and _out(ctx, dut) == (15, 7, 1, 3)
        # The receiver stalls: the register keeps its item and refuses the next one.
        ctx.set(dut.o.ready, 0)
        _present(ctx, dut, distance=20, weight=1, neighbor=8)
        assert ctx.get(dut.i.ready) == 0
        await ctx.tick().repeat(3)
        assert ctx.get(dut.o.valid) == 1 and _out(ctx, dut) == (15, 7, 1, 3)
        # Released: the next item moves in behind it, one per cycle.
        ctx.set(dut.o.ready, 1)
        assert ctx.get(dut.i.ready) == 1
        await ctx.tick()
        assert ctx.get(dut.o.valid) == 1 and _out(ctx, dut) == (21, 8, 1, 3)
        ctx.set(dut.i.valid, 0)
        await ctx.tick()
        assert ctx.get(dut.o.valid) == 0
        # An empty register takes an item even while the receiver is not ready.
        ctx.set(dut.o.ready, 0)
        assert ctx.get(dut.i.ready) == 1

    simulate(dut, bench, clocked=True)


def test_combinational_scatter_and_the_default_message():
    dut = MapScatter(WCC_LAYOUTS, registered=False)  # message.label = update.label

    async def bench(ctx):
        ctx.set(dut.i.payload.update.label, 77)
        ctx.set(dut.i.payload.barrier, 1)
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.o.ready, 1)
        assert ctx.get(dut.o.valid) == 1 and ctx.get(dut.i.ready) == 1
        assert ctx.get(dut.o.payload.message.label) == 77 and ctx.get(dut.o.payload.barrier) == 1
        ctx.set(dut.o.ready, 0)
        assert ctx.get(dut.i.ready) == 0

    simulate(dut, bench)


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("build, message", [
    (lambda: ExtremumGather(WCC_LAYOUTS, field="lable"),
     "ExtremumGather: field 'lable' is not a message field (message fields: 'label')"),
    (lambda: ExtremumGather(PATH_LAYOUTS, field="distance", keep="minimum"),
     "ExtremumGather: keep must be 'min' or 'max', not 'minimum'"),
    (lambda: ExtremumGather(PATH_LAYOUTS, field="distance", also=lambda i: {"parnet": i.sender}),
     "ExtremumGather: also names 'parnet', which is not a vertex field "
     "(vertex fields: 'distance', 'parent', 'active')"),
    (lambda: ExtremumGather(PATH_LAYOUTS, field="distance", also=lambda i: {"distance": 0}),
     "ExtremumGather: also names 'distance', the field the block keeps the min of"),
    (lambda: ExtremumGather(layouts_of({"x": 8, "active": 1}, {}, {"active": 1}), field="active"),
     "ExtremumGather: field 'active' is the active flag; keep the min of another field"),
    (lambda: ExtremumGather(PATH_LAYOUTS, field="distance", active="parent"),
     "ExtremumGather: active 'parent' is 8 bits wide; a flag must be 1 bit"),
    (lambda: ExtremumGather(WCC_LAYOUTS, field="label", combinational=1),
     "ExtremumGather: combinational must be True or False, not 1"),
    (lambda: ConditionalGather(BFS_LAYOUTS, condition=lambda i: i.state.parent, take=lambda i: {}),
     "ConditionalGather: condition must return a 1-bit value, not 8 bits"),
    (lambda: ConditionalGather(BFS_LAYOUTS, condition=lambda i: 1, take=lambda i: {"active": 1}),
     "ConditionalGather: take names the active flag 'active', which the block sets itself"),
    (lambda: ConditionalGather(BFS_LAYOUTS, condition=lambda i: 1, take={"parent": 0}),
     "ConditionalGather: take must be a callable"),
    (lambda: EmitIfActiveApply(WCC_LAYOUTS, active="on"),
     "EmitIfActiveApply: active 'on' is not a vertex field (vertex fields: 'label', 'active')"),
    (lambda: EmitIfActiveApply(layouts_of({"d": 8, "active": 1}, {"label": 8}, {"label": 8})),
     "EmitIfActiveApply: update field 'label' has no vertex field of that name to copy; pass update="),
    (lambda: EmitIfActiveApply(WCC_LAYOUTS, update=lambda i: {}),
     "EmitIfActiveApply: update gives no value for update field 'label'"),
    (lambda: EmitIfActiveApply(WCC_LAYOUTS, update=lambda i: {"label": "x"}),
     "EmitIfActiveApply: update gives update field 'label' 'x', not an Amaranth value"),
    (lambda: MapScatter(PATH_LAYOUTS, message=lambda i: {"distanse": i.update.distance}),
     "MapScatter: message names 'distanse', which is not a message field (message fields: 'distance')"),
    (lambda: MapScatter(PATH_LAYOUTS, message=lambda i: i.update.distance),
     "MapScatter: message must return a dict {message field: value}, not Slice"),
    (lambda: MapScatter(WCC_LAYOUTS, registered="yes"),
     "MapScatter: registered must be True or False, not 'yes'"),
])
def test_bad_arguments_fail_at_once_naming_them(build, message):
    with pytest.raises(ConfigError) as error:
        build()
    assert str(error.value).startswith(message)


def test_a_wrong_field_inside_a_function_names_it():
    with pytest.raises(AttributeError, match="does not have a field 'lable'"):
        MapScatter(WCC_LAYOUTS, message=lambda i: {"label": i.update.lable})


def test_importing_the_algorithms_does_not_import_amaranth():
    code = "import sys, gravfm.algorithms; print('amaranth' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "False"
