"""``gravfm reproduce``: the paper's evaluation as named experiments run on dask.distributed.

:mod:`~gravfm.reproduce.experiments` defines each figure and table as points
(:class:`~gravfm.reproduce.points.Point`), :mod:`~gravfm.reproduce.runner` runs them as tasks
with a per-point result cache, :mod:`~gravfm.reproduce.claims` checks the paper's claims,
:mod:`~gravfm.reproduce.plots` draws the figures and :mod:`~gravfm.reproduce.report` writes
``results.json`` and ``REPORT.md``. :func:`reproduce` chains them.
"""

from pathlib import Path

from ..errors import ConfigError
from .experiments import EXPERIMENTS, SIZES, Experiment, points_of, select
from .plan import probe_cache
from .points import Point, run_point
from .report import write_outputs
from .runner import PointStore, run_points

__all__ = ["EXPERIMENTS", "SIZES", "Experiment", "Point", "PointStore", "check_out", "chosen_points", "points_of",
           "reproduce", "sweep_command",
           "run_point", "run_points", "select"]


def check_out(out):
    """``--out``: a folder (made when missing); a file there is a ConfigError naming it."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file, not a folder")
    try:
        (out / "points").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"--out {out}: cannot create the folder ({error.strerror or error})") from None
    return out


def chosen_points(names, mode, points_limit=None, cache_dir=None):
    """The experiments ``names`` and ``{experiment: its points}`` (the first ``points_limit`` of each);
    the probes that size shared builds are kept where :func:`~gravfm.reproduce.plan.probe_cache` says."""
    experiments = select(names)
    if points_limit is not None and points_limit < 1:
        raise ConfigError(f"--points-limit must be a positive integer, not {points_limit!r}")
    cache = probe_cache(mode, cache_dir)
    return experiments, {e.name: points_of(e, mode, cache_dir=cache)[:points_limit] for e in experiments}


def reproduce(names, out, *, mode="quick", cache_dir=None, scheduler=None, workers=None, points_limit=None,
              display=True, command=None, processes=True, console=None, function=None,
              report_only=False):
    """Run the experiments ``names`` (``all`` for every one) and write their outputs in ``out``.

    Returns ``(claims, results, stats)``. ``points_limit`` keeps the first N points of each
    experiment (a smoke test of the framework); the report says which points ran. ``report_only``
    writes the outputs from the points already stored in ``out`` and runs nothing; the outputs are
    those of the run that stored them. ``command`` (default :func:`sweep_command`) heads them.
    """
    experiments, by_experiment = chosen_points(names, mode, points_limit, cache_dir)
    out = check_out(out)
    unique = list(dict.fromkeys(p for points in by_experiment.values() for p in points))
    results, stats = run_points(unique, PointStore(out / "points"), cache_dir=cache_dir, scheduler=scheduler,
                                workers=workers, display=display, processes=processes, console=console,
                                function=function, compute=not report_only)
    claims = write_outputs(out, experiments, by_experiment, results, sizes=SIZES[mode],
                           command=command or sweep_command(names, mode, points_limit))
    return claims, results, stats


def sweep_command(names, mode, points_limit=None):
    """The command that measures these points (whatever the invocation: a run, a resumed one or
    ``--report-only`` write the same)."""
    limit = f" --points-limit {points_limit}" if points_limit is not None else ""
    return f"gravfm reproduce {' '.join(list(names) or ['all'])} --{mode}{limit}"
