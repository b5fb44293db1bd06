"""The hybrid architecture's own parts (:data:`gravfm.architectures.HYBRID`): layouts, networks, PE core.

Between FPGAs it is GraVF-M (update broadcast, neighbor filter, floating barrier, the same
links); inside an FPGA each update goes to ONE scatter unit, the one of the PE whose local index
is the sender's PE's (:mod:`gravfm.hw.hybrid.network` says why), which streams the sender's
edges into this FPGA and sends each message through the
:class:`~gravfm.hw.network.MultistageNetwork` to the PE of its destination, whose gather takes
it as GraVF's does. The FPGA top, the PE shell and the link ends are the other architectures'.
"""

from .core import HybridScatter
from .layouts import HybridLayouts
from .network import HybridNetwork, pe_port_signature
from .router import OwnerRouter

__all__ = ["HybridLayouts", "HybridNetwork", "HybridScatter", "OwnerRouter", "pe_port_signature"]
