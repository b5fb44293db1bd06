"""Every registered algorithm through the same checks, and the kernel-interface errors."""

import dataclasses

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gravfm.algorithms import REGISTRY, WCC, Algorithm, get_algorithm
from gravfm.errors import ConfigError
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import FpgaTop, KernelLayouts, SystemConfig, build_kernels
from gravfm.hw.config import NetworkConfig, PeConfig
from conftest import check_run, run_flow
from gravfm.hw.unused import silence_unused


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_registered_algorithm_is_complete(name):
    algorithm = get_algorithm(name)
    assert algorithm.name == name
    config = SystemConfig.of(algorithm=algorithm, pes_per_fpga=2, local_bits=3, edges_per_pe=16)
    layouts = KernelLayouts(algorithm, config)
    kernels = build_kernels(algorithm, layouts)
    assert set(kernels) == {"gather", "apply", "scatter"}
    graph = algorithm.prepare(tiny_graph("two_components"), algorithm.params())
    state = algorithm.initial_state_arrays(graph, algorithm.params())
    assert set(state) == set(algorithm.vertex)
    result = algorithm.reference(graph, algorithm.params())
    assert len(result.messages_per_superstep) == result.supersteps
    assert result.messages_per_superstep[-1] == 0


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_registered_algorithm_runs_in_hardware(name):
    algorithm = get_algorithm(name)
    check_run(run_flow(algorithm, tiny_graph("grid"), pes=2))


def test_check_rejects_a_wrong_answer():
    graph = WCC.prepare(tiny_graph("two_components"), {})
    reference = WCC.reference(graph, {})
    wrong = {"label": np.arange(graph.num_vertices), "active": np.zeros(graph.num_vertices)}
    ok, detail = WCC.check(graph, {}, wrong, reference)
    assert not ok and "differ" in detail


def test_unknown_algorithm_and_parameter():
    with pytest.raises(ConfigError, match="unknown algorithm 'pr'.*bfs, pagerank, sssp, wcc"):
        get_algorithm("pr")
    with pytest.raises(ConfigError, match="has no parameter 'root'"):
        WCC.params({"root": 3})


@pytest.mark.parametrize("change, message", [
    ({"vertex": {}}, "vertex layout has no field"),
    ({"update": {"x": 0}}, "update field 'x' has width 0"),
    ({"message": {"2x": 3}}, "message field name '2x'"),
    ({"vertex": {"label": "vertexsize"}}, "vertex field 'label' has width 'vertexsize'"),
    ({"edge": {"weight": 8}}, "needs edge_data"),
    ({"vertexid_fields": ("parent",)}, "vertexid field 'parent'"),
])
def test_bad_algorithm_definitions(change, message):
    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(WCC, **change)


class _WrongGather(wiring.Component):
    """A gather kernel built for another layout (for the error tests)."""

    def __init__(self, members):
        super().__init__(members)
        silence_unused(self)  # rejected before elaboration, by design

    def elaborate(self, platform):
        return Module()


def _gather_with(layouts, *, state_layout=None, drop_output=False, flip_input=False):
    from amaranth.lib import data
    out_layout = data.StructLayout({"nodeid": layouts.gather_out["nodeid"].shape,
                                    "state": state_layout or layouts.vertex})
    members = {"i": (Out if flip_input else In)(stream.Signature(layouts.gather_in))}
    if not drop_output:
        members["o"] = Out(stream.Signature(out_layout))
    return _WrongGather(members)


@pytest.mark.parametrize("kwargs, message", [
    ({"state_layout": "narrow"}, r"gather kernel port 'o': field 'state.label' has width 4, expected 5"),
    ({"state_layout": "missing"}, r"gather kernel port 'o': field 'state.active' is missing"),
    ({"state_layout": "extra"}, r"gather kernel port 'o': field 'state.extra' is not part of the interface"),
    ({"drop_output": True}, r"gather kernel port 'o' is missing"),
    ({"flip_input": True}, r"gather kernel port 'i' has direction Out, expected In"),
])
def test_kernel_with_wrong_ports_is_rejected_when_the_system_is_built(kwargs, message):
    from amaranth.hdl import unsigned
    from amaranth.lib import data
    config = SystemConfig.of(algorithm=WCC, pes_per_fpga=1, local_bits=4, edges_per_pe=8)  # vertexid 5 bits
    states = {
        "narrow": data.StructLayout({"label": unsigned(4), "active": unsigned(1)}),
        "missing": data.StructLayout({"label": unsigned(5)}),
        "extra": data.StructLayout({"label": unsigned(5), "active": unsigned(1), "extra": unsigned(2)}),
    }
    if "state_layout" in kwargs:
        kwargs = {"state_layout": states[kwargs["state_layout"]]}
    broken = dataclasses.replace(WCC, gather=lambda lay: _gather_with(lay, **kwargs))
    with pytest.raises(ConfigError, match=message):
        FpgaTop(dataclasses.replace(config, algorithm=broken))


def test_factory_must_return_a_component():
    broken = dataclasses.replace(WCC, scatter=lambda layouts: object())
    with pytest.raises(ConfigError, match="scatter factory returned object"):
        FpgaTop(SystemConfig.of(algorithm=broken))


@pytest.mark.parametrize("field, value, message", [
    ("pes_per_fpga", 0, "SystemConfig.pes_per_fpga must be a positive integer, not 0"),
    ("local_bits", "4", "PeConfig.local_bits must be a positive integer, not '4'"),
    ("fpgas", 0, "SystemConfig.fpgas must be a positive integer, not 0"),
    ("max_rounds", 1 << 17, "PeConfig.max_rounds"),
    ("link_fifo_depth", 0, "NetworkConfig.link_fifo_depth must be a positive integer, not 0"),
    ("update_lanes", 3, "PeConfig.update_lanes must be one of"),
])
def test_bad_system_config(field, value, message):
    with pytest.raises(ConfigError, match=message):
        SystemConfig.of(algorithm=WCC, **{field: value})


def test_config_needs_an_algorithm():
    with pytest.raises(ConfigError, match="has no attribute"):
        SystemConfig.of(algorithm="wcc")


def test_algorithm_is_an_algorithm():
    assert all(isinstance(a, Algorithm) for a in REGISTRY.values())


def test_config_from_dict_rejects_unknown_keys():
    config = SystemConfig.from_dict({"pes_per_fpga": 3, "local_bits": 4}, algorithm=WCC)
    assert (config.total_pes, config.vertexid_bits, config.pe_bits) == (3, 6, 2)
    split = SystemConfig.of(WCC, arch="gravf", local_bits=4, hazard_slots=6, link_fifo_depth=9)
    assert (split.arch, split.pe, split.network) == ("gravf", PeConfig(local_bits=4, hazard_slots=6),
                                                     NetworkConfig(link_fifo_depth=9))
    assert hash(config) == hash(config)  # usable as a cache key
    with pytest.raises(ConfigError, match="unknown hardware configuration key 'pe_count'"):
        SystemConfig.from_dict({"pe_count": 3}, algorithm=WCC)
