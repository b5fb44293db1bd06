"""gravfm: generate, simulate, verify and model vertex-centric graph accelerators for FPGAs.

The public API is re-exported from the subpackages as they grow; see ``docs/interfaces.md``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
