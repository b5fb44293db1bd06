"""The docstring examples of the public API run as written (doctest), so the API reference's
examples cannot drift from the code."""

import doctest
import importlib

import pytest

# Modules whose docstrings carry short examples (pure Python: no hardware is built).
MODULES = ["gravfm.graph.spec", "gravfm.graph.tiny", "gravfm.partition.methods", "gravfm.partition.report",
           "gravfm.algorithms", "gravfm.model.predict"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert attempted > 0, f"{name} has no examples: remove it from MODULES or add one"
    assert failed == 0, f"{failed} of {attempted} examples in {name} failed (the report is above)"
