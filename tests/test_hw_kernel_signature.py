"""A kernel's traits (latency, combinational) live on its signature, like ``always_valid`` on
``stream.Signature``; an attribute of that name is refused, not silently ignored."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from gravfm.algorithms import WCC
from gravfm.algorithms.blocks import ExtremumGather
from gravfm.errors import ConfigError
from gravfm.hw import SystemConfig
from gravfm.hw.kernels import KernelSignature, check_kernel, gather_signature, kernel_traits
from gravfm.hw.layouts import KernelLayouts
from gravfm.hw.pe.gather import hazard_slots_for
from gravfm.hw.pe.gather_forward import is_combinational
from gravfm.hw.unused import silence_unused

LAYOUTS = KernelLayouts(WCC, SystemConfig.of(WCC))


class Gather(wiring.Component):
    def __init__(self, signature):
        super().__init__(signature)

    def elaborate(self, platform):
        return Module()


def test_traits_are_part_of_the_signature():
    plain, slow = gather_signature(LAYOUTS), gather_signature(LAYOUTS, latency=3)
    assert (plain.latency, plain.combinational, slow.latency) == (None, False, 3)
    assert plain == gather_signature(LAYOUTS) and plain != slow
    assert plain != gather_signature(LAYOUTS, combinational=True)
    assert "latency=3" in repr(slow)
    assert plain.flip().flip() == plain


@pytest.mark.parametrize("traits, message", [
    ({"latency": -1}, "Kernel latency must be None or a non-negative integer, not -1"),
    ({"latency": True}, "Kernel latency must be None or a non-negative integer, not True"),
    ({"combinational": 1}, "Kernel combinational must be True or False, not 1"),
])
def test_bad_traits_are_refused(traits, message):
    with pytest.raises(TypeError, match=message):
        gather_signature(LAYOUTS, **traits)


def test_the_pe_reads_the_traits_from_the_signature():
    slow = silence_unused(Gather(gather_signature(LAYOUTS, latency=5)))
    forwarding = silence_unused(Gather(gather_signature(LAYOUTS, combinational=True)))
    assert kernel_traits(slow) == (5, False) and hazard_slots_for(4, slow) == 8
    assert is_combinational(forwarding) and not is_combinational(slow)
    assert is_combinational(silence_unused(ExtremumGather(LAYOUTS, field="label")))


def test_a_trait_declared_as_an_attribute_is_refused():
    kernel = silence_unused(Gather(gather_signature(LAYOUTS)))
    kernel.latency = 2   # the old way: the PE would never see it
    with pytest.raises(ConfigError, match=r"gather kernel declares latency as an attribute; declare it on its "
                                          r"signature: gather_signature\(layouts, latency=...\)"):
        check_kernel("gather", kernel, LAYOUTS, "wcc")
    check_kernel("gather", silence_unused(Gather(KernelSignature(dict(gather_signature(LAYOUTS).members),
                                                                 latency=2))), LAYOUTS, "wcc")
