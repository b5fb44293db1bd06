"""Algorithms named on a command line, and errors in a user's own algorithm code.

An algorithm is named by its registered name (``wcc``) or as ``FILE.py:NAME``, an
:class:`~gravfm.algorithms.Algorithm` object defined in a user's Python file. The file is
imported as a module; an error in it (a syntax error, an exception at import) or later in the
kernels and functions it defines is reported at the user's line (:func:`user_code_error`),
not as a traceback through gravfm and Amaranth.
"""

import importlib.util
import sysconfig
import traceback
from pathlib import Path

from ..errors import ConfigError, UserCodeError
from . import REGISTRY, get_algorithm
from .base import Algorithm

__all__ = ["resolve_algorithm", "load_algorithm_file", "algorithm_file", "user_code_error"]

_PACKAGE = Path(__file__).resolve().parents[1]
# Where code that is not the user's lives: gravfm itself and the Python installation.
_LIBRARY = (_PACKAGE, *{Path(path).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")
                        if (path := sysconfig.get_paths().get(key))})


def _is_library(filename):
    if not filename or filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
        return True
    path = Path(filename).resolve()
    return any(path.is_relative_to(root) for root in _LIBRARY)


def user_code_error(error, what=""):
    """``error``, raised while running a user's code, as a one-line :class:`UserCodeError`.

    The line named is the innermost one of the traceback that lies outside gravfm and the
    Python installation (for a syntax error: where the parser stopped).

    Parameters
    ----------
    error : BaseException
    what : str
        What was being done (``"gather kernel"``), put after ``FILE:LINE:``.

    Returns
    -------
    UserCodeError or None
        None when no line of the traceback is the user's: the error is gravfm's own (a bug
        that deserves its traceback).
    """
    prefix = f"{what}: " if what else ""
    if isinstance(error, SyntaxError) and not _is_library(error.filename):
        return UserCodeError(f"{error.filename}:{error.lineno}: {prefix}{type(error).__name__}: {error.msg}")
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if not _is_library(frame.filename)]
    if not frames:
        return None
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip()) or "(no message)"
    return UserCodeError(f"{frames[-1].filename}:{frames[-1].lineno}: {prefix}{type(error).__name__}: {text}")


def _split(text):
    """``(file, name)`` for ``FILE.py:NAME``, ``(file, None)`` for ``FILE.py``, else None."""
    if text.endswith(".py"):
        return text, None
    file, colon, name = text.rpartition(":")
    if colon and file.endswith(".py"):
        return file, name
    return None


def algorithm_file(spec):
    """The user's file named by ``spec`` (``FILE.py`` or ``FILE.py:NAME``), or None for a
    registered name or an algorithm object."""
    split = _split(spec) if isinstance(spec, str) else None
    return None if split is None else split[0]


def resolve_algorithm(spec):
    """The :class:`~gravfm.algorithms.Algorithm` named by ``spec``.

    Parameters
    ----------
    spec : str or Algorithm
        A registered name (``wcc``), ``FILE.py:NAME`` (an Algorithm object in a user's file),
        or an algorithm (returned as it is).

    Raises
    ------
    gravfm.errors.ConfigError
        Unknown name; a file without ``:NAME`` (the message lists the file's Algorithm objects),
        a missing file or object.
    gravfm.errors.UserCodeError
        The file does not import (``FILE:LINE: message``).
    """
    if not isinstance(spec, str):
        return spec
    split = _split(spec)
    if split is None:
        return get_algorithm(spec)
    return load_algorithm_file(*split)


def _algorithms_in(module):
    """Names of the Algorithm objects a module defines (the built-ins it imports left out)."""
    builtin = [id(algorithm) for algorithm in REGISTRY.values()]
    return [name for name, value in vars(module).items()
            if isinstance(value, Algorithm) and id(value) not in builtin and not name.startswith("_")]


def load_algorithm_file(path, name=None):
    """The Algorithm object ``name`` of the Python file ``path`` (``name=None``: an error that
    lists the file's Algorithm objects in the ``FILE.py:NAME`` form)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such algorithm file")
    spec = importlib.util.spec_from_file_location(f"gravfm_user_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # whatever the user's file raises is reported at its line
        located = user_code_error(error, "cannot import the algorithm file")
        if located is None:
            raise
        raise located from None
    found = _algorithms_in(module)
    listing = ", ".join(f"{path}:{key}" for key in found) or "none"
    if name is None:
        raise ConfigError(f"{path}: name the algorithm object as FILE.py:NAME (Algorithm objects in "
                          f"the file: {listing})")
    if not hasattr(module, name):
        raise ConfigError(f"{path} defines no {name!r} (Algorithm objects in the file: {listing})")
    algorithm = getattr(module, name)
    if not isinstance(algorithm, Algorithm):
        raise ConfigError(f"{path}:{name} is a {type(algorithm).__name__}, not a gravfm.algorithms.Algorithm "
                          f"(Algorithm objects in the file: {listing})")
    return algorithm
