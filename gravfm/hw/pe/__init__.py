"""The processing element and its stages."""

from .apply import ApplyUnit
from .gather import GatherUnit
from .gather_forward import ForwardingGatherUnit
from .hazard import HazardUnit
from .pe import ProcessingElement
from .scatter import ScatterUnit

__all__ = ["ApplyUnit", "ForwardingGatherUnit", "GatherUnit", "HazardUnit", "ProcessingElement", "ScatterUnit"]
