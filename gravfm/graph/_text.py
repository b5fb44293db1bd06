"""Fast splitting of a whitespace-separated text table into lines and numbers.

Graph files are big and simple, so the common case is vectorized: numpy finds the line and token
boundaries in the raw bytes, and ``np.fromstring`` parses all numbers at once. Only when that
fails (a typo somewhere) do we walk the lines one by one, to name the bad line.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import GraphFormatError

_NEWLINE = 10
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[[9, 10, 11, 12, 13, 32]] = True  # tab, LF, VT, FF, CR, space: what bytes.split() splits on
_IS_COMMENT_MARK = np.zeros(256, dtype=bool)
_IS_COMMENT_MARK[[ord("#"), ord("%")]] = True
# Comment lines kept as text (headers such as "%%MatrixMarket" or "# Nodes: 5242").
_MAX_KEPT_COMMENTS = 200


@dataclass(frozen=True)
class TextTable:
    """The data lines of a text file.

    Attributes
    ----------
    source : str
        File name used in error messages.
    line_numbers : np.ndarray of int64
        1-based line number (in the file) of every data line.
    token_counts : np.ndarray of int64
        Number of whitespace-separated tokens on every data line.
    data : bytes
        The file without its comment lines: every number in it belongs to a data line.
    comments : list of (int, str)
        The first comment lines as ``(line number, text)``.
    raw : bytes
        The whole file, and ``spans`` the ``(start, end)`` byte range of every data line in it
        (to quote a bad line in an error message).
    """

    source: str
    line_numbers: np.ndarray
    token_counts: np.ndarray
    data: bytes
    comments: list
    raw: bytes = b""
    spans: np.ndarray = None

    def line_tokens(self, index):
        """Tokens of data line ``index`` as text (slow; used to build error messages)."""
        start, end = self.spans[index]
        return self.raw[start:end].decode("latin-1").split()

    def error(self, index, message):
        """A GraphFormatError for data line ``index``."""
        return GraphFormatError(f"{self.source}: line {int(self.line_numbers[index])}: {message}")


def split_table(data, source):
    """Find the data lines of ``data`` (bytes): not blank, not a ``#`` / ``%`` comment."""
    data = bytes(data)
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return TextTable(source, empty, empty, b"", [], data, np.zeros((0, 2), dtype=np.int64))
    line_starts = np.concatenate([[0], np.flatnonzero(buf == _NEWLINE) + 1])
    if line_starts[-1] == buf.size:  # the file ends with a newline: no empty last line
        line_starts = line_starts[:-1]
    line_ends = np.append(line_starts[1:], buf.size)

    space = _IS_SPACE[buf]
    token_start = np.empty(buf.size, dtype=bool)
    token_start[0] = not space[0]
    np.greater(space[:-1], space[1:], out=token_start[1:])  # a space followed by a non-space

    token_positions = np.flatnonzero(token_start)
    token_counts = np.diff(np.searchsorted(token_positions, np.append(line_starts, buf.size)))

    is_comment = _comment_lines(data, buf, token_start, token_positions, line_starts)
    is_data = (token_counts > 0) & ~is_comment
    comment_lines = np.flatnonzero(is_comment)
    comments = [(int(i) + 1, data[line_starts[i]:line_ends[i]].decode("latin-1").strip())
                for i in comment_lines[:_MAX_KEPT_COMMENTS]]
    # Blank lines may stay (the number parser skips whitespace); comment lines must go.
    cuts = np.stack([line_starts[comment_lines], line_ends[comment_lines]], axis=1).ravel()
    bounds = np.concatenate([[0], cuts, [buf.size]]).reshape(-1, 2)
    kept = b"\n".join(data[start:end] for start, end in bounds if end > start)
    spans = np.stack([line_starts[is_data], line_ends[is_data]], axis=1)
    return TextTable(source, np.flatnonzero(is_data).astype(np.int64) + 1,
                     token_counts[is_data], kept, comments, data, spans)


def _comment_lines(data, buf, token_start, token_positions, line_starts):
    """Lines whose first token starts with ``#`` or ``%``."""
    is_comment = np.zeros(line_starts.size, dtype=bool)
    if b"#" not in data and b"%" not in data:
        return is_comment
    marks = np.flatnonzero(_IS_COMMENT_MARK[buf] & token_start)
    line_of_mark = np.searchsorted(line_starts, marks, side="right") - 1
    first_token = token_positions[np.searchsorted(token_positions, line_starts[line_of_mark])]
    is_comment[line_of_mark[first_token == marks]] = True
    return is_comment


def parse_numbers(table):
    """All tokens of the data lines as one array: int64 if they all are integers, else float64.

    Raises GraphFormatError naming the first line with a token that is not a number.
    """
    text = table.data.decode("latin-1")
    for dtype in (np.int64, np.float64):
        try:
            values = np.fromstring(text, dtype=dtype, sep=" ")
        except ValueError:
            continue
        if values.size == int(table.token_counts.sum()):
            return values
    _raise_first_bad_token(table)
    raise GraphFormatError(f"{table.source}: cannot parse the numbers in this file")  # pragma: no cover


def check_integer_columns(table, rows, columns, first_row, what="vertex id"):
    """Check that ``rows[:, columns]`` hold exact integers; return them as int64.

    ``first_row`` is the data-line index of ``rows[0]`` (for error messages).
    """
    block = rows[:, columns]
    if block.dtype.kind == "f":
        integral = np.isfinite(block) & (np.floor(block) == block)
        if not integral.all():
            row, column = np.argwhere(~integral)[0]
            raise table.error(first_row + row, f"expected an integer {what} in column {columns[column] + 1}, "
                                               f"found {table.line_tokens(first_row + row)[columns[column]]!r}")
    block = block.astype(np.int64)
    # np.fromstring saturates on overflow; ids this large are surely a mistake anyway.
    suspicious = (block < 0) | (block >= 2**62)
    if suspicious.any():
        row, column = np.argwhere(suspicious)[0]
        token = table.line_tokens(first_row + row)[columns[column]]
        reason = "non-negative" if block[row, column] < 0 else "reasonably small (< 2**62)"
        raise table.error(first_row + row, f"expected a {reason} {what} in column {columns[column] + 1}, "
                                           f"found {token!r}")
    return block


def _is_number(token):
    """Whether ``np.fromstring`` reads ``token`` as exactly one number (as the fast path does;
    Python's ``float`` would also accept e.g. ``1_000``)."""
    try:
        return np.fromstring(token, dtype=np.float64, sep=" ").size == 1
    except ValueError:
        return False


def _raise_first_bad_token(table):
    for index in range(table.token_counts.size):
        for column, token in enumerate(table.line_tokens(index)):
            if not _is_number(token):
                raise table.error(index, f"expected a number in column {column + 1}, found {token!r}")
