"""gravfm.partition."""
