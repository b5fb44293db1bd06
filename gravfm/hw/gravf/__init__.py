"""The GraVF baseline's own parts (:data:`gravfm.architectures.GRAVF`): layouts, unicast network and router.

Each PE stores its own vertices' complete out-edge lists; its apply feeds its own scatter unit
(:class:`gravfm.hw.pe.cores.SenderScatter`) and the scatter kernel's messages are routed over
the network to the destination PE, whose endpoint feeds them straight into gather (the paper's
GraVF baseline). The FPGA top, the PE shell and the link ends are GraVF-M's
(:mod:`gravfm.hw.arch`), so runs of the two architectures compare one for one; a message for a
PE on another FPGA takes that FPGA's link, one message per edge.
"""

from .layouts import GravfLayouts
from .network import GravfNetwork
from .router import MessageRouter

__all__ = ["GravfLayouts", "GravfNetwork", "MessageRouter"]
