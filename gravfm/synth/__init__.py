"""gravfm.synth."""
