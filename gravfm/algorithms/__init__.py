"""gravfm.algorithms."""
