"""Platform files: the built-in ones load with the paper's figures; bad files are refused by key."""

import dataclasses

import pytest

from gravfm.errors import ConfigError, SpecError
from gravfm.model import Platform, builtin_platforms, load_platform
from gravfm.model.platform import PLATFORM_DIR

AC510 = PLATFORM_DIR / "ac510x4.toml"


def test_builtin_platforms_load():
    names = builtin_platforms()
    assert {"ac510x4", "ulx3s85"} <= set(names)
    for name in names:
        platform = load_platform(name)
        assert platform.name == name
        assert "default" in platform.cpe


def test_ac510x4_has_the_paper_figures():
    platform = load_platform("ac510x4")
    assert platform.fpga.f_clk_mhz == 187.5
    assert platform.fpga.max_pes == 9
    assert platform.network.max_fpgas == 4
    assert platform.network.send_gib_s_by_peers == (2.79, 5.59, 5.85)
    assert platform.network.receive_gib_s_by_peers == (2.79, 5.59, 5.85)
    assert platform.cpe["wcc"] == 1.05 and platform.cpe["bfs"] == 1.10 and platform.cpe["pagerank"] == 1.42
    assert platform.memory.bandwidth_gib_s == 8.1 and platform.memory.peak_bandwidth_gib_s == 21.7
    assert platform.memory.edge_storage == "offchip"
    assert platform.memory.word_bits == 128
    assert platform.network.link.word_bits == 128
    assert platform.network.total_bandwidth_is_lower_bound


def test_units_are_binary_gigabytes_and_megahertz():
    platform = load_platform("ac510x4")
    assert platform.fpga.f_clk_hz == 187.5e6
    assert platform.memory.bandwidth_bits_per_s == 8.1 * 2**30 * 8
    assert platform.memory.capacity_bits == 4 * 2**30 * 8  # 4 GB HMC = 4 GiB
    assert platform.network.interface_bits_per_s(3) == 5.85 * 2**30 * 8
    # the stream limit of the paper: 128 bits at 200 MHz = 2.98 GiB/s, above the 2.79 measured for 1 peer
    assert platform.network.link.stream_bits_per_s / (2**30 * 8) == pytest.approx(2.98, abs=0.01)


def test_interface_bandwidth_by_peers_and_extrapolation():
    network = load_platform("ac510x4").network
    assert network.interface_gib_s(1) == (2.79, False)
    assert network.interface_gib_s(2) == (5.59, False)
    assert network.interface_gib_s(3) == (5.85, False)
    assert network.interface_gib_s(7) == (5.85, True)


def test_ecp5_board_marks_its_estimates():
    platform = load_platform("ulx3s85")
    assert "LFE5U-85F" in platform.fpga.part
    assert platform.memory.capacity_mib == 32.0
    # The clock is measured (nextpnr, 4-PE WCC top at speed grade 6), not estimated.
    assert "fpga.f_clk_mhz" not in platform.estimated
    assert "memory.bandwidth_gib_s" in platform.estimated


def _serwb_pair():
    from gravfm.board.serwb import serwb_link
    from gravfm.board.sim import WIRE_LATENCY_CYCLES

    return serwb_link(28, wire_latency=WIRE_LATENCY_CYCLES)


def _lane_pair(board, rate="GT_LANE"):
    import gravfm.board.lanes as lanes
    from gravfm.board.boards import get_board

    board = get_board(board)
    return lanes.lane_link(28, sys_hz=board.sys_clk_hz, design_hz=board.design_clk_hz, rate=getattr(lanes, rate))


@pytest.mark.parametrize("name, link", [
    ("ecpix5x2", _serwb_pair),
    ("kcu105x2", lambda: _lane_pair("kcu105")),
    ("u280x2", lambda: _lane_pair("alveo-u280")),
    ("ecpix5x2-sata", lambda: _lane_pair("ecpix5", "ECP5_LANE")),
])
def test_board_pair_platforms_state_their_links_figures(name, link):
    """A board pair's link figures are what its link's own plan says (a 28-bit WCC/BFS item, the
    check's fields, the packet around them), at the design clock the board asks of its PLL."""
    platform, link = load_platform(name), link()
    frame_bits_per_cycle = platform.network.send_gib_s_by_peers[0] * 2**30 * 8 / platform.fpga.f_clk_hz
    assert frame_bits_per_cycle == pytest.approx(link.bits_per_cycle, rel=1e-3)
    assert platform.network.receive_gib_s_by_peers == platform.network.send_gib_s_by_peers
    assert platform.network.link.latency_cycles == link.latency_cycles
    assert platform.network.max_fpgas == 2


def test_hierarchical_platform():
    hierarchy = load_platform("ac510x8-2nodes").network.hierarchy
    assert hierarchy is not None and hierarchy.fpgas_per_node == 4


def test_user_platform_file_by_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(AC510.read_text().replace('name = "ac510x4"', 'name = "mine"'))
    assert load_platform(str(path)).name == "mine"
    assert load_platform(path).name == "mine"


def _write_variant(tmp_path, old, new):
    text = AC510.read_text()
    assert old in text
    path = tmp_path / "variant.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, key", [
    ("f_clk_mhz = 187.5\n", "f_clk_mhz"),
    ("max_fpgas = 4\n", "max_fpgas"),
    ("word_bits = 128\nclock_mhz", "word_bits"),
    ('name = "ac510x4"\n', "name"),
    ("latency_cycles = 190\n", "latency_cycles"),           # the memory's: no silent 100-cycle default
    ("latency_jitter_cycles = 32\n", "latency_jitter_cycles"),
])
def test_missing_key_is_named(tmp_path, old, key):
    replacement = "clock_mhz" if old.endswith("clock_mhz") else ""
    path = _write_variant(tmp_path, old, replacement)
    with pytest.raises(ConfigError, match=f"missing key '{key}'"):
        load_platform(path)


@pytest.mark.parametrize("old, new, key", [
    ("f_clk_mhz = 187.5", "f_clk_mzh = 187.5", "f_clk_mzh"),
    ("[network.link]", "[network.lnik]", "lnik"),
    ("bandwidth_gib_s = 8.1", "bandwith_gib_s = 8.1", "bandwith_gib_s"),
])
def test_misspelled_key_is_named(tmp_path, old, new, key):
    with pytest.raises(ConfigError, match=f"unknown key '{key}'"):
        load_platform(_write_variant(tmp_path, old, new))


def test_misspelled_key_gets_a_suggestion(tmp_path):
    with pytest.raises(ConfigError, match="did you mean 'f_clk_mhz'"):
        load_platform(_write_variant(tmp_path, "f_clk_mhz = 187.5", "f_clk_mzh = 187.5"))


@pytest.mark.parametrize("old, new, message", [
    ("f_clk_mhz = 187.5", 'f_clk_mhz = "fast"', r"\[fpga.f_clk_mhz\]: expected a number"),
    ("max_pes = 9", "max_pes = 9.5", r"\[fpga.max_pes\]: expected an integer"),
    ("max_pes = 9", "max_pes = 0", "max_pes must be a positive integer"),
    ('edge_storage = "offchip"', 'edge_storage = "dram"', "is not one of 'onchip', 'offchip'"),
    ("default = 1.10", "other = 1.10", "'default' entry"),
    ("wcc = 1.05", "wcc = 0.5", "cpe.wcc must be a number >= 1"),
    ("send_gib_s_by_peers = [2.79, 5.59, 5.85]", "send_gib_s_by_peers = []", "non-empty list"),
    ("bandwidth_gib_s = 8.1", "bandwidth_gib_s = 80.1", "exceeds peak"),
])
def test_bad_values_are_refused(tmp_path, old, new, message):
    with pytest.raises(ConfigError, match=message):
        load_platform(_write_variant(tmp_path, old, new))


def test_error_names_the_file(tmp_path):
    path = _write_variant(tmp_path, "f_clk_mhz = 187.5\n", "")
    with pytest.raises(ConfigError, match="variant.toml"):
        load_platform(path)


def test_invalid_toml_is_refused(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[fpga\nf_clk_mhz = ")
    with pytest.raises(ConfigError, match="broken.toml: not valid TOML"):
        load_platform(path)


def test_unknown_platform_name():
    with pytest.raises(SpecError, match="unknown platform 'ac510x5'.*ac510x4"):
        load_platform("ac510x5")
    with pytest.raises(SpecError, match="unknown platform"):
        load_platform("/no/such/file.toml")


def test_from_dict_directly():
    platform = load_platform("ac510x4")
    data = dataclasses.asdict(platform)
    assert Platform.from_dict(data) == platform
    del data["fpga"]["max_pes"]
    with pytest.raises(ConfigError, match=r"Platform \[fpga\]: missing key 'max_pes'"):
        Platform.from_dict(data)
