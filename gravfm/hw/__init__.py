"""gravfm.hw."""
