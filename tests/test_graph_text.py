"""The vectorized text splitter agrees with a plain line-by-line reading of the same bytes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm.errors import GraphFormatError
from gravfm.graph._text import parse_numbers, split_table

tokens = st.lists(st.sampled_from(["0", "12", "-3", "4.5", "#x", "%y", "7#", "a%"]), max_size=4)
spaces = st.sampled_from([" ", "\t", "  ", " \t "])
line_ends = st.sampled_from(["\n", "\r\n"])


@st.composite
def texts(draw):
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        words = draw(tokens)
        lead = draw(st.sampled_from(["", " ", "\t"]))
        lines.append(lead + draw(spaces).join(words) + draw(st.sampled_from(["", " ", "\r"])))
    ends = [draw(line_ends) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends))
    if lines and draw(st.booleans()):
        text = text[:-len(ends[-1])]  # last line without newline
    return text


def naive_split(text):
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        words = line.split()
        if words and not words[0].startswith(("#", "%")):
            rows.append((number, len(words), words))
    return rows


@settings(max_examples=200, deadline=None)
@given(texts())
def test_split_table_matches_naive_reading(text):
    table = split_table(text.encode(), "t.txt")
    expected = naive_split(text)
    assert table.line_numbers.tolist() == [number for number, _, _ in expected]
    assert table.token_counts.tolist() == [count for _, count, _ in expected]
    for index, (_, _, words) in enumerate(expected):
        assert table.line_tokens(index) == words
    # The kept text holds exactly the data lines' tokens, in order.
    assert table.data.decode().split() == [word for _, _, words in expected for word in words]


def test_comments_are_kept_for_headers():
    table = split_table(b"%%MatrixMarket matrix\n% two\n1 2\n# three\n", "t.mtx")
    assert table.comments == [(1, "%%MatrixMarket matrix"), (2, "% two"), (4, "# three")]


def test_parse_numbers_int_then_float():
    assert parse_numbers(split_table(b"1 2\n3 4\n", "t")).dtype == np.int64
    floats = parse_numbers(split_table(b"1 2\n3 4.5\n", "t"))
    assert floats.dtype == np.float64 and floats.tolist() == [1, 2, 3, 4.5]


def test_bad_token_line_number_counts_comments_and_blank_lines():
    table = split_table(b"# a\r\n\r\n0 1\r\n% b\r\n1 x\r\n", "t.txt")
    with pytest.raises(GraphFormatError, match=r"^t.txt: line 5: expected a number in column 2, found 'x'$"):
        parse_numbers(table)
