"""Graph file readers and writers on small inline files: every format quirk and every error."""

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gravfm.errors import GraphFormatError, SpecError
from gravfm.graph import Graph, read_graph
from gravfm.graph.writers import write_graph


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def pairs(graph):
    src, dst = graph.edges()
    return list(zip(src.tolist(), dst.tolist()))


RAW = dict(self_loops="keep", duplicates="keep")


@pytest.mark.parametrize("text", [
    "0 1\n1 2\n2 0\n",
    "0 1\r\n1 2\r\n2 0\r\n",
    "0\t1\n1\t2\n2\t0",                   # tabs, no newline at the end
    "# comment\n% other comment\n0 1\n\n1 2\n   2 0   \n",
    "0 1\r\n1 2\r\n2 0",                  # CRLF, last line without newline (like Wiki-Vote)
    "\ufeff# saved by an editor with a byte order mark\n0 1\n1 2\n2 0\n",
])
def test_edge_list_variants_give_the_same_graph(tmp_path, text):
    g = read_graph(write(tmp_path, "g.txt", text), **RAW)
    assert g.num_vertices == 3 and pairs(g) == [(0, 1), (1, 2), (2, 0)]
    assert not g.cleaning.relabelled


def test_gzip_is_detected_by_content(tmp_path):
    path = write(tmp_path, "g.txt.gz", gzip.compress(b"# x\n0 1\n1 2\n"))
    assert pairs(read_graph(path)) == [(0, 1), (1, 2)]
    # Also without the .gz extension: the magic bytes decide.
    other = write(tmp_path, "other.txt", gzip.compress(b"0 1\n"))
    assert pairs(read_graph(other)) == [(0, 1)]


def test_weight_column_integer_and_real(tmp_path):
    ints = read_graph(write(tmp_path, "i.txt", "0 1 7\n1 2 9\n"))
    assert ints.weights.dtype == np.int64 and ints.weights.tolist() == [7, 9]
    reals = read_graph(write(tmp_path, "r.txt", "0 1 0.5\n1 2 2\n"))
    assert reals.weights.dtype == np.float64 and reals.weights.tolist() == [0.5, 2.0]


def test_sparse_ids_are_relabelled_and_reported(tmp_path):
    g = read_graph(write(tmp_path, "g.txt", "10 30\n30 20\n"))
    assert g.num_vertices == 3 and g.cleaning.relabelled
    assert g.original_ids.tolist() == [10, 20, 30]
    assert pairs(g) == [(0, 2), (2, 1)]
    kept = read_graph(write(tmp_path, "h.txt", "10 30\n30 20\n"), relabel="none")
    assert kept.num_vertices == 31 and not kept.cleaning.relabelled


def test_snap_nodes_comment_keeps_isolated_vertices(tmp_path):
    g = read_graph(write(tmp_path, "g.txt", "# Nodes: 5 Edges: 1\n0 1\n"))
    assert g.num_vertices == 5 and not g.cleaning.relabelled


def test_vertex_count_header_and_sentinel(tmp_path):
    # The oregon layout: a node-count line, "u v w" lines, a -1 sentinel without newline.
    g = read_graph(write(tmp_path, "g.txt", "4\r\n0 1 1\r\n1 2 1\r\n-1"), **RAW)
    assert g.num_vertices == 4 and g.num_edges == 2 and g.weights.tolist() == [1, 1]


def test_size_header_one_based(tmp_path):
    # The inf-euroroad layout: a % line, then "edges rows cols", 1-based ids.
    g = read_graph(write(tmp_path, "g.edges", "% sym unweighted\n2 4 4\n1 2\n3 4\n"), **RAW)
    assert g.num_vertices == 4 and pairs(g) == [(0, 1), (2, 3)]
    assert g.cleaning.relabelled and g.original_ids.tolist() == [1, 2, 3, 4]


def test_size_header_must_match(tmp_path):
    with pytest.raises(GraphFormatError, match=r"g.edges: line 2: .*header.*2 edge lines"):
        read_graph(write(tmp_path, "g.edges", "% sym\n5 4 4\n1 2\n3 4\n"))


@pytest.mark.parametrize("text, line, words", [
    ("0 1\n1 x\n", 2, "expected a number in column 2, found 'x'"),
    ("# c\n0 1\n1 2 3 4\n5 6\n", 3, "expected 2 columns"),
    ("0 1\n2 -3\n", 2, "non-negative vertex id in column 2"),
    ("0 1\n2 3.5\n", 2, "integer vertex id in column 2, found '3.5'"),
    ("0 1\n2 99999999999999999999999\n", 2, "reasonably small"),
    ("0 1 2 3\n4 5 6 7\n", 1, "expected 2 or 3 columns"),
    ("0,1\n", 1, "expected a number in column 1, found '0,1'"),
    ("0 1\n1 1_000\n", 2, "expected a number in column 2, found '1_000'"),
])
def test_malformed_line_names_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(GraphFormatError) as error:
        read_graph(path)
    message = str(error.value)
    assert message.startswith(f"{path}: line {line}: "), message
    assert words in message
    assert "\n" not in message


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(GraphFormatError, match="no such graph file"):
        read_graph(tmp_path / "nope.txt")
    with pytest.raises(SpecError, match="unknown graph file format 'csv'"):
        read_graph(write(tmp_path, "g.txt", "0 1\n"), fmt="csv")
    with pytest.raises(GraphFormatError, match="broken gzip"):
        read_graph(write(tmp_path, "g.gz", b"\x1f\x8b" + b"garbage"))


# --- Matrix Market ---------------------------------------------------------------------------

def test_matrix_market_symmetric_pattern(tmp_path):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 3\n2 1\n3 2\n3 3\n"
    g = read_graph(write(tmp_path, "g.mtx", text), **RAW)
    assert g.num_vertices == 3
    assert pairs(g) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 2)]
    assert g.cleaning.mirrored_edges == 2 and g.cleaning.input_edges == 3
    assert g.original_ids.tolist() == [1, 2, 3]


def test_matrix_market_general_real_and_integer(tmp_path):
    real = read_graph(write(tmp_path, "r.mtx",
                            "%%MatrixMarket matrix coordinate real general\n4 4 2\n1 4 0.25\n4 1 -1e3\n"))
    assert real.num_vertices == 4 and pairs(real) == [(0, 3), (3, 0)]
    assert real.weights.tolist() == [0.25, -1000.0]
    ints = read_graph(write(tmp_path, "i.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 3\n"))
    assert ints.weights.dtype == np.int64 and ints.weights.tolist() == [3]


def test_matrix_market_detected_by_banner(tmp_path):
    g = read_graph(write(tmp_path, "g.txt", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"))
    assert pairs(g) == [(0, 1)]


@pytest.mark.parametrize("text, words", [
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "only 'coordinate'"),
    ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "unsupported field 'complex'"),
    ("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", "unsupported symmetry"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 2\n", "square matrix"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n", "announces 2 entries"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 3\n", "line 3: expected an index in 1..2"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n0 1\n", "line 3: expected an index in 1..2"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n", "line 3: expected 3 columns"),
    ("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 0.5\n", "integer value in column 3"),
    ("% not a banner\n2 2 1\n1 2\n", "line 1: expected a '%%MatrixMarket"),
])
def test_matrix_market_errors(tmp_path, text, words):
    with pytest.raises(GraphFormatError, match="g.mtx") as error:
        read_graph(write(tmp_path, "g.mtx", text))
    assert words in str(error.value)


# --- writers: round trips --------------------------------------------------------------------

@st.composite
def graphs(draw):
    n = draw(st.integers(1, 10))
    m = draw(st.integers(0, 25))
    ids = st.lists(st.integers(0, n - 1), min_size=m, max_size=m)
    kind = draw(st.sampled_from([None, "int", "float"]))
    weights = None
    if kind == "int":
        weights = np.array(draw(st.lists(st.integers(-10**9, 10**9), min_size=m, max_size=m)), dtype=np.int64)
    elif kind == "float":
        finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
        weights = np.array(draw(st.lists(finite, min_size=m, max_size=m)), dtype=np.float64)
    return Graph.from_edges(draw(ids), draw(ids), n, weights)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graphs(), st.sampled_from(["g.txt", "g.txt.gz", "g.mtx", "g.mtx.gz"]))
def test_write_then_read_gives_the_same_graph(tmp_path, graph, name):
    path = tmp_path / name
    write_graph(graph, path)
    back = read_graph(path, **RAW)
    assert back.num_vertices == graph.num_vertices
    np.testing.assert_array_equal(back.offsets, graph.offsets)
    np.testing.assert_array_equal(back.targets, graph.targets)
    if graph.weights is None:
        assert back.weights is None
    elif graph.num_edges == 0 and ".txt" in name:
        assert back.weights is None  # an empty edge list has no weight column to find
    else:
        assert back.weights.dtype.kind == graph.weights.dtype.kind
        np.testing.assert_array_equal(back.weights, graph.weights)


def test_write_unknown_format(tmp_path):
    with pytest.raises(SpecError, match="unknown output format 'gml'"):
        write_graph(Graph.from_edges([0], [1]), tmp_path / "g.gml", fmt="gml")


def test_relabel_by_appearance_from_a_file(tmp_path):
    g = read_graph(write(tmp_path, "g.graph", "44 929\n929 5\n5 44\n"), relabel="appearance")
    assert g.original_ids.tolist() == [44, 929, 5]
    assert pairs(g) == [(0, 1), (1, 2), (2, 0)]
    mtx = read_graph(write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n9 9 2\n9 4\n4 1\n"),
                     relabel="appearance")
    assert mtx.num_vertices == 3 and mtx.original_ids.tolist() == [9, 4, 1]
