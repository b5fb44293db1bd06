"""The ends of an inter-FPGA link and the model of the link between them.

An FPGA's network feeds a :class:`LinkSender` per peer (one counted barrier per round) and is
fed by a :class:`LinkReceiver` per peer (round sorting, so a reordering link still delivers
exactly). :class:`LinkModel` simulates the link itself (bandwidth, latency, buffering,
reordering, stalls), configured by a :class:`LinkConfig`.
"""

from .config import LinkConfig
from .endpoints import LinkReceiver, LinkSender, link_word_layout
from .model import LinkModel

__all__ = ["LinkConfig", "LinkModel", "LinkReceiver", "LinkSender", "link_word_layout"]
