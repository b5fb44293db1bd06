"""The host-side loader: writes, capacity errors, state decoding, the binary load file."""

import dataclasses

import numpy as np
import pytest

from gravfm.algorithms import BFS, WCC
from gravfm.errors import ConfigError
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import SystemConfig
from gravfm.hw.protocol import LOAD_MAGIC, HostMem
from gravfm.partition import partition, round_robin
from gravfm.sim.loader import build_load


def plan_for(algorithm, name, pes, **config):
    graph = algorithm.prepare(tiny_graph(name), algorithm.params())
    parts = partition(graph, 1, pes, method="round_robin")
    config = SystemConfig.of(algorithm=algorithm, pes_per_fpga=pes, **config)
    return graph, parts, config, build_load(algorithm, graph, parts, config)


def test_writes_cover_registers_states_and_every_edge():
    graph, parts, config, plan = plan_for(WCC, "grid", 3, local_bits=3, edges_per_pe=32)
    registers = plan.mem == HostMem.REGISTERS
    assert sorted(plan.data[registers].tolist()) == sorted(parts.vertices_per_pe.tolist())
    assert (plan.mem == HostMem.VERTEX).sum() == graph.num_vertices
    assert (plan.mem == HostMem.EDGES).sum() == graph.num_edges
    # Index entries written = senders with at least one edge on that PE; lengths add up to E.
    index = plan.mem == HostMem.EDGE_INDEX
    lengths = plan.data[index] >> np.uint64(config.pe.edge_addr_bits)
    assert int(lengths.sum()) == graph.num_edges


def test_decoding_the_initial_states_gives_them_back():
    for algorithm, params in ((WCC, {}), (BFS, {"root": 4})):
        graph = algorithm.prepare(tiny_graph("binary_tree"), params)
        parts = partition(graph, 1, 3, method="greedy")
        config = SystemConfig.of(algorithm=algorithm, pes_per_fpga=3, local_bits=3, edges_per_pe=32)
        plan = build_load(algorithm, graph, parts, config, params)
        words = [[int(w) for w in plan.data[(plan.pe == g) & (plan.mem == HostMem.VERTEX)]]
                 for g in range(3)]
        decoded = plan.decode_states(words)
        initial = algorithm.initial_state_arrays(graph, algorithm.params(params))
        for name in algorithm.vertex:
            assert (decoded[name] == initial[name]).all(), name


def test_too_many_vertices_names_pe_and_excess():
    graph = tiny_graph("grid")  # 16 vertices
    parts = round_robin(graph, 1, 2)
    config = SystemConfig.of(algorithm=WCC, pes_per_fpga=2, local_bits=2, edges_per_pe=64)
    with pytest.raises(ConfigError, match=r"PE 0 gets 8 vertices but holds at most 4 .*: 4 too many"):
        build_load(WCC, graph, parts, config)


def test_too_many_edges_names_pe_and_excess():
    graph = WCC.prepare(tiny_graph("complete"), {})  # 5 vertices, 20 edges
    parts = round_robin(graph, 1, 1)
    config = SystemConfig.of(algorithm=WCC, pes_per_fpga=1, local_bits=3, edges_per_pe=15)
    with pytest.raises(ConfigError, match=r"PE 0 gets 20 edges but holds at most 15 .*: 5 too many"):
        build_load(WCC, graph, parts, config)


def test_partition_must_match_the_system():
    graph = tiny_graph("grid")
    config = SystemConfig.of(algorithm=WCC, pes_per_fpga=2, local_bits=4)
    with pytest.raises(ConfigError, match="partition has 3 PEs but the system has 2"):
        build_load(WCC, graph, round_robin(graph, 1, 3), config)


def test_bad_parameter_is_reported():
    graph = tiny_graph("grid")
    config = SystemConfig.of(algorithm=BFS, pes_per_fpga=1, local_bits=4, edges_per_pe=64)
    with pytest.raises(ConfigError, match="root 99 is out of range"):
        build_load(BFS, graph, round_robin(graph, 1, 1), config, {"root": 99})


def test_load_file_layout(tmp_path):
    graph, parts, config, plan = plan_for(WCC, "path", 2, local_bits=3, edges_per_pe=16)
    path = tmp_path / "load.bin"
    plan.write_load_file(path)
    raw = path.read_bytes()
    assert raw[:8] == LOAD_MAGIC
    words, zero = np.frombuffer(raw[8:16], dtype="<u4")
    count = int(np.frombuffer(raw[16:24], dtype="<u8")[0])
    assert (words, zero, count) == (-(-plan.data_bits // 32), 0, len(plan))
    records = np.frombuffer(raw[24:], dtype="<u4").reshape(count, 3 + words)
    assert (records[:, 0] == plan.pe).all() and (records[:, 1] == plan.mem).all()
    assert (records[:, 2] == plan.addr).all() and (records[:, 3] == plan.data).all()


def test_round0_apply_list_for_sparse_algorithms():
    """BFS names its root as the only vertex round 0 must apply: register 1 and memory 5."""
    graph = tiny_graph("grid")
    parts = round_robin(graph, 1, 2)
    config = SystemConfig.of(algorithm=BFS, pes_per_fpga=2, local_bits=3, edges_per_pe=64)
    plan = build_load(BFS, graph, parts, config, {"root": 5})
    listed = plan.mem == HostMem.APPLY_LIST
    assert listed.sum() == 1
    assert plan.pe[listed][0] == parts.pe_of_vertex[5]
    assert plan.data[listed][0] == parts.local_index[5]
    flag = (plan.mem == HostMem.REGISTERS) & (plan.addr == 1)
    assert flag.sum() == 2 and (plan.data[flag] == 1).all()
    # WCC names no initially active vertices: round 0 is a full pass, nothing listed.
    wcc_plan = build_load(WCC, WCC.prepare(graph, {}), parts, dataclasses.replace(config, algorithm=WCC))
    assert not (wcc_plan.mem == HostMem.APPLY_LIST).any()
