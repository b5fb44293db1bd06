"""Stage 3, elaborate: the system top of a plan (one FPGA, or several joined by links)."""

__all__ = ["elaborate"]


def elaborate(plan, *, platform=None, link=None, use_filter=True):
    """The top for ``plan.config`` (:func:`gravfm.hw.multi.build_system`).

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
    """
    from ..hw.multi import build_system

    return build_system(plan.config, platform=platform, link=link, use_filter=use_filter)
