"""The ends of an inter-FPGA link and the model of the link between them.

An FPGA's network feeds a :class:`LinkSender` per peer (one counted barrier per round) and is
fed by a :class:`LinkReceiver` per peer (round sorting, so a reordering link still delivers
exactly). :class:`LinkModel` simulates the link itself (bandwidth, latency, buffering,
reordering, stalls, faults), configured by a :class:`LinkConfig`. With the link check
(:mod:`gravfm.hw.link_check`) a :class:`CheckedSender` and a :class:`CheckedReceiver` stand
between the ends and the link (:mod:`.ends` builds an FPGA's ends).
"""

from .check_rx import CheckedReceiver
from .check_tx import CheckedSender
from .config import LinkConfig
from .endpoints import LinkReceiver, LinkSender, link_word_layout
from .model import LinkModel

__all__ = ["CheckedReceiver", "CheckedSender", "LinkConfig", "LinkModel", "LinkReceiver", "LinkSender",
           "link_word_layout"]
