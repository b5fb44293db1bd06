"""The GraVF baseline architecture (``arch="gravf"``): unicast messages, sender-side scatter.

Each PE stores its own vertices' complete out-edge lists; its apply feeds its own scatter unit
and the scatter kernel's messages are routed over the network to the destination PE, whose
endpoint feeds them straight into gather (SPEC §3 "GraVF (baseline) mode"). Built from the same
units as GraVF-M (:mod:`gravfm.hw.pe`, :class:`gravfm.hw.network.Endpoint`), so runs of the
two architectures compare one for one. With several FPGAs,
:class:`gravfm.hw.multi.MultiFpgaSystem` builds GraVF FPGAs (``config.arch == "gravf"``): a
message for a PE on another FPGA takes that FPGA's link, the same link model and counted-barrier
endpoints as GraVF-M, one message per edge.
"""

from .layouts import GravfLayouts
from .network import GravfNetwork
from .pe import GravfProcessingElement
from .router import MessageRouter
from .system import GravfSystem

__all__ = ["GravfLayouts", "GravfNetwork", "GravfProcessingElement", "GravfSystem", "MessageRouter"]
