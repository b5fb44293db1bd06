"""On-chip networks: update broadcast, per-destination endpoints, floating barrier; and the
multistage message network of the hybrid architecture (switches combining barriers)."""

from .broadcast import Broadcaster
from .combiner import RoundCombiner
from .endpoint import Endpoint
from .merge import RoundMerger
from .multistage import MultistageNetwork
from .network import Network
from .switch import RoundSwitch

__all__ = ["Broadcaster", "Endpoint", "MultistageNetwork", "Network", "RoundCombiner", "RoundMerger", "RoundSwitch"]
