"""Stage 5, simulate: run a loaded top on a back-end and read it back.

A back-end is an object with ``simulate(top, load, *, log, on_progress, total_messages, on_stage)``
returning a :class:`gravfm.sim.readback.Readback`: :class:`gravfm.sim.verilator_backend.VerilatorBackend`
(compiled, cached builds) or :class:`gravfm.sim.amaranth_backend.AmaranthBackend` (Amaranth's
simulator). :data:`BACKENDS` names them for the command line.
"""

import importlib

from ..errors import ConfigError
from ..sim.readback import with_link_faults

__all__ = ["simulate", "make_backend", "check_backend", "BACKENDS", "VERILOG_BACKENDS"]

#: Back-end name -> "module:class".
BACKENDS = {"verilator": "gravfm.sim.verilator_backend:VerilatorBackend",
            "amaranth": "gravfm.sim.amaranth_backend:AmaranthBackend",
            "litex": "gravfm.board.backend:LitexBackend", "board": "gravfm.board.backend:BoardBackend"}
#: Back-ends that can run kernels written in Verilog (Amaranth's simulator cannot run an Instance).
VERILOG_BACKENDS = ("verilator", "litex", "board")


def check_backend(algorithm, backend):
    """Refuse, before any work, a back-end that cannot simulate ``algorithm``'s kernels.

    Raises
    ------
    gravfm.errors.ConfigError
        Kernels written in Verilog on a back-end outside :data:`VERILOG_BACKENDS`.
    """
    name = backend if isinstance(backend, str) else getattr(backend, "name", type(backend).__name__)
    if name in VERILOG_BACKENDS:
        return
    # deferred: Amaranth (heavy)
    from ..hw.verilog import VerilogKernelFactory

    verilog = [f"{kind} ({factory.verilog_module.name})" for kind in ("gather", "apply", "scatter")
               if isinstance(factory := getattr(algorithm, kind), VerilogKernelFactory)]
    if verilog:
        raise ConfigError(f"backend {name!r} cannot simulate kernels written in Verilog: {algorithm.name!r} "
                          f"has the Verilog {', '.join(verilog)}; use --backend {VERILOG_BACKENDS[0]}")


#: Options a back-end may not take, and what to say when they were asked of it.
_REFUSED = {"threads": "--threads: the Amaranth simulator runs a system as one design in one thread "
                       "(threads are the compiled simulator's)",
            "trace": "--trace: waveforms are dumped by the compiled simulator only (--backend verilator)"}


def make_backend(name, **options):
    """The back-end called ``name``, made with ``options``. Those it does not take are dropped
    when they are defaults or do not change a result (the Amaranth simulator has no build cache
    and no watchdog), refused when asked for explicitly and they would change how it runs."""
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
    module, cls = BACKENDS[name].split(":")
    backend = getattr(importlib.import_module(module), cls)
    taken = backend.__dataclass_fields__
    for key, why in _REFUSED.items():
        if options.get(key) is not None and key not in taken:
            raise ConfigError(why)
    return backend(**{key: value for key, value in options.items() if key in taken})


def simulate(top, load, backend, *, log=None, on_progress=None, total_messages=0, on_stage=None):
    """Run ``load`` on ``top`` with ``backend``; return its :class:`~gravfm.sim.readback.Readback`
    (status ``link_error`` when the links say so: :func:`~gravfm.sim.readback.with_link_faults`).

    Parameters
    ----------
    log : callable, optional
        One-line messages (build time or cache use, ...).
    on_progress : callable, optional
        ``on_progress(cycle, superstep, messages, total_messages)`` while simulating (compiled
        back-end).
    total_messages : int
        Messages the run should send (the reference's), for the progress display.
    on_stage : callable, optional
        ``on_stage(name, detail)`` as the back-end begins to build, load and simulate.
    """
    readback = backend.simulate(top, load, log=log, on_progress=on_progress, total_messages=total_messages,
                                on_stage=on_stage)
    if top.config.fpgas == 1:
        return readback
    return with_link_faults(readback, fpgas=top.config.fpgas, check=top.link_check)
