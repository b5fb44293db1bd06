"""Stage 3, elaborate: the system top of a plan (one FPGA, or several joined by links)."""

import gc
import warnings

from ..errors import GravfmError

__all__ = ["elaborate", "check_kernels"]

KERNEL_KINDS = ("gather", "apply", "scatter")


def check_kernels(config):
    """Build and elaborate the algorithm's three kernels once, on their own, for ``config``.

    A kernel that fails (a field name that does not exist, a wrong width) fails here, before the
    system is built, with one line at the user's code that says which kernel.

    Raises
    ------
    gravfm.errors.UserCodeError
        ``FILE:LINE: gather kernel: AttributeError: ... did you mean ...`` for an error in a
        user's kernel code (Amaranth's message kept).
    gravfm.errors.ConfigError
        Ports that do not match the layouts.
    """
    from amaranth.hdl import Fragment, UnusedElaboratable
    from amaranth.lib import wiring

    from ..algorithms.loading import user_code_error
    from ..hw.arch import architecture
    from ..hw.kernels import check_kernel

    algorithm = config.algorithm
    layouts = architecture(config.arch).layouts(algorithm, config)
    for kind in KERNEL_KINDS:
        try:
            component = getattr(algorithm, kind)(layouts)
            if isinstance(component, wiring.Component):
                component._MustUse__silence = True  # built to be checked, as hw.kernels does
            check_kernel(kind, component, layouts, algorithm.name)
            Fragment.get(component, None)
            continue
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


def elaborate(plan, *, platform=None, link=None, use_filter=True, link_options=None):
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
    link_options : dict, optional
        Link parameters that replace those of ``link`` or the platform's (``RunOptions.link_options``).
    """
    from ..hw.multi import build_system

    check_kernels(plan.config)
    return build_system(plan.config, platform=platform, link=link, use_filter=use_filter, link_options=link_options)
