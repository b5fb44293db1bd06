"""Algorithm parameters: named defaults, overrides, and the entry point from hardware layouts."""

import pytest

from gravfm.errors import ConfigError, SpecError
from gravfm.model import (
    AlgorithmParams,
    algorithm_params,
    builtin_algorithm_params,
    params_for_algorithm,
    params_from_layouts,
)


def test_named_defaults_exist():
    assert {"bfs", "wcc", "pagerank", "sssp"} <= set(builtin_algorithm_params())
    wcc = algorithm_params("wcc")
    assert (wcc.m_vertex, wcc.m_update, wcc.m_message, wcc.m_edge) == (33, 64, 96, 32)


@pytest.mark.parametrize("name, layouts", [
    ("wcc", {"vertex": {"label": "vertexid", "active": 1}, "update": {"label": "vertexid"},
             "message": {"label": "vertexid"}, "edge": {}}),
    ("bfs", {"vertex": {"parent": "vertexid", "visited": 1, "active": 1}, "update": {}, "message": {}, "edge": {}}),
    ("pagerank", {"vertex": {"sum": 32, "rank": 32, "outdegree": "vertexid"}, "update": {"weight": 32},
                  "message": {"weight": 32}, "edge": {}}),
    ("sssp", {"vertex": {"dist": 32, "parent": "vertexid", "active": 1}, "update": {"dist": 32},
              "message": {"dist": 32}, "edge": {"weight": 32}}),
])
def test_defaults_follow_the_layout_rule(name, layouts):
    """The data file's numbers are what params_from_layouts gives for the layouts it states."""
    default = algorithm_params(name)
    derived = params_from_layouts(name, vertexid_bits=32, kernel_latency_cycles=default.kernel_latency_cycles,
                                  **layouts)
    assert derived == default


def test_overrides_replace_single_fields():
    params = algorithm_params("bfs", m_update=128, m_message=None)
    assert params.m_update == 128
    assert params.m_message == algorithm_params("bfs").m_message


def test_unknown_algorithm_needs_all_sizes():
    with pytest.raises(SpecError, match="no default model parameters for algorithm 'mine'.*m_edge"):
        algorithm_params("mine", m_vertex=8, m_update=16, m_message=24)
    params = algorithm_params("mine", m_vertex=8, m_update=16, m_message=24, m_edge=12)
    assert params == AlgorithmParams("mine", 8, 16, 24, 12)


def test_unknown_override_is_refused():
    with pytest.raises(SpecError, match="unknown algorithm parameter 'm_updates'"):
        algorithm_params("wcc", m_updates=3)


def test_bad_sizes_are_refused():
    with pytest.raises(ConfigError, match="m_edge must be a positive number of bits"):
        algorithm_params("wcc", m_edge=0)
    with pytest.raises(ConfigError, match="width 'wide'"):
        params_from_layouts("x", vertex={"a": "wide"}, update={}, message={})


def test_layouts_with_other_vertexid_width():
    params = params_from_layouts("x", vertex={"label": "vertexid"}, update={"label": "vertexid"},
                                 message={"label": "vertexid", "hops": 3}, edge=None, vertexid_bits=20)
    assert (params.m_vertex, params.m_update, params.m_message, params.m_edge) == (20, 40, 63, 20)


def test_defaults_agree_with_the_registered_algorithms():
    """The data file's sizes are those of the hardware layouts of every registered algorithm."""
    algorithms = pytest.importorskip("gravfm.algorithms")
    shared = sorted(set(algorithms.REGISTRY) & set(builtin_algorithm_params()))
    assert shared, "no registered algorithm has model defaults"
    for name in shared:
        default = algorithm_params(name)
        derived = params_for_algorithm(algorithms.REGISTRY[name], vertexid_bits=32,
                                       kernel_latency_cycles=default.kernel_latency_cycles)
        assert derived == default, name


def test_params_for_algorithm_reads_the_layouts():
    class Custom:
        name = "custom"
        vertex = {"a": 7, "b": "vertexid"}
        update = {"u": 5}
        message = {"m": 6}
        edge = {"w": 9}

    params = params_for_algorithm(Custom(), vertexid_bits=16)
    assert (params.name, params.m_vertex, params.m_update, params.m_message, params.m_edge) == \
        ("custom", 23, 21, 38, 25)
