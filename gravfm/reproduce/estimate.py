"""``gravfm reproduce --dry-run``'s estimate: builds, simulated edges and wall time of a sweep.

The rates come from ``benchmarks/bench_reproduce_rates.py`` run on this machine (its JSON): a
Verilator build and a Verilog export per design, interpolated by PEs per FPGA; per point the time
outside the simulator, linear in the graph's edges, and the simulator's messages (traversed
edges) per second and cycles per second, interpolated log-log by the PEs of the system. A point's
simulation is its reference's messages at that rate plus its supersteps' synchronisation latency
(the model's, :func:`gravfm.model.predict_supersteps`) at the cycle rate. An estimate, labelled so.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, GravfmError
from ..model import algorithm_params, predict_supersteps
from .plan import _platform, probe

__all__ = ["Rates", "Estimate", "estimate", "format_estimate", "DEFAULT_RATES"]

DEFAULT_RATES = Path(__file__).resolve().parent.parent.parent / "benchmarks" / "results" / "reproduce_rates.json"


def _interpolate(points, x, *, log=False):
    """Piecewise-linear ``y(x)`` through ``[(x, y), ...]`` (log-log with ``log``), flat outside."""
    points = sorted(points)
    f = (lambda v: math.log(max(v, 1e-12))) if log else (lambda v: v)
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= x <= x1:
            t = (f(x) - f(x0)) / (f(x1) - f(x0)) if x1 != x0 else 0.0
            value = f(y0) + t * (f(y1) - f(y0))
            return math.exp(value) if log else value
    return points[-1][1]


@dataclass(frozen=True)
class Rates:
    """Measured rates (:func:`Rates.load`); ``source`` names the file and when it was measured."""
    results: tuple
    source: str

    def idle(self):
        """The rates of an idle machine: each measured time times its row's ``cpu_fraction`` (CPU
        over wall seconds; one worker on an idle machine takes its CPU seconds), or None when
        the file has no ``cpu_fraction``."""
        if not all("cpu_fraction" in row for row in self.results):
            return None
        rows = []
        for row in self.results:
            scaled = {t: row[t] * min(1.0, row["cpu_fraction"]) for t in ("overhead_s", "run_s")}
            # A build's and an export's own CPU seconds where measured (one process each).
            scaled.update({t: row.get(t.replace("_s", "_cpu_s")) or row[t] * min(1.0, row["cpu_fraction"])
                           for t in ("build_s", "export_s")})
            rows.append({**row, **scaled})
        return Rates(tuple(rows), f"{self.source}, CPU seconds")

    @classmethod
    def load(cls, path=DEFAULT_RATES):
        path = Path(path)
        try:
            document = json.loads(path.read_text())
            results = tuple(document["results"])
            for row in results:
                for name in ("pes_per_fpga", "total_pes", "edges", "messages", "cycles", "build_s", "export_s",
                             "overhead_s", "run_s"):
                    float(row[name])
        except OSError as error:
            raise ConfigError(f"--rates {path}: cannot read ({error.strerror or error}); run "
                              "benchmarks/bench_reproduce_rates.py") from None
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"--rates {path}: not a reproduce_rates result ({type(error).__name__}: {error})") \
                from None
        if not results:
            raise ConfigError(f"--rates {path}: no results")
        date = document.get("provenance", {}).get("date", "an unknown date")
        return cls(results, f"{path.name} (measured {date})")

    def build_s(self, pes_per_fpga):
        return _interpolate([(r["pes_per_fpga"], r["build_s"]) for r in self.results], pes_per_fpga)

    def export_s(self, pes_per_fpga):
        return _interpolate([(r["pes_per_fpga"], r["export_s"]) for r in self.results], pes_per_fpga)

    def overhead_s(self, edges):
        """Least squares ``a + b edges`` (``b`` alone from one result), never below 0."""
        xs = [r["edges"] for r in self.results]
        ys = [r["overhead_s"] for r in self.results]
        if len(set(xs)) < 2:
            return max(0.0, ys[0] * edges / max(xs[0], 1))
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        return max(0.0, my + b * (edges - mx))

    def messages_per_s(self, total_pes):
        return _interpolate([(r["total_pes"], r["messages"] / r["run_s"]) for r in self.results], total_pes, log=True)

    def cycles_per_s(self, total_pes):
        return _interpolate([(r["total_pes"], r["cycles"] / r["run_s"]) for r in self.results], total_pes, log=True)


@dataclass(frozen=True)
class Estimate:
    builds: int
    points: int
    messages: int
    build_s: float
    export_s: float
    overhead_s: float
    simulate_s: float
    workers: int
    source: str

    @property
    def wall_s(self):
        return (self.build_s + self.export_s + self.overhead_s + self.simulate_s) / self.workers


def _latency_cycles(point, probe):
    """The model's synchronisation latency of one superstep of ``point`` (0 when it has none)."""
    messages = probe["messages_per_superstep"]
    if not sum(messages):
        return 0
    try:
        prediction = predict_supersteps(_platform(point)[0], algorithm_params(point.algorithm), probe["vertices"],
                                        probe["edges"], messages, fpgas=point.fpgas, pes=point.pes, arch=point.arch)
    except GravfmError:
        return 0
    return prediction.latency_cycles


def estimate(planned, rates, *, cache_dir=None, workers=1, export_per_point=False, done=()):
    """The :class:`Estimate` of ``planned`` (:func:`~gravfm.reproduce.plan.plan_points`'s first value).

    ``export_per_point``: every point elaborates and exports its design's Verilog (before the
    build key was remembered by configuration), instead of once per design. ``done``: points
    already stored, left out with the designs they built (what a resumed run has left).
    """
    designs, points, built = {}, {}, set()
    for rows in planned.values():
        for point, design in rows:
            if point in done:
                built.add(design)
                continue
            designs.setdefault(design, point.pes)
            points[point] = design
    designs = {design: pes for design, pes in designs.items() if design not in built}
    build_s = sum(rates.build_s(pes) for pes in designs.values())
    export_s = sum(rates.export_s(point.pes) for point in points) if export_per_point else \
        sum(rates.export_s(pes) for pes in designs.values())
    overhead_s = simulate_s = 0.0
    messages = 0
    for point in points:
        found = probe(point, cache_dir)
        total = point.fpgas * point.pes
        sent = sum(found["messages_per_superstep"])
        messages += sent
        overhead_s += rates.overhead_s(found["edges"])
        simulate_s += sent / rates.messages_per_s(total) + len(found["messages_per_superstep"]) * \
            _latency_cycles(point, found) / rates.cycles_per_s(total)
    return Estimate(builds=len(designs), points=len(points), messages=messages, build_s=build_s, export_s=export_s,
                    overhead_s=overhead_s, simulate_s=simulate_s, workers=workers, source=rates.source)


def format_estimate(found, idle=None):
    """The estimate's parts and its total, labelled as an estimate; ``idle``: the same for an idle
    machine (:meth:`Rates.idle`)."""
    text = (f"estimate (rates of {found.source}): {found.builds} builds ~{found.build_s / 60:.0f} min, "
            f"{found.points} points simulating {found.messages / 1e6:,.0f} M messages (traversed edges) "
            f"~{found.simulate_s / 60:.0f} min, preparing them ~{found.overhead_s / 60:.0f} min, exporting "
            f"Verilog ~{found.export_s / 60:.0f} min; wall ~{found.wall_s / 3600:.1f} h with {found.workers} "
            f"worker{'s' if found.workers != 1 else ''} at the machine's load when measured")
    if idle is not None:
        text += (f"\non an idle machine (the CPU seconds of the same work): builds ~{idle.build_s / 60:.0f} min, "
                 f"simulating ~{idle.simulate_s / 60:.0f} min, preparing ~{idle.overhead_s / 60:.0f} min, "
                 f"exporting ~{idle.export_s / 60:.0f} min; wall ~{idle.wall_s / 3600:.1f} h")
    return text
