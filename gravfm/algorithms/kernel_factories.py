"""Kernel factories that build a kernel building block only when the hardware is built.

An :class:`~gravfm.algorithms.Algorithm` holds each kernel as a factory ``(layouts) -> Component``.
:func:`block_kernel` makes one from a building block of :mod:`gravfm.algorithms.blocks` and its
arguments. The blocks (and with them Amaranth) are imported when the factory is called, so
defining an algorithm keeps ``import gravfm.algorithms`` free of Amaranth.
"""

__all__ = ["block_kernel"]


def block_kernel(block, **arguments):
    """Factory ``layouts -> blocks.<block>(layouts, **arguments)``.

    Parameters
    ----------
    block : str
        Name of a building block in :mod:`gravfm.algorithms.blocks`, e.g. ``"ExtremumGather"``.
    **arguments
        Its keyword arguments (callables among them run when the block is built).
    """
    def build(layouts):
        from . import blocks  # deferred: Amaranth (heavy)
        return getattr(blocks, block)(layouts, **arguments)

    build.__qualname__ = f"block_kernel({block!r})"
    return build
