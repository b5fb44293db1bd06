"""Stage 3, elaborate: the system top of a plan (one FPGA, or several joined by links), after
each kernel has been built, elaborated and benched on its own (:func:`check_kernels`)."""

import gc
import time
import warnings

from ..algorithms.loading import _is_library, user_code_error
from ..errors import GravfmError, UserCodeError
from ..hw.unused import silence_unused

__all__ = ["elaborate", "check_kernels", "gather_latency"]

KERNEL_KINDS = ("gather", "apply", "scatter")
#: Port payloads a kernel's behaviour can depend on: the cache key of its verdict.
_PORT_LAYOUTS = ("gather_in", "gather_out", "apply_in", "apply_state", "apply_update", "scatter_in", "scatter_out")
#: ``{(kind, factory, layouts, sparse_apply and accumulator, or hazard_slots): KernelVerdict}``: each kernel is benched once per
#: process (a test session builds the same algorithms many times).
_VERDICTS = {}


def _factory_key(factory):
    """A kernel factory as the cache knows it: a function by its code and the values it closes
    over (``make_pagerank(supersteps=6)`` made twice is benched once), anything else by itself."""
    code = getattr(factory, "__code__", None)
    if code is None:
        return factory
    try:
        key = (code, tuple(cell.cell_contents for cell in factory.__closure__ or ()), factory.__defaults__,
               tuple(sorted((factory.__kwdefaults__ or {}).items())))
        hash(key)
    except (TypeError, ValueError):  # closes over a dict, or over a cell not yet filled
        return factory
    return key


def _cache_key(config, kind, layouts):
    algorithm = config.algorithm
    # The verdict also depends on the algorithm's sparse_apply and accumulator (apply) and the
    # hazard slots (gather).
    extra = {"apply": (algorithm.sparse_apply, algorithm.accumulator), "gather": config.pe.hazard_slots}.get(kind)
    key = (kind, _factory_key(getattr(algorithm, kind)), tuple(repr(getattr(layouts, name)) for name in _PORT_LAYOUTS),
           extra)
    try:
        hash(key)
    except TypeError:  # a factory object that is not hashable: bench it every time
        return None
    return key


def check_kernels(config, *, contract=True, log=None):
    """Build and elaborate the algorithm's three kernels once, on their own, for ``config``, and
    (with ``contract``) bench each against the kernel contract (:mod:`gravfm.hw.kernel_contract`).

    A kernel that fails (a field name that does not exist, a wrong width, a broken rule) fails
    here, before the system is built, with one line that names the algorithm, the kernel and
    what is wrong. A verdict is kept per kernel factory and layouts, so a kernel is benched once
    per process.

    Parameters
    ----------
    config : gravfm.hw.SystemConfig
    contract : bool
        Bench the kernels (``gravfm run --no-kernel-check`` turns it off; ports and elaboration
        are checked either way).
    log : callable, optional
        Receives the bench's cost and latencies, and warnings (without it, warnings go to
        :func:`warnings.warn`).

    Returns
    -------
    dict
        ``{kind: KernelVerdict}`` (None for a kernel not benched because ``contract`` is off).

    Raises
    ------
    gravfm.errors.UserCodeError
        ``FILE:LINE: gather kernel: AttributeError: ... did you mean ...`` for an error in a
        user's kernel code (Amaranth's message kept); ``FILE:LINE: algorithm 'x': gather kernel
        K breaks the kernel contract (rule): detail`` for a broken rule.
    gravfm.errors.ConfigError
        Ports that do not match the layouts.
    """
    from ..hw.arch import architecture  # deferred: Amaranth (heavy)

    algorithm = config.algorithm
    layouts = architecture(config.arch).layouts(algorithm, config)
    verdicts, benched, started = {}, [], time.perf_counter()
    for kind in KERNEL_KINDS:
        key = _cache_key(config, kind, layouts) if contract else None
        if key in _VERDICTS:
            verdicts[kind] = _VERDICTS[key]
            continue
        verdict, component = _check_one(config, kind, layouts, contract)
        verdicts[kind] = verdict
        if verdict is None:
            continue
        if verdict.violations:
            raise _contract_error(algorithm, kind, component, verdict)
        if key is not None:
            _VERDICTS[key] = verdict
        benched.append(verdict)
        for text in verdict.warnings:
            _warn(log, f"algorithm {algorithm.name!r}: {text}")
    if benched and log is not None:
        parts = [", ".join(f"{v.kind} latency {v.latency}" for v in benched if v.checked)]
        skipped = [v for v in benched if not v.checked]
        if skipped:
            parts.append(f"{', '.join(v.kind for v in skipped)} not benched ({skipped[0].reason})")
        log(f"kernel contract checked in {time.perf_counter() - started:.2f} s: {'; '.join(p for p in parts if p)}")
    return verdicts


def _check_one(config, kind, layouts, contract):
    """Build, check the ports of and elaborate (bench) one kernel; ``(verdict, component)``."""
    # deferred: Amaranth (heavy)
    from amaranth.hdl import Fragment, UnusedElaboratable
    from amaranth.lib import wiring  # deferred: Amaranth (heavy)

    # deferred: Amaranth (heavy)
    from ..hw.kernel_contract import check_kernel_contract
    from ..hw.kernels import check_kernel  # deferred: Amaranth (heavy)

    algorithm = config.algorithm
    try:
        component = getattr(algorithm, kind)(layouts)
        if isinstance(component, wiring.Component):
            silence_unused(component)  # built to be checked, as hw.kernels does
        check_kernel(kind, component, layouts, algorithm.name)
        if not contract:
            Fragment.get(component, None)
            return None, component
        return check_kernel_contract(kind, component, layouts, sparse_apply=algorithm.sparse_apply,
                                     accumulator=algorithm.accumulator, hazard_slots=config.pe.hazard_slots), component
    except GravfmError:
        raise
    except Exception as error:  # the user's kernel code: report its line, keep Amaranth's words
        located = user_code_error(error, f"{kind} kernel of {algorithm.name!r}")
        if located is None:
            raise
    # Raised here, not in the handler, so that the failed kernel's frames go with the
    # original error: what they built is not reported as "created but never used".
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        gc.collect()
    raise located


def _user_location(component, factory):
    """``"FILE:LINE: "`` of the kernel's ``elaborate``, or else of its factory, in the user's code."""
    for function in (getattr(type(component), "elaborate", None), factory):
        code = getattr(function, "__code__", None)
        if code is not None and not _is_library(code.co_filename):
            return f"{code.co_filename}:{code.co_firstlineno}: "
    return ""


def _contract_error(algorithm, kind, component, verdict):
    from ..hw.kernel_contract import RULES  # deferred: Amaranth (heavy)

    rule, detail = verdict.violations[0]
    return UserCodeError(f"{_user_location(component, getattr(algorithm, kind))}algorithm {algorithm.name!r}: "
                         f"{kind} kernel {verdict.kernel} breaks the kernel contract ({RULES[rule]}): {detail}")


def _warn(log, message):
    if log is not None:
        log(f"warning: {message}")
    else:
        warnings.warn(message, stacklevel=4)


def gather_latency(config):
    """``(declared, measured, hazard_slots)`` of ``config``'s gather kernel: its ``latency``
    attribute (None without one), the bench's measure (None when it was not benched in this
    process) and the vertices its hazard unit holds in flight."""
    from amaranth.lib import wiring  # deferred: Amaranth (heavy)

    from ..hw.arch import architecture  # deferred: Amaranth (heavy)
    # deferred: Amaranth (heavy)
    from ..hw.kernel_contract import declared_latency
    # deferred: Amaranth (heavy)
    from ..hw.pe.gather import hazard_slots_for

    algorithm = config.algorithm
    layouts = architecture(config.arch).layouts(algorithm, config)
    kernel = algorithm.gather(layouts)
    if isinstance(kernel, wiring.Component):
        silence_unused(kernel)  # built to read its attributes
    verdict = _VERDICTS.get(_cache_key(config, "gather", layouts))
    return (declared_latency(kernel), None if verdict is None else verdict.latency,
            hazard_slots_for(config.pe.hazard_slots, kernel))


def elaborate(plan, *, platform=None, link=None, use_filter=True, kernel_check=True, log=None,
              link_options=None):
    """The top for ``plan.config`` (:func:`gravfm.hw.multi.build_system`), after
    :func:`check_kernels`.

    Parameters
    ----------
    plan : gravfm.flow.Plan
    platform : gravfm.model.platform.Platform or str, optional
        Several FPGAs: the links follow the platform's (bandwidth, word width, latency); it must
        have enough FPGAs.
    link : gravfm.hw.link.LinkConfig, optional
        Explicit link parameters (override the platform's; without either, ideal links).
    use_filter : bool
        GraVF-M on several FPGAs: the neighbor filter in front of each link.
    kernel_check : bool
        Bench each kernel against the kernel contract first (:func:`check_kernels`).
    log : callable, optional
        One-line messages (the kernel check's cost, warnings).
    link_options : dict, optional
        Link parameters that replace those of ``link`` or the platform's (``RunOptions.link_options``).
    """
    from ..hw.multi import build_system  # deferred: Amaranth (heavy)

    check_kernels(plan.config, contract=kernel_check, log=log)
    return build_system(plan.config, platform=platform, link=link, use_filter=use_filter, link_options=link_options)
