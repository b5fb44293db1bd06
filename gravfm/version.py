"""The package version: one definition, read by the front door (``gravfm.__version__``) and by
the provenance of results (:mod:`gravfm.provenance`)."""

__version__ = "0.1.0"
#: The package's (and the command's) own name: in command lines and the cache folder's name.
PACKAGE_NAME = "gravfm"
