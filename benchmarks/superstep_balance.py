"""How evenly a partition spreads each superstep's edges over the PEs (an analysis, no hardware).

A bulk-synchronous run waits in every superstep for its busiest PE. A GraVF-M PE scatters the
edges from each active sender to its own vertices, so superstep ``r`` costs the busiest PE
``max_pe messages[r][pe]`` cycles at one edge per cycle, against ``sum_pe messages[r][pe] / PEs``
for a perfect spread. ``balance`` = sum of the means / sum of the maxima is then the fraction
of the model's T_sys a design limited only by this imbalance could reach.

Every update also passes its FPGA's update intake, ``lanes`` per cycle (the PEs' edge-index
reads): an FPGA takes the updates of its own senders and those of other FPGAs' senders with a
neighbour on it (the neighbour filter drops the rest). A superstep then costs at least
``max(max_pe messages[r][pe], max_fpga updates[r][fpga] / lanes)``; ``cpe_floor`` is the sum of
these over the sum of the means, the lowest system CPE such a design can reach (both bounds
overlapping perfectly; in the hardware they partly add). With several FPGAs every superstep also
waits for barriers that crossed a link (``--barrier-cycles``, default the platform's link latency):
an FPGA's barrier leaves after its apply pass, which waits for the other FPGAs' barriers of the
round before, so the crossings follow one another, one per superstep. ``cpe_floor_with_barriers``
counts each superstep of the run (the reference's count, the last silent one included) as the
longer of its floor and one crossing. (Counting both in full, work then crossing, is no bound:
4 x 9 BFS on a uniform graph measured CPE 1.040 against that sum's 1.046, its supersteps'
crossings overlapping the other FPGAs' work.)

The hybrid architecture (``--scatter-units``) scatters each update once per FPGA, in the scatter
unit that owns its sender (:func:`gravfm.partition.hybrid_store.scatter_owner`), which streams the
sender's edges into that FPGA at one edge per cycle: a superstep then also waits for its busiest
scatter unit, and a hub's edges are one unit's. ``scatter_floor`` is the sum over supersteps of
the longer of the busiest PE's messages and the busiest scatter unit's edges, over the sum of the
means. ``--hub-degree D`` asks what a hub path would give: the edges of every sender with more
than ``D`` out-edges dealt round-robin over its FPGA's scatter units (as if its update reached all
of them), the rest as now (``scatter_floor_with_hubs``, and the number of such senders).

The active senders of each superstep come from the algorithm itself: BFS levels (the vertices at
level r send in superstep r), WCC label propagation (the vertices whose label changed send),
PageRank (every vertex, every superstep);
their message counts are checked against the software reference.

    python benchmarks/superstep_balance.py rmat:scale=16,ef=32,seed=1 --algorithm bfs --fpgas 4 \\
        --pes 9 --methods greedy sorted_greedy

The JSON names every argument (graph, algorithm, fpgas, pes_per_fpga, methods) and carries the
provenance (git revision, date, machine).
"""

import argparse
import sys

import numpy as np

from gravfm.algorithms import get_algorithm
from gravfm.graph import load_graph
from gravfm.model import load_platform
from gravfm.partition import partition
from gravfm.provenance import write_results


def active_senders(name, graph, reference):
    """Boolean mask of the sending vertices, one per superstep."""
    if name == "bfs":
        level = np.asarray(reference.level)
        return [level == r for r in range(int(level.max()) + 1)]
    if name == "wcc":
        sources, targets = graph.sources(), graph.targets
        label = np.arange(graph.num_vertices)
        active = np.ones(graph.num_vertices, dtype=bool)
        steps = []
        while active.any():
            steps.append(active)
            sending = active[sources]
            new = label.copy()
            np.minimum.at(new, targets[sending], label[sources[sending]])
            active, label = new < label, new
        return steps
    if name == "pagerank":  # every vertex sends in every superstep but the last, silent one
        sending = sum(1 for count in reference.messages_per_superstep if count)
        return [np.ones(graph.num_vertices, dtype=bool)] * sending
    raise SystemExit(f"superstep_balance: algorithm {name!r} is not supported (bfs, wcc, pagerank)")


def messages_per_pe(graph, steps, pe_of_vertex, num_pes):
    """One array per superstep: the messages each PE scatters (its vertices' in-edges from the
    superstep's active senders)."""
    sources, targets = graph.sources(), graph.targets
    return [np.bincount(pe_of_vertex[targets[active[sources]]], minlength=num_pes) for active in steps]


def mean_per_superstep(per_pe):
    """Each superstep's messages per PE on average: its cycles at one edge per PE per cycle."""
    return [counts.sum() / counts.size for counts in per_pe]


def balance(per_pe):
    """(balance, per-superstep busiest-PE / mean ratios) of :func:`messages_per_pe`'s arrays."""
    means = mean_per_superstep(per_pe)
    maxima = [int(counts.max()) for counts in per_pe]
    ratios = [m / mean if mean else 1.0 for m, mean in zip(maxima, means)]
    return float(sum(means) / sum(maxima)), ratios


def intake_floor(graph, steps, per_pe, pe_of_vertex, pes_per_fpga, lanes):
    """(cpe_floor, per-superstep busiest-FPGA intake cycles): the floor in the module doc, with
    ``per_pe`` from :func:`messages_per_pe` for the same ``steps``."""
    sources, targets = graph.sources(), graph.targets
    fpga_of_vertex = pe_of_vertex // pes_per_fpga
    fpgas = per_pe[0].size // pes_per_fpga if per_pe else 1
    # reaches[v, f]: sender v's updates enter FPGA f (its own, or one holding a neighbour).
    reaches = np.zeros((graph.num_vertices, fpgas), dtype=bool)
    reaches[sources, fpga_of_vertex[targets]] = True
    reaches[np.arange(graph.num_vertices), fpga_of_vertex] = True
    intake = [float(reaches[active].sum(axis=0).max()) / lanes for active in steps]
    return sum(superstep_floors(per_pe, intake)) / sum(mean_per_superstep(per_pe)), intake


def edges_per_scatter_unit(graph, steps, pe_of_vertex, pes_per_fpga, hub_degree=None):
    """One array per superstep: the edges each scatter unit of the hybrid streams (module doc);
    a sender with more than ``hub_degree`` out-edges has its edges into each FPGA dealt
    round-robin over that FPGA's units."""
    sources, targets = graph.sources(), graph.targets
    units = pe_of_vertex.max() // pes_per_fpga * pes_per_fpga + pes_per_fpga
    owner = pe_of_vertex[sources] % pes_per_fpga
    if hub_degree is not None:
        hub = graph.out_degree()[sources] > hub_degree
        # The edge's rank among its sender's out-edges (CSR order) deals it to a unit.
        rank = np.arange(sources.size) - graph.offsets[sources]
        owner = np.where(hub, rank % pes_per_fpga, owner)
    unit = pe_of_vertex[targets] // pes_per_fpga * pes_per_fpga + owner
    return [np.bincount(unit[active[sources]], minlength=units) for active in steps]


def scatter_floor(per_pe, per_unit):
    """Sum over supersteps of the busiest PE's messages or busiest scatter unit's edges, over
    the sum of the means (module doc)."""
    return sum(max(int(pe.max()), int(unit.max())) for pe, unit in zip(per_pe, per_unit)) / sum(
        mean_per_superstep(per_pe))


def superstep_floors(per_pe, intake):
    """Each superstep's floor in cycles: its busiest PE's edges or its busiest FPGA's intake."""
    return [max(float(counts.max()), cycles) for counts, cycles in zip(per_pe, intake)]


def with_barriers(per_pe, intake, supersteps, barrier_cycles):
    """System CPE when each of the run's ``supersteps`` (those with messages, then silent ones)
    takes the longer of its floor and ``barrier_cycles`` (module doc)."""
    floors = superstep_floors(per_pe, intake) + [0.0] * (supersteps - len(per_pe))
    return sum(max(floor, barrier_cycles) for floor in floors) / sum(mean_per_superstep(per_pe))


def scatter_unit_figures(graph, steps, pe_of_vertex, pes_per_fpga, per_pe, hub_degrees):
    """The hybrid's scatter-unit figures of one partition (module doc)."""
    per_unit = edges_per_scatter_unit(graph, steps, pe_of_vertex, pes_per_fpga)
    figures = {"scatter_floor": scatter_floor(per_pe, per_unit),
               "busiest_scatter_unit_per_superstep": [int(unit.max()) for unit in per_unit], "hubs": {}}
    degree = graph.out_degree()
    for hub_degree in hub_degrees:
        dealt = edges_per_scatter_unit(graph, steps, pe_of_vertex, pes_per_fpga, hub_degree)
        figures["hubs"][str(hub_degree)] = {"senders": int((degree > hub_degree).sum()),
                                            "scatter_floor_with_hubs": scatter_floor(per_pe, dealt)}
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph")
    parser.add_argument("--algorithm", default="bfs", choices=("bfs", "wcc", "pagerank"))
    parser.add_argument("--fpgas", type=int, default=4)
    parser.add_argument("--pes", type=int, default=9)
    parser.add_argument("--methods", nargs="+", default=["greedy", "sorted_greedy"])
    parser.add_argument("--lanes", type=int, default=2,
                        help="updates an FPGA's PEs take per cycle (the update lanes; default 2)")
    parser.add_argument("--barrier-cycles", type=int, default=None,
                        help="cycles a superstep's barrier spends beyond the work (default: the link "
                             "latency of --platform with several FPGAs, else 0)")
    parser.add_argument("--platform", default="ac510x4", help="platform for the link latency (default ac510x4)")
    parser.add_argument("--root", type=int, default=None,
                        help="BFS root (the input's id; default the vertex of highest out-degree)")
    parser.add_argument("--scatter-units", action="store_true",
                        help="also the hybrid architecture's scatter units (module doc)")
    parser.add_argument("--hub-degree", type=int, nargs="*", default=[],
                        help="with --scatter-units: out-degrees above which a sender's edges are dealt "
                             "over its FPGA's scatter units (what-if of a hub path)")
    args = parser.parse_args(argv)
    if args.hub_degree and not args.scatter_units:
        parser.error("--hub-degree needs --scatter-units")
    barrier = args.barrier_cycles
    if barrier is None:
        barrier = load_platform(args.platform).network.link.latency_cycles if args.fpgas > 1 else 0

    algorithm = get_algorithm(args.algorithm)
    graph = load_graph(args.graph)
    # BFS from the vertex of highest out-degree, as in bench_scaling.py.
    given = {"root": graph.hub() if args.root is None else args.root} if "root" in algorithm.default_params else {}
    params = algorithm.params(given)
    graph = algorithm.prepare(graph, params)
    reference = algorithm.reference(graph, params)
    steps = active_senders(args.algorithm, graph, reference)
    counted = [int(active[graph.sources()].sum()) for active in steps]
    expected = [int(c) for c in reference.messages_per_superstep]
    # The reference ends with the superstep that finds nothing left to send.
    if counted + [0] * (len(expected) - len(counted)) != expected:
        raise SystemExit("superstep_balance: the active senders do not reproduce the reference's message counts")
    result = {"analysis": "superstep balance (software, no hardware)", "graph": args.graph,
              "algorithm": args.algorithm, "params": params, "fpgas": args.fpgas, "pes_per_fpga": args.pes,
              "lanes": args.lanes, "barrier_cycles": barrier, "supersteps": reference.supersteps,
              "messages_per_superstep": counted, "methods": {}}
    for method in args.methods:
        parts = partition(graph, args.fpgas, args.pes, method=method)
        pe_of_vertex = np.asarray(parts.pe_of_vertex)
        per_pe = messages_per_pe(graph, steps, pe_of_vertex, parts.num_pes)
        value, ratios = balance(per_pe)
        floor, intake = intake_floor(graph, steps, per_pe, pe_of_vertex, args.pes, args.lanes)
        result["methods"][method] = {"balance": value, "busiest_over_mean_per_superstep": ratios,
                                     "cpe_floor": floor, "intake_cycles_per_superstep": intake,
                                     "cpe_floor_with_barriers": with_barriers(per_pe, intake, reference.supersteps, barrier)}
        if args.scatter_units:
            result["methods"][method].update(scatter_unit_figures(graph, steps, pe_of_vertex, args.pes, per_pe,
                                                                  args.hub_degree))
    write_results(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
