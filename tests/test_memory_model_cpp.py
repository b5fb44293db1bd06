"""The C++ memory model (gravfm/sim/memory_model.h) against the Python one, cycle for cycle.

gravfm/sim/memory_model_tb.cpp drives the C++ model with random AXI read traffic on every port
(checking data, responses, ID order and AXI's stability rules itself) and writes a trace of every
port's inputs and outputs in every cycle; the trace's inputs are replayed through
:class:`gravfm.sim.memory_model.MemoryModel`, whose outputs must equal the trace's in every cycle,
and whose statistics must equal the C++ model's at the end. The bench is plain C++ (no RTL),
compiled with the C++ compiler Verilator's builds use and cached like them.
"""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, replace

import numpy as np
import pytest

from gravfm.sim.build_cache import BuildCache, build_key
from gravfm.sim.harness_inputs import cpp_sources
from gravfm.sim.memory_model import MemoryModel, PortOutputs
from gravfm.sim.memory_params import MemoryParams, memory_file

EXECUTABLE = "memory_model_tb"
SOURCES = ("splitmix.h", "memory_channels.h", "memory_model.h", "memory_harness.h", "memory_model_tb.cpp")
CXX_FLAGS = ("-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class Case:
    """One memory of the bench: parameters, ports, IDs per master and image size in words."""

    params: MemoryParams
    ports: int = 4
    ids: int = 3
    image_words: int = 2048


#: In the default suite: one of each kind of behaviour.
QUICK = {
    "banked": Case(MemoryParams(banks=8, bank_depth=4, latency=12)),
    "one_bank_narrow_jitter_reorder": Case(MemoryParams(banks=1, bank_depth=3, bytes_per_cycle=5.3, latency=7,
                                                        jitter=9, reorder=True, seed=7), ports=3),
    "wide_bandwidth_depth1_reorder": Case(MemoryParams(banks=16, bank_depth=1, bytes_per_cycle=40.0, latency=1,
                                                       jitter=3, reorder=True, seed=2**64 - 1), ids=4),
    "wide_words_slow": Case(MemoryParams(word_bytes=64, banks=4, bytes_per_cycle=6.5, latency=3), ports=2,
                            image_words=512),
    "byte_words_one_id": Case(MemoryParams(word_bytes=1, banks=3, bytes_per_cycle=1.5, jitter=2), ids=1),
    "stuck": Case(MemoryParams(stuck=True), ports=2),
    # Pseudo-channels: bursts cross channel ranges, out-of-image beats land in the last channel.
    "channels_banked_jitter_reorder": Case(MemoryParams(channels=4, channel_bytes=512 * 16, banks=2, bank_depth=3,
                                                        bytes_per_cycle=6.0, latency=9, jitter=4, reorder=True,
                                                        seed=11)),
    "channels_one_bank_narrow": Case(MemoryParams(channels=3, channel_bytes=700 * 16, banks=1, bank_depth=2,
                                                  bytes_per_cycle=3.3, latency=5), ports=5),
}

#: The rest (slow): more mixtures.
FULL = {
    **QUICK,
    "single_port": Case(MemoryParams(banks=2, bank_depth=8, latency=100, jitter=50), ports=1, ids=8),
    "many_ports_one_bank": Case(MemoryParams(banks=1, bank_depth=1, latency=1, bytes_per_cycle=16.0), ports=9),
    "fractional": Case(MemoryParams(banks=5, bytes_per_cycle=0.3, latency=2, reorder=True), ports=3),
    "tiny_image": Case(MemoryParams(banks=4, jitter=1), image_words=3),
    "many_channels": Case(MemoryParams(channels=32, channel_bytes=64 * 16, banks=1, bank_depth=1, latency=30,
                                       jitter=7), ports=6),
}


def build_bench(cache_dir):
    """Compile the bench (cached by its sources and the compiler); return the executable's path."""
    compiler = os.environ.get("CXX", "c++")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    sources = cpp_sources(*SOURCES)
    key = build_key({**sources, "flags": "\0".join(CXX_FLAGS), "compiler": version})

    def compile_into(folder):
        for name, text in sources.items():
            (folder / name).write_text(text)
        command = [compiler, *CXX_FLAGS, f"-I{folder}", str(folder / "memory_model_tb.cpp"), "-o",
                   str(folder / EXECUTABLE)]
        completed = subprocess.run(command, capture_output=True, text=True)
        assert completed.returncode == 0, (completed.stdout + completed.stderr)[-3000:]

    executable, _ = BuildCache(cache_dir).make("memory-tb", key, EXECUTABLE, compile_into)
    return executable


@pytest.fixture(scope="module")
def bench(build_cache):
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        pytest.skip("no C++ compiler")
    return build_bench(build_cache)


def run_bench(executable, case, folder, *, cycles, seed):
    """Run the bench on ``case``; return ``(image, per-port stats, RESULT entries, trace)``."""
    image = np.random.default_rng(seed).integers(0, 256, case.image_words * case.params.word_bytes, dtype=np.uint8)
    image.tofile(folder / "image.bin")
    (folder / "spec.txt").write_text(memory_file(case.params, case.ports, [folder / "image.bin"]))
    command = [str(executable), str(folder / "spec.txt"), str(cycles), str(seed), str(case.ids),
               str(folder / "trace.bin")]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    lines = (completed.stdout + completed.stderr).splitlines()
    assert completed.returncode == 0 and lines[-1] == f"OK {case.ports} ports, {cycles} cycles", "\n".join(lines[-5:])
    words = -(-case.params.word_bytes // 4)
    record = np.dtype([("inputs", "<u8", 7), ("outputs", "<u8", 5), ("rdata", "<u4", words)])
    trace = np.fromfile(folder / "trace.bin", dtype=record).reshape(cycles, case.ports)
    return image, [json.loads(line) for line in lines[:case.ports]], json.loads(lines[case.ports]), trace


def replay(case, image, trace, params=None):
    """Replay the trace's inputs through the Python model; return it and the first differing
    ``(cycle, port, python outputs, trace outputs)``, or None."""
    model = MemoryModel(params or case.params, image, case.ports)
    inputs, outputs = trace["inputs"].tolist(), trace["outputs"].tolist()
    rdata = [[sum(w << (32 * j) for j, w in enumerate(port)) for port in cycle] for cycle in trace["rdata"].tolist()]
    for cycle in range(len(inputs)):
        for k, out in enumerate(model.outputs()):
            arready, rvalid, rid, rresp, rlast = outputs[cycle][k]
            expected = PortOutputs(arready, rvalid, rdata[cycle][k], rid, rresp, rlast)
            if out != expected:
                return model, (cycle, k, out, expected)
        model.clock(inputs[cycle])
    return model, None


def check_identical(executable, name, case, folder, *, cycles, seed):
    """No difference in any cycle or statistic, and the traffic exercised what the case is about."""
    image, ports, stats, trace = run_bench(executable, case, folder, cycles=cycles, seed=seed)
    model, difference = replay(case, image, trace)
    assert difference is None, f"{name}: first difference (cycle, port, python, c++): {difference}"
    assert stats["memory"] == [model.stats()]
    first = model.first_error[1:] if model.errors else (None, None)
    assert stats["memory_errors"] == {"count": model.errors, "first_port": first[0], "first_address": first[1]}
    if not case.params.stuck:   # both kinds of error answered
        assert sum(port["slverr"] for port in ports) > 0 and sum(port["decerr"] for port in ports) > 0, ports
    for port in ports:
        assert port["refused"] > 0, (name, port)             # back-pressure reached the masters
        if case.params.stuck:
            assert port["delivered"] == 0 and port["requests"] > 0, (name, port)
            continue
        assert port["delivered"] > 50, (name, port)
        params = case.params
        if case.ids > 1 and (params.banks > 1 or params.channels > 1 or params.jitter or params.reorder):
            assert port["interleaved"] > 0, (name, port)     # IDs overtook each other


@pytest.mark.parametrize("name", sorted(QUICK))
def test_cpp_model_is_the_python_model(bench, name, tmp_path):
    check_identical(bench, name, QUICK[name], tmp_path, cycles=12_000, seed=1)


def test_replay_reports_a_difference(bench, tmp_path):
    """A model one cycle slower differs from the trace: the comparison is not vacuous."""
    case = QUICK["banked"]
    image, _, _, trace = run_bench(bench, case, tmp_path, cycles=3_000, seed=3)
    slower = MemoryParams(banks=8, bank_depth=4, latency=13)
    _, difference = replay(case, image, trace, params=slower)
    assert difference is not None
    cycle, _, python, cpp = difference
    assert 12 < cycle < 3_000 and cpp.rvalid and not python.rvalid


def test_replay_sees_the_channels(bench, tmp_path):
    """A channel trace replayed as one memory of the same figures differs: each channel's own
    credit and queues are in what the comparison checks."""
    case = QUICK["channels_one_bank_narrow"]
    image, _, _, trace = run_bench(bench, case, tmp_path, cycles=3_000, seed=3)
    _, difference = replay(case, image, trace, params=replace(case.params, channels=1))
    assert difference is not None


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("name", sorted(FULL))
def test_cpp_model_is_the_python_model_full(bench, name, seed, tmp_path):
    check_identical(bench, name, FULL[name], tmp_path, cycles=60_000, seed=seed)
