"""Sphinx configuration of gravfm's documentation site (``make docs``: built with warnings as errors).

The pages are the Markdown files of this folder (MyST); the API reference is generated from the
numpydoc docstrings (autodoc + napoleon), the CLI reference from the argument parser itself (``_ext/cli_help.py``).
"""

import re
import sys
from pathlib import Path

import gravfm

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "gravfm"
author = "the gravfm authors"
copyright = "the gravfm authors, BSD-2-Clause"
release = version = gravfm.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "cli_help",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
root_doc = "index"

# Markdown: headings get anchors so pages can link to each other's sections (page.md#section).
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# numpydoc docstrings; signatures as written, members in source order, no private names.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = True  # attributes as a field list: no index entry that could clash with a field of the same name
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}

html_theme = "furo"
html_title = f"gravfm {release}"


def _escape_set_sizes(app, what, name, obj, options, lines):
    """Docstrings write |V| and |E| for the sizes of a graph; reST reads ``|X|`` as a
    substitution, so escape them outside inline literals (where they are shown as written)."""
    for number, line in enumerate(lines):
        parts = line.split("``")
        parts[::2] = [re.sub(r"\|([A-Za-z]\w*)\|", r"\\|\1\\|", part) for part in parts[::2]]
        lines[number] = "``".join(parts)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_set_sizes)
