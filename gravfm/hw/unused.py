"""One switch for Amaranth's "created but never used" warning (``UnusedElaboratable``).

A component built only to be inspected (a kernel whose ports are checked, a top whose system
is the C++ harness) or one that failed to construct would warn at exit. Amaranth 0.5 has no
public switch for it; its own test-suite sets the private ``_MustUse__silence`` attribute. This
module is the one place that names it, so an Amaranth release that renames it is one edit.
"""

__all__ = ["refusal", "silence_unused"]


def silence_unused(elaboratable, silenced=True):
    """No "never used" warning for ``elaboratable`` (``silenced=False``: warn again, e.g. once a
    constructor has succeeded); returns it."""
    elaboratable._MustUse__silence = silenced
    return elaboratable


def refusal(component, message):
    """The TypeError a constructor raises for a refused argument, ``component`` (never to be
    elaborated) silenced first: ``raise refusal(self, "...")``."""
    silence_unused(component)
    return TypeError(message)
