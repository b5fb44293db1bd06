"""Helpers the subcommands share."""

import json
from pathlib import Path

from ..errors import GravfmError

__all__ = ["write_json"]


def write_json(path, figures):
    """Write ``figures`` to ``path`` as indented JSON (the ``--json FILE`` option).

    Raises
    ------
    gravfm.errors.GravfmError
        The file cannot be written (one line naming it, for the CLI to print).
    """
    try:
        Path(path).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise GravfmError(f"--json {path}: cannot write the figures: {error.strerror or error}") from None
