"""On-chip network: update broadcast, per-destination endpoints, floating barrier."""

from .broadcast import Broadcaster
from .endpoint import Endpoint
from .merge import RoundMerger
from .network import Network

__all__ = ["Broadcaster", "Endpoint", "Network", "RoundMerger"]
