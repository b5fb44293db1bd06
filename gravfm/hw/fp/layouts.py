"""Stream payload layouts of the floating-point units.

Operands and results are binary32 bit patterns (``unsigned(32)``). The optional ``tag`` field is
carried unchanged from an operation to its result, so a processing element can keep, say, a vertex
id beside the value it is accumulating.
"""

from amaranth.hdl import Shape, ShapeCastable, unsigned
from amaranth.lib import data

__all__ = ["check_tag_shape", "operands_layout", "result_layout"]


def check_tag_shape(tag_shape):
    """Return ``tag_shape`` if it is ``None`` or shape-castable, else raise :exc:`TypeError`."""
    if tag_shape is None or isinstance(tag_shape, ShapeCastable):
        return tag_shape
    try:
        Shape.cast(tag_shape)
    except TypeError:
        raise TypeError(f"Tag shape must be a shape-castable object or None, not {tag_shape!r}") \
            from None
    return tag_shape


def operands_layout(tag_shape=None, *, subtract_field: bool = False) -> data.StructLayout:
    """Layout ``{a, b[, subtract][, tag]}`` of an operation entering a unit.

    Parameters
    ----------
    tag_shape : shape-castable or None
        Shape of the ``tag`` field; no tag field if ``None``.
    subtract_field : bool
        Add a 1-bit ``subtract`` field (adder only): when set, the unit computes ``a - b``.
    """
    fields = {"a": unsigned(32), "b": unsigned(32)}
    if subtract_field:
        fields["subtract"] = unsigned(1)
    if check_tag_shape(tag_shape) is not None:
        fields["tag"] = tag_shape
    return data.StructLayout(fields)


def result_layout(tag_shape=None) -> data.StructLayout:
    """Layout ``{result[, tag]}`` of a result leaving a unit (``tag`` as in :func:`operands_layout`)."""
    fields = {"result": unsigned(32)}
    if check_tag_shape(tag_shape) is not None:
        fields["tag"] = tag_shape
    return data.StructLayout(fields)
