"""The run pipeline, one stage per module, each a plain function with a typed result.

============  =====================================================  =========================
stage         function                                               result
============  =====================================================  =========================
prepare       :func:`prepare` (algorithm, graph, params)             :class:`Prepared`
plan          :func:`plan` (partition, every sizing rule)            :class:`Plan`
elaborate     :func:`elaborate` (the system top)                     the top
load          :func:`load` (host writes and their decoder)           ``LoadPlan``
simulate      :func:`simulate` on a back-end (:func:`make_backend`)  ``Readback``
verify        :func:`verify` (the one rule)                          :class:`Verdict`
report        :func:`report` (with the model's prediction)           :class:`RunReport`
============  =====================================================  =========================

:func:`run` chains them for a :class:`RunOptions`; the CLI, the tests, the benchmarks and
synthesis (the plan stage only) call the same stages. Names load lazily, so that importing one
stage (synthesis imports :mod:`gravfm.flow.planning`) does not import the others.
"""

import importlib

_NAMES = {
    "Prepared": "preparation", "prepare": "preparation",
    **{name: "planning" for name in ("Plan", "plan", "system_config", "graph_capacities", "choose_capacities",
                                     "stated_capacity", "next_power_of_two", "default_max_rounds",
                                     "default_update_lanes", "default_network_fifo_depth",
                                     "default_link_fifo_depth", "LARGE_SYSTEM_PES", "HARDWARE_OPTIONS")},
    "elaborate": "elaboration", "load": "loading",
    "simulate": "simulation", "make_backend": "simulation", "BACKENDS": "simulation",
    "Verdict": "verification", "verify": "verification",
    "RunReport": "reporting", "report": "reporting",
    "RunOptions": "options", "run": "pipeline",
}

__all__ = sorted(_NAMES) + ["Readback", "SuperstepRow"]


def __getattr__(name):
    if name in ("Readback", "SuperstepRow"):
        return getattr(importlib.import_module("gravfm.sim.readback"), name)
    if name in _NAMES:
        return getattr(importlib.import_module(f"gravfm.flow.{_NAMES[name]}"), name)
    raise AttributeError(f"module 'gravfm.flow' has no attribute {name!r}")
