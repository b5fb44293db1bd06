"""The processing element and its stages."""

from .apply import ApplyUnit
from .gather import GatherUnit
from .hazard import HazardUnit
from .pe import HostMem, HostReadMem, ProcessingElement
from .scatter import ScatterUnit

__all__ = ["ApplyUnit", "GatherUnit", "HazardUnit", "HostMem", "HostReadMem", "ProcessingElement",
           "ScatterUnit"]
