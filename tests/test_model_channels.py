"""HBM-class memory of independent pseudo-channels: the ``u280`` and ``u280x4`` platforms, the
loader's checks of ``[memory.channels]``, and the per-channel memory limit."""

import dataclasses
import math

import pytest

from gravfm.errors import ConfigError
from gravfm.model import ChannelSpec, Platform, channel_memory_bandwidth, load_platform, predict
from gravfm.model.platform import PLATFORM_DIR

U280 = PLATFORM_DIR / "u280.toml"
GIB = 2**30 * 8


def test_u280_loads_with_its_channels():
    platform = load_platform("u280")
    memory = platform.memory
    assert memory.channels == ChannelSpec(count=32, bandwidth_gib_s=6.69, peak_bandwidth_gib_s=13.39,
                                          latency_cycles=64, queue_depth=32)
    # 14.375 GB/s per pseudo-channel (UG1393) = 13.39 GiB/s; 32 of them = 460 GB/s
    assert memory.channels.peak_bandwidth_gib_s * 2**30 / 1e9 == pytest.approx(14.375, rel=1e-3)
    # the FPGA-wide figures follow from the channels, stated once
    assert memory.peak_bandwidth_gib_s == pytest.approx(32 * 13.39)
    assert memory.bandwidth_gib_s == pytest.approx(32 * 6.69)
    assert (memory.banks, memory.bank_depth, memory.latency_cycles) == (32, 32, 64)
    assert memory.capacity_mib == 8192 and memory.word_bits == 256
    assert platform.fpga.f_clk_mhz == 250.0 and "fpga.f_clk_mhz" in platform.estimated   # an assumption
    assert "ASSUMED 250 MHz" in platform.description
    assert platform.network.max_fpgas == 1


def test_u280x4_is_four_boards_on_a_switch():
    platform = load_platform("u280x4")
    network = platform.network
    assert network.max_fpgas == 4 and "switch" in platform.description
    # 2 ports x 100 Gbit/s x 1500/1538 (Ethernet framing; 64b/66b is below the 100G MAC rate)
    per_fpga = 2 * 100e9 * 1500 / 1538 / GIB
    for peers in (1, 2, 3):
        assert network.interface_gib_s(peers) == (pytest.approx(per_fpga, abs=0.01), False)
    assert network.total_bandwidth_gib_s == pytest.approx(4 * per_fpga, abs=0.02)
    assert "64b/66b" in platform.sources and "Clementi" in platform.sources
    assert platform.memory == load_platform("u280").memory


def test_round_trip_through_from_dict():
    platform = load_platform("u280")
    assert Platform.from_dict(dataclasses.asdict(platform)) == platform


def _variant(tmp_path, old, new):
    text = U280.read_text()
    assert old in text, old
    path = tmp_path / "hbm.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, message", [
    ("count = 32\n", "", r"hbm.toml \[memory.channels\]: missing key 'count'"),
    ("count = 32", "count = 0", "ChannelSpec.count must be a positive integer"),
    ("count = 32", "count = 32.5", r"\[memory.channels.count\]: expected an integer"),
    ("queue_depth = 32 ", "queue_dpeth = 32 ", r"unknown key 'queue_dpeth' \(did you mean 'queue_depth'\?\)"),
    ("bandwidth_gib_s = 6.69 ", "bandwidth_gib_s = 16.0 ", "ChannelSpec.bandwidth_gib_s .16.0. exceeds peak"),
    ("latency_cycles = 64 ", "latency_cycles = -1 ", "ChannelSpec.latency_cycles must be a positive integer"),
    ("peak_bandwidth_gib_s = 13.39", 'peak_bandwidth_gib_s = "fast"', r"peak_bandwidth_gib_s\]: expected a number"),
    # a figure of the whole memory stated again must agree with its channels
    ("word_bits = 256 ", "banks = 16\nword_bits = 256 ",
     r"hbm.toml \[memory\]: banks = 16 disagrees with \[memory.channels\] \(count = 32\)"),
    ("word_bits = 256 ", "bandwidth_gib_s = 100.0\nword_bits = 256 ", "bandwidth_gib_s = 100.0 disagrees"),
    ("message_network_efficiency = 0.9", "message_network_efficiency = 1.5",
     r"message_network_efficiency must be a number in \(0, 1\], not 1.5"),
])
def test_bad_channel_fields_are_refused_naming_file_and_field(tmp_path, old, new, message):
    with pytest.raises(ConfigError, match=message) as caught:
        load_platform(_variant(tmp_path, old, new))
    assert "\n" not in str(caught.value)


def test_a_restatement_that_agrees_is_accepted(tmp_path):
    platform = load_platform(_variant(tmp_path, "word_bits = 256 ", "banks = 32\nword_bits = 256 "))
    assert platform.memory.banks == 32


def test_channel_bandwidth_follows_the_busiest_channel():
    bandwidth = 32 * 8e9
    assert channel_memory_bandwidth(bandwidth, 64, 32) == pytest.approx(bandwidth)       # 2 PEs on each
    assert channel_memory_bandwidth(bandwidth, 32, 32) == pytest.approx(bandwidth)
    assert channel_memory_bandwidth(bandwidth, 8, 32) == pytest.approx(8 * 8e9)          # 8 channels used
    assert channel_memory_bandwidth(bandwidth, 48, 32) == pytest.approx(24 * 8e9)        # 2 PEs on the busiest


def test_prediction_reads_edges_per_channel():
    full = predict("u280", "wcc", 2**18, 2**22, fpgas=1, pes=64)
    assert (full.details["memory_channels"], full.details["pes_per_channel"]) == (32, 2)
    assert full.limits["L_mem"] == pytest.approx(32 * 6.69 * GIB / 32)                  # BW_mem / m_edge
    few = predict("u280", "wcc", 2**18, 2**22, fpgas=1, pes=8)
    assert few.limits["L_mem"] == pytest.approx(8 * 6.69 * GIB / 32)                    # 8 of 32 channels
    assert any("8 PEs on 32 memory channels" in note for note in few.notes)
    assert not any("memory channels" in note for note in full.notes)
    assert math.isfinite(full.details["L_in_flight_mteps"])
