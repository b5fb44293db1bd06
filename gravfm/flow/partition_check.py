"""Does an algorithm's answer depend on the partition? Run it on two and find out.

A flow of its own (prepare, plan, elaborate, load, simulate, verify on two partitions), so it
lives with the stages it runs.

Kernels see vertices by their hardware ids (``i.nodeid``, ``i.sender``, ``i.neighbor`` and the
state fields listed in ``vertexid_fields``, which the loader translates): ``(PE << local_bits) |
local index``, numbered by the partition. On one PE they follow the graph's ids, so a kernel
that compares them (keeps the smaller, as a WCC label) or computes with them verifies there and
fails on a system of several PEs (issue 22: "verified on 1x1, 185 vertices wrong on 2x2").
:func:`check_partition_independence` runs the algorithm in Amaranth's simulator on one PE and on
two PEs whose hardware ids follow another order, and says what went wrong.
"""

import numpy as np

from ..errors import ConfigError
from ..graph import Graph
from ..partition import Partition
from .elaboration import elaborate
from .loading import load
from .planning import plan
from .preparation import prepare
from .simulation import check_backend, make_backend
from .verification import verify

__all__ = ["check_partition_independence", "reordering_partitions", "probe_graph"]


def probe_graph(vertices=24, chords=24, seed=1):
    """A small graph on which a kernel comparing hardware ids shows it: a directed cycle through
    every vertex (every vertex reaches every other, whatever the root) and seeded random chords."""
    rng = np.random.default_rng(seed)
    ring = np.arange(vertices)
    src = np.concatenate([ring, rng.integers(0, vertices, chords)])
    dst = np.concatenate([(ring + 1) % vertices, rng.integers(0, vertices, chords)])
    return Graph.from_edges(src, dst, num_vertices=vertices, self_loops="drop", duplicates="merge",
                            name=f"probe:{vertices}")


def reordering_partitions(num_vertices):
    """Two partitions whose hardware ids order the vertices differently.

    Returns
    -------
    list of (str, gravfm.partition.Partition)
        One PE (hardware ids in the graph's order) and two PEs, the upper half of the graph's
        ids on PE 0, so that it comes first in hardware id order; each with a phrase saying so.
    """
    if num_vertices < 2:
        raise ConfigError(f"check_partition_independence: a graph of {num_vertices} vertex cannot be split "
                          f"over 2 PEs")
    half = num_vertices // 2
    upper_first = (np.arange(num_vertices) < half).astype(np.int64)  # the lower half on PE 1
    return [("1 PE, where hardware ids follow the graph's ids",
             Partition(np.zeros(num_vertices, dtype=np.int64), 1, 1, method="one PE")),
            (f"2 PEs, where vertices {half}..{num_vertices - 1} come first in hardware id order",
             Partition(upper_first, 1, 2, method="upper half first"))]


def _run(prepared, partition, backend, hardware):
    """The verdict of one run of ``prepared`` on ``partition``, its kernels checked before the build."""
    hardware_plan = plan(prepared, fpgas=partition.fpgas, pes=partition.pes_per_fpga, partition=partition,
                         **hardware)
    top = elaborate(hardware_plan)
    writes = load(prepared, hardware_plan, top)
    simulator = make_backend(backend) if isinstance(backend, str) else backend
    try:
        readback = simulator.simulate(top, writes, log=None, on_progress=None,
                                      total_messages=prepared.reference_messages)
    except ConfigError as error:  # the Amaranth back-end's cycle budget: the run did not end
        return False, str(error)
    verdict = verify(prepared, readback, partition_hint=False)  # the caller explains it better
    return verdict.ok, verdict.detail


def check_partition_independence(algorithm, graph=None, *, params=None, backend="amaranth", **hardware):
    """Run ``algorithm`` on two partitions that order the hardware ids differently; compare.

    Parameters
    ----------
    algorithm : gravfm.algorithms.Algorithm or str
        An algorithm object, a registered name or ``FILE.py:NAME``.
    graph : gravfm.graph.Graph or str, optional
        At least 2 vertices; default :func:`probe_graph` (24 vertices on a cycle, with chords).
    params : dict, optional
        The algorithm's parameters (a ``root`` in the input's ids).
    backend : str or back-end object
        ``"amaranth"`` (default; a few seconds per run) or ``"verilator"``.
    **hardware
        :data:`gravfm.flow.planning.HARDWARE_OPTIONS` for both runs.

    Returns
    -------
    (bool, str)
        True and ``""`` when both runs verify; otherwise one line saying which run failed, how,
        and what that means.

    Raises
    ------
    gravfm.errors.GravfmError
        Bad input, or a kernel that breaks the kernel contract (before any simulation).
    """
    prepared = prepare(algorithm, probe_graph() if graph is None else graph, params=params)
    check_backend(prepared.algorithm, backend)  # Verilog kernels need Verilator
    name = prepared.algorithm.name
    (one_label, one), (two_label, two) = reordering_partitions(prepared.graph.num_vertices)
    one_ok, one_detail = _run(prepared, one, backend, hardware)
    two_ok, two_detail = _run(prepared, two, backend, hardware)
    if one_ok and two_ok:
        return True, ""
    if not one_ok:
        also = "fails on 2 PEs too" if not two_ok else "verifies on 2 PEs"
        return False, (f"algorithm {name!r} does not verify on {one_label} ({one_detail}); it {also}: "
                       f"fix that first, it is not a matter of the partition")
    ids = ", ".join(prepared.algorithm.vertexid_fields)
    fields = f" and the state fields in vertexid_fields ({ids})" if ids else ""
    return False, (f"algorithm {name!r} depends on the partition: it verifies on {one_label}, but not on "
                   f"{two_label} ({two_detail}). Kernels see hardware ids (i.nodeid, i.sender, i.neighbor"
                   f"{fields}), numbered by the partition: a kernel that compares them or computes with them "
                   f"answers differently on every partition. Compare the graph's ids instead (a state field "
                   f"not in vertexid_fields, set by initial_state, as WCC's label), and use hardware ids only "
                   f"to name vertices; or, if no kernel does, gather depends on the order its messages arrive in")
