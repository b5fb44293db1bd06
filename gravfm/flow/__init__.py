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
synthesis (the plan stage only) call the same stages.
:func:`check_partition_independence` runs the stages on two partitions of a probe graph.
"""

from ..sim.readback import Readback, SuperstepRow
from .elaboration import elaborate
from .loading import load
from .options import RunOptions
from .partition_check import check_partition_independence
from .pipeline import run
from .planning import (HARDWARE_OPTIONS, LARGE_SYSTEM_PES, Plan, choose_capacities, default_link_fifo_depth,
                       default_max_rounds, default_network_fifo_depth, default_update_lanes, graph_capacities,
                       next_power_of_two, plan, stated_capacity, system_config)
from .preparation import Prepared, prepare
from .reporting import RunReport, report
from .simulation import BACKENDS, make_backend, simulate
from .verification import Verdict, verify

__all__ = ["BACKENDS", "HARDWARE_OPTIONS", "LARGE_SYSTEM_PES", "Plan", "Prepared", "Readback", "RunOptions",
           "RunReport", "SuperstepRow", "Verdict", "check_partition_independence", "choose_capacities",
           "default_link_fifo_depth", "default_max_rounds", "default_network_fifo_depth", "default_update_lanes",
           "elaborate", "graph_capacities", "load", "make_backend", "next_power_of_two", "plan", "prepare", "report",
           "run", "simulate", "stated_capacity", "system_config", "verify"]
