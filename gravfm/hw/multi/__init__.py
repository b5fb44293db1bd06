"""Multi-FPGA systems: FPGA tops joined by simulated links (SPEC §3, issue 6).

Each FPGA runs the single-FPGA PEs and network (with the neighbor filter in front of each link's
merger); its network's remote ports feed a :class:`LinkSender` per peer (one counted barrier per
round) and are fed by a :class:`LinkReceiver` per peer (round sorting, so a reordering link
still delivers exactly).
:class:`LinkModel` simulates a link: bandwidth, latency, buffering, reordering and stalls.
"""

from .build import build_system
from .endpoints import LinkReceiver, LinkSender, link_word_layout
from .fpga import FpgaNode, peers_of
from .link import LinkModel
from .link_config import LinkConfig
from .system import MultiFpgaSystem

__all__ = ["build_system", "FpgaNode", "LinkConfig", "LinkModel",
           "LinkReceiver", "LinkSender", "MultiFpgaSystem", "link_word_layout", "peers_of"]
