"""A top's edge-memory ports served in Amaranth's simulator by the Python memory models.

:func:`memory_testbench` is the Amaranth back-end's counterpart of the compiled harness's
memories (``harness.cpp``): one :class:`~gravfm.sim.memory_model.MemoryModel` per memory, port
``i`` of the top served by memory ``i // P`` (one top instance), with the same timing: right
after a clock edge the ports' inputs are set from the models' registered outputs, the design
settles, and at the next edge the ports' outputs are sampled and the models clocked with them.
"""

from ..errors import ConfigError
from .memory_model import MemoryModel

__all__ = ["memory_models", "memory_testbench"]

#: A port's outputs towards the memory, in :class:`~gravfm.sim.memory_model.PortInputs` order.
REQUEST_MEMBERS = ("arvalid", "araddr", "arid", "arlen", "arsize", "arburst", "rready")
#: Its inputs from the memory, in :class:`~gravfm.sim.memory_model.PortOutputs` order.
RESPONSE_MEMBERS = ("arready", "rvalid", "rdata", "rid", "rresp", "rlast")


def memory_models(memory, mem_ports):
    """The models of ``memory`` (a MemoryLoad) for one top with ``mem_ports`` ports, by memory index."""
    per_memory = memory.ports_per_memory
    if mem_ports % per_memory or mem_ports // per_memory != len(memory.images):
        raise ConfigError(f"{len(memory.images)} memories of {per_memory} ports do not serve the top's "
                          f"{mem_ports} memory ports")
    return [MemoryModel(memory.params, image, per_memory, index=m) for m, image in enumerate(memory.images)]


def memory_testbench(top, memory):
    """An Amaranth testbench serving ``top.mem`` from ``memory`` (a MemoryLoad); add it with
    ``background=True``. Returns ``(testbench, models)`` (the models, to read their statistics)."""
    ports = list(top.mem)
    if memory.params.word_bits != len(ports[0].rdata):
        raise ConfigError(f"memory words of {memory.params.word_bits} bits, but rdata has {len(ports[0].rdata)}")
    models = memory_models(memory, len(ports))
    per_memory = memory.ports_per_memory
    requests = [getattr(port, name) for port in ports for name in REQUEST_MEMBERS]
    responses = [[getattr(port, name) for name in RESPONSE_MEMBERS] for port in ports]
    width = len(REQUEST_MEMBERS)

    async def testbench(ctx):
        shown = [None] * len(ports)   # what each port was last given: set only what changes
        while True:
            for m, model in enumerate(models):
                for j, outputs in enumerate(model.outputs()):
                    i = m * per_memory + j
                    if outputs != shown[i]:
                        for signal, value, before in zip(responses[i], outputs, shown[i] or (None,) * 6):
                            if value != before:
                                ctx.set(signal, value)
                        shown[i] = outputs
            _, _, *sampled = await ctx.tick().sample(*requests)
            for m, model in enumerate(models):
                first = m * per_memory * width
                model.clock([sampled[first + j * width:first + (j + 1) * width] for j in range(per_memory)])

    return testbench, models
