"""Boards: the FPGA top inside a LiteX SoC, its host driver, whole-SoC simulation, bitstreams.

Needs the ``board`` extra (``pip install -e '.[board]'``: LiteX, LiteDRAM, LiteEth, LitePCIe,
LiteICLink, litex-boards, Migen). See docs/boards.md.
"""

import importlib.util

from ..errors import ConfigError

__all__ = ["require_board_extra", "BOARD_MODULES"]

#: What the board layer imports from the extra.
BOARD_MODULES = ("migen", "litex", "litedram", "litex_boards")


def require_board_extra(what):
    """Refuse ``what`` in one line when the board extra is not installed."""
    missing = [name for name in BOARD_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"{what} needs the board extra (missing: {', '.join(missing)}): "
                          f"pip install -e '.[board]' (make test-board installs it)")
