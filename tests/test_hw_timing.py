"""Timing-driven structure of the PE: the hazard unit sized from the gather kernel's latency,
and the registered stream stage that cuts long valid/ready paths."""

import random

import pytest
from amaranth.lib import wiring
from amaranth.sim import Simulator

from gravfm.algorithms import PAGERANK, WCC
from gravfm.hw import SystemConfig
from gravfm.hw.kernels import build_kernels
from gravfm.hw.layouts import KernelLayouts
from gravfm.hw.pe.gather import GatherUnit, hazard_slots_for


class _Kernel:
    def __init__(self, latency):
        self.latency = latency


@pytest.mark.parametrize(("configured", "latency", "expected"), [(4, 0, 4), (4, 2, 4), (4, 3, 5), (4, 4, 6),
                                                                  (8, 4, 8), (1, 17, 19)])
def test_hazard_slots_cover_the_kernel_latency(configured, latency, expected):
    assert hazard_slots_for(configured, _Kernel(latency)) == expected


def test_hazard_slots_without_latency_attribute_keep_the_configured_size():
    assert hazard_slots_for(3, object()) == 3


@pytest.mark.parametrize("bad", [-1, 2.5, True, "4"])
def test_hazard_slots_reject_a_bad_latency(bad):
    with pytest.raises(TypeError, match="latency"):
        hazard_slots_for(4, _Kernel(bad))


@pytest.mark.parametrize(("algorithm", "expected"), [(WCC, 4), (PAGERANK, 6)])
def test_gather_unit_sizes_its_hazard_unit_from_the_kernel(algorithm, expected):
    config = SystemConfig(algorithm=algorithm, local_bits=5)
    layouts = KernelLayouts(algorithm, config)
    kernel = build_kernels(algorithm, layouts)["gather"]
    gather = GatherUnit(layouts=layouts, config=config, kernel=kernel)
    assert gather.hazard_slots == expected
