"""Simulation back-ends and the host-side loader shared by them.

``gravfm.sim.loader`` (no Amaranth import) builds host writes and decodes states. The back-ends,
``gravfm.sim.amaranth_backend.AmaranthBackend`` (Amaranth's simulator) and
``gravfm.sim.verilator_backend.VerilatorBackend`` (the compiled simulator of
``gravfm.sim.verilator``), return one read-back type, ``gravfm.sim.readback.Readback``.
A top's edge-memory ports are served by the simulated memory of ``gravfm.sim.memory_params``
(parameters, images), ``gravfm.sim.memory_model`` (Python) and ``memory_model.h`` (C++): one
memory, or an HBM's independent pseudo-channels (``memory_channels.h``), the image split per
channel by ``gravfm.sim.memory_image``.
"""

from .loader import LoadPlan, build_load

__all__ = ["LoadPlan", "build_load"]
