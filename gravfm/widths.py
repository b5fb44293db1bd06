"""The symbolic width of a layout field: :data:`VERTEXID`, the system's vertex-id width.

An algorithm's layouts give each field an int or :data:`VERTEXID`, resolved when the hardware is
built (:mod:`gravfm.hw.layouts`) and when the model sizes an item (:mod:`gravfm.model.algorithm_params`).
Below every package that reads it, so that none of them imports another sideways for it.
"""

__all__ = ["VERTEXID"]

#: Symbolic width: the system's vertex-id width.
VERTEXID = "vertexid"
