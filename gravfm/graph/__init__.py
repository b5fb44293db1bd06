"""gravfm.graph."""
