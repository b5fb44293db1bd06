"""The Python memory model (gravfm.sim.memory_model), rule by rule, and its parameters.

The C++ model is proven identical to it by tests/test_memory_model_cpp.py; here each rule of
memory_model.h's header is checked on directed traffic: bandwidth, latency, banks and the
round-robin, AXI ID order under reordering, responses, the stuck fault and registered outputs.
"""

from dataclasses import astuple, replace
from pathlib import Path

import numpy as np
import pytest

from gravfm.errors import ConfigError
from gravfm.sim.memory_model import RESP_DECERR, RESP_OKAY, RESP_SLVERR, MemoryModel, PortInputs, SplitMix64
from gravfm.sim.memory_params import MemoryLoad, MemoryParams, memory_file, memory_of_port

WORD = 16
IMAGE = np.arange(4096 * WORD, dtype=np.uint32).astype(np.uint8)   # byte A holds A % 256
IDLE = PortInputs(0, 0, 0, 0, 4, 1, 1)


def request(address, beats=1, arid=0, *, size=4, burst=1):
    """A valid AR request of ``beats`` words from byte ``address`` (rready high)."""
    return PortInputs(1, address, arid, beats - 1, size, burst, 1)


def run(model, requests, cycles, *, rready=lambda cycle, k: True):
    """Issue each port's ``requests`` back to back for ``cycles`` cycles.

    Returns
    -------
    accepted : list of list of int
        Per port, the cycle of each AR handshake.
    beats : list of list of tuple
        Per port, ``(cycle, PortOutputs)`` of each R handshake.
    """
    queues = [list(port) for port in requests]
    accepted = [[] for _ in queues]
    beats = [[] for _ in queues]
    for cycle in range(cycles):
        outputs = model.outputs()
        inputs = []
        for k, out in enumerate(outputs):
            ready = bool(rready(cycle, k))
            port = queues[k][0] if queues[k] else IDLE
            inputs.append(port._replace(rready=int(ready)))
            if port.arvalid and out.arready:
                accepted[k].append(cycle)
                queues[k].pop(0)
            if out.rvalid and ready:
                beats[k].append((cycle, out))
        model.clock(inputs)
    return accepted, beats


def word_at(address):
    return int.from_bytes(IMAGE[address:address + WORD].tobytes(), "little")


@pytest.mark.parametrize("bytes_per_cycle,ports", [(5.3, 1), (12.0, 1), (0.75, 2), (40.0, 4)])
def test_bandwidth_is_bytes_per_cycle(bytes_per_cycle, ports):
    params = MemoryParams(bytes_per_cycle=bytes_per_cycle, banks=16, bank_depth=8, latency=5)
    model = MemoryModel(params, IMAGE, ports)
    # Each port starts its bursts in another bank, so that the ports never queue behind each other.
    bursts = [[request(WORD * ((64 * n + 5 * k) % 4000), 16, arid=n % 4) for n in range(2000)] for k in range(ports)]
    cycles = 30_000 if bytes_per_cycle < 1 else 6_000
    _, beats = run(model, bursts, cycles)
    late = sum(1 for port in beats for cycle, _ in port if cycle >= 1000)   # past the first fill
    assert late / (cycles - 1000) == pytest.approx(bytes_per_cycle / WORD, rel=0.01)


@pytest.mark.parametrize("latency", [1, 5, 37])
def test_latency_is_exact_without_jitter(latency):
    model = MemoryModel(MemoryParams(latency=latency, bytes_per_cycle=16.0), IMAGE, 1)
    accepted, beats = run(model, [[request(0x40, 3)]], latency + 20)
    cycles = [cycle for cycle, _ in beats[0]]
    # AR in cycle c; dispatch one beat per cycle from c+1, service from c+2, rvalid latency later.
    assert cycles == [accepted[0][0] + 2 + latency + b for b in range(3)]
    assert [out.rdata for _, out in beats[0]] == [word_at(0x40 + WORD * b) for b in range(3)]
    assert [out.rlast for _, out in beats[0]] == [0, 0, 1]
    assert all(out.rresp == RESP_OKAY for _, out in beats[0])


def test_jitter_spreads_completions_within_its_bound():
    model = MemoryModel(MemoryParams(latency=4, jitter=6, banks=16, seed=9), IMAGE, 1)
    accepted, beats = run(model, [[request(WORD * 20 * n, 1, arid=n) for n in range(200)]], 3000)
    delays = [cycle - start for start, (cycle, _) in zip(accepted[0], beats[0])]
    assert min(delays) == 2 + 4 and max(delays) == 2 + 4 + 6
    assert len(beats[0]) == 200


def test_one_bank_serves_one_beat_per_cycle_and_ports_share_it_fairly():
    """Two ports on one bank: one beat per cycle in all, alternating ports (round-robin)."""
    model = MemoryModel(MemoryParams(banks=1, bank_depth=2, latency=3, bytes_per_cycle=64.0), IMAGE, 2)
    bursts = [[request(WORD * 4 * n, 4) for n in range(300)] for _ in range(2)]
    _, beats = run(model, bursts, 1200)
    counts = [sum(1 for cycle, _ in port if cycle >= 200) for port in beats]
    assert sum(counts) == pytest.approx(1000, abs=2) and abs(counts[0] - counts[1]) <= 1


def test_banks_serve_in_parallel():
    """Two ports reading different banks of a two-bank memory get a beat each every cycle."""
    model = MemoryModel(MemoryParams(banks=2, bank_depth=2, latency=3, bytes_per_cycle=64.0), IMAGE, 2)
    bursts = [[request(WORD * (2 * n + k), 1, arid=n % 2) for n in range(2000)] for k in range(2)]
    _, beats = run(model, bursts, 1000)
    # One slot per port: a one-beat request occupies it for two cycles (accept, then dispatch).
    assert [sum(1 for cycle, _ in port if cycle >= 100) for port in beats] == [450, 450]


#: Two channels of 2048 words each: IMAGE's two halves.
CHANNEL_BYTES = 2048 * WORD


def _channel_rates(params, channel_of_port, cycles=5000):
    """Beats per cycle each port receives (after the first fill), port k streaming bursts from
    channel ``channel_of_port[k]``, each port its own half of that channel's words."""
    model = MemoryModel(params, IMAGE, len(channel_of_port))
    bursts = [[request(c * CHANNEL_BYTES + WORD * (1024 * (k % 2) + (16 * n) % 1008), 16, arid=n % 4)
               for n in range(2000)] for k, c in enumerate(channel_of_port)]
    _, beats = run(model, bursts, cycles)
    return [sum(1 for cycle, _ in port if cycle >= 1000) / (cycles - 1000) for port in beats]


@pytest.mark.parametrize("bytes_per_cycle", [6.0, 11.5])
def test_each_channel_has_its_own_bandwidth(bytes_per_cycle):
    """Measured: two ports reading two channels get a channel's bandwidth each, twice what the
    same two ports get reading one channel, where they share it evenly; a one-channel memory
    of the same figures is the shared case."""
    params = MemoryParams(channels=2, channel_bytes=CHANNEL_BYTES, banks=4, bank_depth=8, latency=5,
                          bytes_per_cycle=bytes_per_cycle)
    one_channel = bytes_per_cycle / WORD
    apart, together = _channel_rates(params, [0, 1]), _channel_rates(params, [1, 1])
    assert apart == pytest.approx([one_channel] * 2, rel=0.01)
    assert sum(apart) == pytest.approx(2 * sum(together), rel=0.02)
    assert together[0] == pytest.approx(together[1], rel=0.02)
    assert _channel_rates(replace(params, channels=1), [0, 1]) == pytest.approx(together, rel=0.02)


def test_ports_sharing_a_channel_leave_another_channel_alone():
    """Two ports reading channel 0 share its bandwidth while the one reading channel 1 gets all of
    that one's (PEs 0 and 2 of three on two channels); a burst crossing into the next channel
    reads the right words."""
    params = MemoryParams(channels=2, channel_bytes=CHANNEL_BYTES, banks=1, bank_depth=2, latency=4,
                          bytes_per_cycle=4.0)
    first, alone, third = _channel_rates(params, [0, 1, 0])
    assert first + third == pytest.approx(4 / WORD, rel=0.01) and alone == pytest.approx(4 / WORD, rel=0.01)
    assert min(first, third) > 0.3 * 4 / WORD   # both served (the dispatch round-robin is not exactly fair)
    model = MemoryModel(replace(params, bytes_per_cycle=64.0), IMAGE, 1)
    _, beats = run(model, [[request(CHANNEL_BYTES - 2 * WORD, 4)]], 100)
    assert [out.rdata for _, out in beats[0]] == [word_at(CHANNEL_BYTES + WORD * b) for b in range(-2, 2)]


def test_same_id_order_is_kept_under_reorder():
    params = MemoryParams(reorder=True, jitter=12, banks=8, latency=2, seed=5)
    model = MemoryModel(params, IMAGE, 1)
    requests = [request(WORD * ((37 * n) % 4000), 1 + n % 4, arid=n % 3) for n in range(400)]
    _, beats = run(model, [requests], 6000, rready=lambda cycle, k: cycle % 3 != 0)
    delivered = [out for _, out in beats[0]]
    assert len(delivered) == sum(r.arlen + 1 for r in requests)
    for arid in range(3):
        expected = [word_at(r.araddr + WORD * b) for r in requests if r.arid == arid for b in range(r.arlen + 1)]
        assert [out.rdata for out in delivered if out.rid == arid] == expected
    ids = [out.rid for out in delivered]
    in_request_order = [r.arid for r in requests for _ in range(r.arlen + 1)]
    assert ids != in_request_order   # the IDs did overtake each other


def test_stuck_accepts_requests_and_never_answers():
    model = MemoryModel(MemoryParams(stuck=True, banks=2, bank_depth=2), IMAGE, 2)
    accepted, beats = run(model, [[request(WORD * n, 2) for n in range(50)]] * 2, 2000)
    assert beats == [[], []]
    assert 0 < len(accepted[0]) < 50 and not model.outputs()[0].arready   # accepted until the queues filled
    assert sum(model.outstanding) == 2 * sum(len(a) for a in accepted)


def test_bad_requests_answer_errors_with_zero_data():
    model = MemoryModel(MemoryParams(latency=2), IMAGE, 1)
    last_word = IMAGE.size - WORD
    requests = [request(last_word, 3, arid=1), request(0x41), request(0, size=3), request(0, burst=2)]
    _, beats = run(model, [requests], 200)
    got = [(out.rid, out.rresp, out.rdata, out.rlast) for _, out in beats[0]]
    assert got == [(1, RESP_OKAY, word_at(last_word), 0), (1, RESP_DECERR, 0, 0), (1, RESP_DECERR, 0, 1),
                   (0, RESP_SLVERR, 0, 1), (0, RESP_SLVERR, 0, 1), (0, RESP_SLVERR, 0, 1)]
    assert model.errors == 5
    assert model.first_error[1:] == (0, IMAGE.size)   # port 0, the first byte beyond the image


def test_outputs_are_registered():
    """outputs() is the state's: the same before and after inputs are presented, until clock()."""
    model = MemoryModel(MemoryParams(latency=1), IMAGE, 1)
    before = model.outputs()
    assert before[0].arready and not before[0].rvalid and model.outputs() == before
    model.clock([request(0)])
    assert not model.outputs()[0].arready   # the slot holds the request: visible one cycle later


def test_statistics():
    model = MemoryModel(MemoryParams(latency=1), IMAGE, 2)
    run(model, [[request(0, 4), request(64, 2)], [request(128, 8)]], 40, rready=lambda cycle, k: k == 0)
    assert model.stats() == {"requests": 3, "beats": 6, "outstanding": [0, 8]}


def test_splitmix64_is_the_reference_sequence():
    random = SplitMix64(0)
    assert [random.next() for _ in range(2)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]


def test_params_validation_names_the_field():
    for field, value in [("word_bytes", 12), ("word_bytes", 256), ("bytes_per_cycle", 0), ("latency", 0),
                         ("jitter", -1), ("banks", 0), ("bank_depth", 0), ("seed", -1), ("reorder", 1),
                         ("bytes_per_cycle", float("nan")), ("latency", True), ("channels", 0),
                         ("channel_bytes", -1)]:
        with pytest.raises(ConfigError, match=field):
            MemoryParams(**{field: value})
    for channel_bytes in (0, 24):   # two channels need a range of whole words
        with pytest.raises(ConfigError, match="channel_bytes"):
            MemoryParams(channels=2, channel_bytes=channel_bytes)


def test_params_fixed_point_and_description():
    assert MemoryParams(bytes_per_cycle=5.3).rate_fixed == 347341
    assert MemoryParams(bytes_per_cycle=1e-9).rate_fixed == 1
    params = MemoryParams(jitter=3, reorder=True)
    assert astuple(params.model_params()) == (16, 16 << 16, 20, 3, 8, 4, 1, 1, 0, 1, 0)
    assert params.describe() == "16 B words, 16 B/cycle, latency 20+0..3 cycles, 8 banks x 4, seed 1, reorder"
    hbm = MemoryParams(banks=1, channels=4, channel_bytes=4096)
    assert hbm.describe() == ("4 channels of 4096 B, 16 B words, 16 B/cycle each, latency 20 cycles, "
                              "1 banks x 4 each, seed 1")
    assert [hbm.channel_of(a) for a in (0, 4095, 4096, 3 * 4096, 1 << 40)] == [0, 0, 1, 3, 3]
    assert params.channel_of(1 << 40) == 0


def test_memory_file_and_load(tmp_path):
    params = MemoryParams(word_bytes=4, stuck=True)
    load = MemoryLoad(params, [np.zeros(8, np.uint8), np.arange(4, dtype=np.uint8)], ports_per_memory=3)
    spec = load.write(tmp_path)
    assert spec.read_text() == (f"params word_bytes=4 rate_fixed={16 << 16} latency=20 jitter=0 banks=8 bank_depth=4 "
                                f"seed=1 reorder=0 stuck=1 channels=1 channel_bytes=0\nports 3\n"
                                f"image 0 {tmp_path / 'memory0.bin'}\nimage 1 {tmp_path / 'memory1.bin'}\n")
    assert Path(tmp_path / "memory1.bin").read_bytes() == bytes([0, 1, 2, 3])
    with pytest.raises(ConfigError, match="multiple of word_bytes=4"):
        MemoryLoad(params, [np.zeros(6, np.uint8)], ports_per_memory=1)
    with pytest.raises(ConfigError, match="uint8"):
        MemoryLoad(params, [np.zeros(8, np.uint16)], ports_per_memory=1)
    with pytest.raises(ConfigError, match="path"):
        memory_file(params, 1, ["a\nb"])


def test_memory_of_port():
    # Per-FPGA simulation: one instance per FPGA with P ports each; a monolithic top: n * P ports.
    assert [memory_of_port(t, 2, mem_ports=4, ports_per_memory=4) for t in range(3)] == [0, 1, 2]
    assert [memory_of_port(0, i, mem_ports=12, ports_per_memory=4) for i in (0, 3, 4, 11)] == [0, 0, 1, 2]
