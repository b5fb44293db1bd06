"""``gravfm reproduce --dry-run``: the points and the designs they build, without running them.

A Verilator build is keyed by the generated design (:func:`gravfm.sim.verilator_build.simulator_sources`
hashes the exported Verilog), never by the graph: points of one hardware configuration share one
build. Hashing the Verilog needs elaboration (seconds per design), so the plan groups points by
their :class:`~gravfm.hw.SystemConfig` instead and labels the count an estimate: one configuration
makes one Verilog text, so the estimate is exact unless two configurations happen to make the same
text.

What a point needs (its PE capacities) and what it will do (the reference's messages and
supersteps) come from the pipeline's prepare and plan stages: a :func:`probe`, minutes for the
full sizes' graphs, so probes are kept as JSON in ``<cache>/plans/`` keyed by the point and the
source of the code that computes them. A point whose capacities are all given needs no probe for
its design: :func:`config_of` sizes it as the plan would.
"""

import functools
import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ..algorithms import get_algorithm
from ..flow import plan, prepare
from ..flow.memory import edge_memory_of, memory_hardware, platform_for_run
from ..flow.planning import system_config
from ..sim.build_cache import cache_root
from ..sim.design_memo import source_hash
from .points import point_root

__all__ = ["config_of", "design_of", "needs", "probe", "probe_cache", "plan_points", "format_plan", "PROBE_FOLDERS"]

#: Package folders whose code decides a probe (graphs, partitions, references, the plan's rules).
PROBE_FOLDERS = ("graph", "partition", "algorithms", "flow", "hw", "model")
_CAPACITIES = ("local_bits", "edges_per_pe", "max_rounds")


def _platform(point):

    platform = point.platform_object()
    edge_memory = edge_memory_of(point.edge_memory, platform)
    platform = platform_for_run(platform, edge_memory)
    return platform, memory_hardware(platform) if edge_memory == "offchip" else None


def config_of(point, capacities):
    """The :class:`~gravfm.hw.SystemConfig` the pipeline plans for ``point`` with ``capacities``
    (``{local_bits, edges_per_pe, max_rounds}``, each at least the point's needs)."""
    _, edge_memory = _platform(point)
    return system_config(get_algorithm(point.algorithm), fpgas=point.fpgas, pes=point.pes,
                         local_bits=capacities["local_bits"], edges_per_pe=capacities["edges_per_pe"],
                         arch=point.arch, edge_memory=edge_memory, max_rounds=capacities["max_rounds"])


def _measure_probe(point):
    """Prepare and plan ``point`` without given capacities: its needs and the reference's work."""
    algorithm = get_algorithm(point.algorithm)
    root = point_root(point, algorithm)
    prepared = prepare(algorithm, point.graph, params={} if root is None else {"root": root})
    _, edge_memory = _platform(point)
    pe = plan(prepared, fpgas=point.fpgas, pes=point.pes, partition=point.partition, arch=point.arch,
              edge_memory=edge_memory).config.pe
    return {"local_bits": pe.local_bits, "edges_per_pe": pe.edges_per_pe, "max_rounds": pe.max_rounds,
            "vertices": prepared.graph.num_vertices, "edges": prepared.graph.num_edges,
            "messages_per_superstep": [int(m) for m in prepared.reference.messages_per_superstep]}


def probe_cache(mode, cache_dir=None):
    """Where a sweep keeps its probes: the build cache ``cache_dir``, and for ``full`` the default
    one (its probes take minutes; the quick ones seconds, kept in memory: None)."""
    return cache_root(cache_dir).resolve() if cache_dir is not None or mode == "full" else None


def probe(point, cache_dir=None):
    """``{local_bits, edges_per_pe, max_rounds, vertices, edges, messages_per_superstep}`` of
    ``point`` planned without given capacities; kept in ``<cache_dir>/plans/`` when given."""
    bare = replace(point, **dict.fromkeys(_CAPACITIES))
    if cache_dir is None:
        return _probe_in_memory(bare)
    path = Path(cache_dir) / "plans" / f"{bare.key()}-{source_hash(PROBE_FOLDERS)[:16]}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    found = _probe_in_memory(bare)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(found) + "\n")
        os.replace(partial, path)
    except OSError:  # a cache that cannot be written only costs time
        pass
    return found


@functools.cache
def _probe_in_memory(bare):
    return _measure_probe(bare)


def needs(point, cache_dir=None):
    """``{local_bits, edges_per_pe, max_rounds}``: the PE capacities ``point`` needs (rounded up as
    the plan does)."""
    found = probe(point, cache_dir)
    return {k: found[k] for k in _CAPACITIES}


def design_of(point, cache_dir=None):
    """The hardware configuration ``point`` builds, as a hashable tuple (what keys its build)."""
    given = {k: getattr(point, k) for k in _CAPACITIES}
    capacities = given if None not in given.values() else {**needs(point, cache_dir),
                                                           **{k: v for k, v in given.items() if v is not None}}
    config = config_of(point, capacities)
    return (config.algorithm.name, config.arch, config.fpgas, config.pes_per_fpga, config.pe, config.network)


def plan_points(by_experiment, cache_dir=None):
    """``{experiment: [(point, design), ...]}`` and the number of distinct designs overall."""
    designs = {}
    planned = {}
    for name, points in by_experiment.items():
        planned[name] = []
        for point in points:
            if point not in designs:
                designs[point] = design_of(point, cache_dir)
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
