"""Simulation back-ends and the host-side loader shared by them.

``gravfm.sim.loader`` (no Amaranth import) builds host writes and decodes states;
``gravfm.sim.amaranth_backend`` runs a system in Amaranth's simulator; the compiled back-end
lives in ``gravfm.sim.verilator``.
"""

from .loader import LoadPlan, build_load

__all__ = ["LoadPlan", "build_load"]
