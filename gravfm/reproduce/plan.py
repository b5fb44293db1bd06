"""``gravfm reproduce --dry-run``: the points and the designs they build, without running them.

A Verilator build is keyed by the generated design (:func:`gravfm.sim.verilator_build.simulator_sources`
hashes the exported Verilog), never by the graph: points of one hardware configuration share one
build. Hashing the Verilog needs elaboration (seconds per design), so the plan groups points by
their :class:`~gravfm.hw.SystemConfig` instead (the pipeline's prepare and plan stages only) and
labels the count an estimate: one configuration makes one Verilog text, so the estimate is exact
unless two configurations happen to make the same text.
"""

from collections import Counter
from dataclasses import replace

from ..algorithms import get_algorithm
from ..flow import plan, prepare
from ..flow.memory import edge_memory_of, memory_hardware, platform_for_run
from .points import point_root

__all__ = ["design_of", "needs", "plan_points", "format_plan"]


def _config(point):
    """The :class:`~gravfm.hw.SystemConfig` the pipeline plans for ``point`` (prepare and plan only)."""
    algorithm = get_algorithm(point.algorithm)
    root = point_root(point, algorithm)
    prepared = prepare(algorithm, point.graph, params={} if root is None else {"root": root})
    platform = point.platform_object()
    edge_memory = edge_memory_of(point.edge_memory, platform)
    platform = platform_for_run(platform, edge_memory)
    hardware = plan(prepared, fpgas=point.fpgas, pes=point.pes, partition=point.partition, arch=point.arch,
                    local_bits=point.local_bits, edges_per_pe=point.edges_per_pe,
                    edge_memory=memory_hardware(platform) if edge_memory == "offchip" else None,
                    **point.hardware())
    return hardware.config


def design_of(point):
    """The hardware configuration ``point`` builds, as a hashable tuple (what keys its build)."""
    config = _config(point)
    return (config.algorithm.name, config.arch, config.fpgas, config.pes_per_fpga, config.pe, config.network)


def needs(point):
    """``{local_bits, edges_per_pe, max_rounds}``: the PE capacities ``point`` needs (rounded up as
    the plan does)."""
    pe = _config(replace(point, local_bits=None, edges_per_pe=None, max_rounds=None)).pe
    return {"local_bits": pe.local_bits, "edges_per_pe": pe.edges_per_pe, "max_rounds": pe.max_rounds}


def plan_points(by_experiment):
    """``{experiment: [(point, design), ...]}`` and the number of distinct designs overall."""
    designs = {}
    planned = {}
    for name, points in by_experiment.items():
        planned[name] = []
        for point in points:
            if point not in designs:
                designs[point] = design_of(point)
            planned[name].append((point, designs[point]))
    return planned, len(set(designs.values()))


def format_plan(planned, distinct):
    """The dry run's text: per experiment its points and the designs they need, then the totals."""
    lines, seen, points = [], set(), set()
    ids = {}
    for name, rows in planned.items():
        designs = Counter(design for _, design in rows)
        new = [d for d in designs if d not in seen]
        lines.append(f"{name}: {len(rows)} points, {len(designs)} designs ({len(new)} not needed by an "
                     f"experiment above)")
        for point, design in rows:
            tag = ids.setdefault(design, f"D{len(ids) + 1}")
            shared = "" if point not in points else " (point shared with an experiment above)"
            lines.append(f"  {tag:>4}  {point.label()}{shared}")
            points.add(point)
        seen.update(designs)
    lines.append(f"total: {len(points)} distinct points, {distinct} distinct designs (builds; an estimate by "
                 "hardware configuration, the build key itself hashes the elaborated Verilog)")
    return "\n".join(lines)
