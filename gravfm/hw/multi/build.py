"""Choose the system top for a configuration: one FPGA, or several joined by the platform's links."""

import dataclasses

from ...errors import ConfigError
from ...model import load_platform
from ..fpga import FpgaTop
from ..link import LinkConfig
from .system import MultiFpgaSystem

__all__ = ["build_system"]


def build_system(config, *, platform=None, link=None, use_filter=True, link_options=None):
    """The top for ``config``: the :class:`gravfm.hw.FpgaTop` itself for one FPGA, else a
    :class:`~gravfm.hw.multi.MultiFpgaSystem` whose links follow ``platform``.

    Parameters
    ----------
    config : gravfm.hw.SystemConfig
    platform : gravfm.model.platform.Platform or str, optional
        Source of the link parameters (bandwidth per link, word width, latency) and of the
        number of FPGAs available; without it (and without ``link``) the links are ideal.
    link : LinkConfig, optional
        Explicit link parameters (override the platform's).
    use_filter : bool
    link_options : dict, optional
        :class:`LinkConfig` fields that replace those of ``link`` (or of the platform's link).

    Raises
    ------
    gravfm.errors.ConfigError
        The platform has fewer FPGAs than ``config.fpgas`` (before anything is built).
    """
    if platform is not None:
        if not hasattr(platform, "network"):
            platform = load_platform(platform)
        if config.fpgas > platform.network.max_fpgas:
            raise ConfigError(f"platform {platform.name!r} has {platform.network.max_fpgas} FPGAs, "
                              f"{config.fpgas} asked")
    if config.fpgas == 1:
        return FpgaTop(config)
    options = dict(link_options or {})
    if link is not None:
        link = dataclasses.replace(link, **options)
    elif platform is None:
        link = LinkConfig(**options)
    else:
        link = LinkConfig.from_platform(platform, config.fpgas, **options)
    return MultiFpgaSystem(config, link=link, use_filter=use_filter)
