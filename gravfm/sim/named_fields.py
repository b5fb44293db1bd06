"""Writing a harness input line by name: the Python side of ``named_fields.h``.

A line is a keyword and ``name=value`` words, one per field of one or more dataclasses; the C++
reader fills the struct generated from each dataclass (:mod:`gravfm.sim.harness_inputs`) by name,
so the two sides agree by field, never by position. This module imports no Amaranth.
"""

from dataclasses import fields

__all__ = ["PYTHON_ONLY", "cpp_fields", "named_line"]

#: Metadata of a field the C++ side neither has nor reads (e.g. a read region's name).
PYTHON_ONLY = {"cpp": False}


def cpp_fields(cls_or_record):
    """The dataclass fields the C++ struct has, in order."""
    return [field for field in fields(cls_or_record) if field.metadata.get("cpp", True)]


def named_line(kind, *records):
    """One input line: ``kind`` and every field of the dataclass ``records`` as ``name=value``."""
    words = [kind]
    seen = set()
    for record in records:
        for field in cpp_fields(record):
            if field.name in seen:
                raise ValueError(f"field {field.name} of {type(record).__name__} is given twice on a {kind} line")
            seen.add(field.name)
            words.append(f"{field.name}={int(getattr(record, field.name))}")
    return " ".join(words)
