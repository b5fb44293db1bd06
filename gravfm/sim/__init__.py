"""gravfm.sim."""
