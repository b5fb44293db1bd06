"""A generated part of a hand-written page: the text between two marker lines.

The README's and docs' tables that come from results files (the Fmax table, the paper's table)
live between a ``BEGIN`` and an ``END`` comment; a script rewrites what is between them and a
test checks that the page holds what the results give, so nobody edits a figure by hand.
"""

from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["GeneratedText", "rewrite_pages"]


@dataclass(frozen=True)
class GeneratedText:
    begin: str   #: the marker line before the generated text
    end: str     #: the marker line after it
    what: str    #: what it is, for errors ("the Fmax table")

    def _bounds(self, text, where):
        """The offsets just after ``begin`` and at ``end`` in ``text``."""
        start, end = text.find(self.begin), text.find(self.end)
        if start < 0 or end < start or text.count(self.begin) != 1 or text.count(self.end) != 1:
            raise ConfigError(f"{where}: needs one {self.begin!r} line and one {self.end!r} line after it, "
                              f"around {self.what}")
        return start + len(self.begin) + 1, end

    def found_in(self, text, where):
        """The text a page holds between the markers."""
        start, end = self._bounds(text, where)
        return text[start:end]

    def put_into(self, text, generated, where):
        """``text`` with ``generated`` between the markers."""
        start, end = self._bounds(text, where)
        return text[:start] + generated + text[end:]


def rewrite_pages(section, pages, generated, *, check):
    """Put ``generated`` into each page's ``section`` (with ``check``: change nothing); print each page
    that differed; return 1 if ``check`` found one, else 0. A page without the markers: ConfigError."""
    differing = []
    for page in pages:
        text = page.read_text()
        if section.found_in(text, page) != generated:
            differing.append(page)
            if not check:
                page.write_text(section.put_into(text, generated, page))
    for page in differing:
        print(f"{page}: {'differs from the results' if check else 'table rewritten'}")
    return 1 if check and differing else 0
