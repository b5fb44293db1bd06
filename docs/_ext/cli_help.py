"""The ``gravfm-help`` directive: every subcommand's ``--help`` text, as the command prints it.

Help strings are plain text, not reStructuredText, so they go into literal blocks rather than
through a reST parser; the page is generated from the same parser the command uses
(:func:`gravfm.cli.build_parser`), so it cannot drift from it.
"""

import argparse
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _subcommands(parser):
    """(name, parser) of each subcommand of ``parser``, in the order of its help."""
    for action in parser._actions:  # argparse keeps no public list of subparsers
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _walk(parser, prog):
    yield prog, parser
    for name, sub in _subcommands(parser):
        yield from _walk(sub, f"{prog} {name}")


def help_texts():
    """(command line, help text) of ``gravfm`` and every subcommand, at 100 columns."""
    from gravfm.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to $COLUMNS: a fixed width, a stable page
    try:
        return [(prog, sub.format_help()) for prog, sub in _walk(build_parser(), "gravfm")]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


class GravfmHelp(SphinxDirective):
    """One section per command: its name as the title, its help text as a literal block."""

    def run(self):
        sections = []
        for prog, text in help_texts():
            section = nodes.section(ids=[nodes.make_id(prog)])
            section += nodes.title(text=prog)
            section += nodes.literal_block(text, text)
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("gravfm-help", GravfmHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
