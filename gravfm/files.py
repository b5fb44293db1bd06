"""Small checks on the file system that both the CLI and the build cache make before any work."""

import tempfile

__all__ = ["can_create_in"]


def can_create_in(folder):
    """Whether a file can be made in ``folder``, found by making one and removing it (permission
    bits do not tell when running as root, nor on a read-only or virtual file system)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False
