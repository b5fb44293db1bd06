"""gravfm.model."""
