"""What a platform's clock rests on: met by a placed and routed design (which one), or assumed.

Every MTEPS figure is cycles times the platform's clock, ``fpga.f_clk_mhz``; a design on a board
runs at the clock its place-and-route meets. A platform file says which it is in its ``[clock]``
table (left out: ``assumed``, since a clock nobody has shown to be met is an assumption)::

    [clock]
    basis = "met"                    # or "assumed"
    synth_target = "ecp5-85-6"       # optional: reports add the Fmax measured for the run's top

    [clock.met]                      # with "met" only: the place-and-route row it comes from
    source = "synth_matrix.json"
    target = "ecp5-85-6"
    top = "the 4-PE WCC top (edges on chip)"
    commit = "1bfbb8251a4def1cf3c250d7a71aedffbb2ef0bb"
    fmax_mhz = 101.08

``clock.met`` names the place-and-route result the clock comes from and is required with ``met`` and
refused with ``assumed``; ``f_clk_mhz`` may not exceed its ``fmax_mhz``. ``synth_target`` is the
``gravfm synth`` target closest to the platform's FPGA: ``gravfm run`` and ``gravfm model`` then
also give MTEPS at the Fmax measured for the top they build (``benchmarks/results/synth_matrix.json``).
"""

from dataclasses import dataclass, replace
from typing import Literal

from ..errors import ConfigError
from ..validate import check_fields, check_number
from .schema import FromDict

__all__ = ["MetRow", "ClockSpec", "platform_at"]


@dataclass(frozen=True)
class MetRow(FromDict):
    """The place-and-route result a met clock comes from.

    Parameters
    ----------
    source : str
        The results file that holds it (in ``benchmarks/results``).
    target : str
        The synthesis target or board it was placed and routed for.
    top : str
        The design, as a reader names it: algorithm, FPGAs, PEs, edge memory.
    commit : str
        The commit whose RTL it was measured on.
    fmax_mhz : float
        The Fmax place-and-route measured (at least the platform's clock).
    """

    source: str
    target: str
    top: str
    commit: str
    fmax_mhz: float

    def __post_init__(self):
        check_fields(self, "fmax_mhz", check=check_number)

    def describe(self):
        """``top on target (source)``."""
        return f"{self.top} on {self.target} ({self.source})"


@dataclass(frozen=True)
class ClockSpec(FromDict):
    """The platform clock's basis (see the module's description).

    Parameters
    ----------
    basis : {"assumed", "met"}
        ``met``: a placed and routed design reached the clock (``met`` says which); ``assumed``: no
        design has been shown to.
    met : MetRow, optional
        With ``basis = "met"`` only.
    synth_target : str, optional
        The ``gravfm synth`` target of the platform's FPGA, for the measured Fmax of a run's top.
    """

    basis: Literal["assumed", "met"] = "assumed"
    met: MetRow | None = None
    synth_target: str | None = None

    def __post_init__(self):
        if self.basis == "met" and self.met is None:
            raise ConfigError("clock.basis is 'met': clock.met must name the place-and-route row it comes from "
                              "(source, target, top, commit, fmax_mhz)")
        if self.basis == "assumed" and self.met is not None:
            raise ConfigError("clock.met names a row, but clock.basis is 'assumed': say 'met', or drop clock.met")


def platform_at(platform, mhz):
    """``platform`` with its clock at ``mhz``: the what-if of a prediction at another clock (a
    measured Fmax), its basis ``assumed`` here and stated by the caller that chose ``mhz``."""
    return replace(platform, fpga=replace(platform.fpga, f_clk_mhz=mhz),
                   clock=ClockSpec(synth_target=platform.clock.synth_target))
