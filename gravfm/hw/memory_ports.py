"""Signatures of memory ports passed between units (the memories themselves live in the PE)."""

from amaranth.hdl import unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["read_port_signature", "write_port_signature"]


def read_port_signature(addr_bits, shape):
    """Synchronous read port seen from its user: ``addr``, ``en`` out; ``data`` in, one cycle later."""
    return wiring.Signature({"addr": Out(unsigned(addr_bits)), "en": Out(1), "data": In(shape)})


def write_port_signature(addr_bits, shape):
    """Write port seen from its user: ``addr``, ``en``, ``data`` out."""
    return wiring.Signature({"addr": Out(unsigned(addr_bits)), "en": Out(1), "data": Out(shape)})
