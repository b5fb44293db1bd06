"""The model's limits inside an FPGA beyond the paper: GraVF-M's update intake (every PE takes
every update reaching its FPGA), the hybrid architecture (one scatter unit per update, an on-chip
message network), and the choice between GraVF-M, GraVF and the hybrid (CLI included)."""

import dataclasses
import json

import pytest

from gravfm.architectures import GRAVF, GRAVFM, HYBRID
from gravfm.cli import main
from gravfm.model import choose_architecture, intake_limit, load_platform, message_network_limit, predict
from gravfm.model.limits import link_end_limit

RMAT18 = (2**18, 16 * 2**18)          # RMAT scale 18, edge factor 16
PAPER = (2**20, 32 * 2**20)           # the paper's social graphs, edge factor 32
PAPER_PEAK = {"wcc": 5791, "bfs": 5493, "pagerank": 4623}
F_U280, F_AC510 = 250e6, 187.5e6


def test_intake_limit_by_hand():
    # GraVF-M: lanes f degree n p / (p (1 + fanout)); without the filter lanes f degree, any n and p
    assert intake_limit(4, 9, 1e8, 32.0, arch=GRAVFM.name, lanes=1) == pytest.approx(1e8 * 32)
    assert intake_limit(1, 64, 1e8, 16.0, arch=GRAVFM.name, lanes=2) == pytest.approx(2 * 1e8 * 16)
    # the filter: an update reaches its own FPGA and fanout = 1 others of 4
    assert intake_limit(4, 9, 1e8, 32.0, arch=GRAVFM.name, lanes=1, fanout=1.0) == pytest.approx(1e8 * 32 * 4 / 2)
    # the hybrid: one scatter unit of p takes each update: p times GraVF-M's
    assert intake_limit(4, 64, 1e8, 16.0, arch=HYBRID.name, lanes=1) == pytest.approx(64 * 1e8 * 16)
    assert intake_limit(4, 9, 1e8, 32.0, arch=GRAVF.name, lanes=1) == float("inf")
    assert message_network_limit(4, 64, 1e8, 0.9) == pytest.approx(0.9 * 4 * 64 * 1e8)


def test_link_end_limit_by_hand():
    # f degree n: each of an FPGA's n - 1 peer streams carries all its updates, one a cycle
    assert link_end_limit(4, 1e8, 32.0, arch=GRAVFM.name) == pytest.approx(1e8 * 32 * 4)
    assert link_end_limit(4, 1e8, 32.0, arch=HYBRID.name) == pytest.approx(1e8 * 32 * 4)
    # the filter sends an update to 1.5 of the 3 peers: each stream carries half of them
    assert link_end_limit(4, 1e8, 32.0, arch=HYBRID.name, fanout=1.5) == pytest.approx(1e8 * 32 * 4 * 3 / 1.5)
    assert link_end_limit(2, 1e8, 16.0, arch=HYBRID.name, items_per_cycle=2) == pytest.approx(2 * 1e8 * 16 * 2)
    # no links, or GraVF's message streams (not modelled): no limit
    assert link_end_limit(1, 1e8, 32.0, arch=HYBRID.name) == float("inf")
    assert link_end_limit(4, 1e8, 32.0, arch=GRAVF.name) == float("inf")


def test_gravfm_with_64_pes_per_fpga_is_intake_bound():
    one = predict("u280", "wcc", *RMAT18, fpgas=1, pes=64, arch=GRAVFM.name)
    assert one.bottleneck == "L_intake" and one.details["update_lanes"] == 1      # edges off chip: one lane
    assert one.t_sys == pytest.approx(F_U280 * 16)                                # 16 edges per cycle
    assert one.limits["L_PE"] > 3.5 * one.t_sys
    four = predict("u280x4", "wcc", *RMAT18, fpgas=4, pes=64, arch=GRAVFM.name)
    assert four.bottleneck == "L_intake" and four.t_sys == pytest.approx(one.t_sys)  # more FPGAs: no gain
    # on-chip edges give two lanes: twice the intake, still far below L_PE
    platform = load_platform("u280")
    onchip = dataclasses.replace(platform, memory=dataclasses.replace(platform.memory, edge_storage="onchip"))
    two = predict(onchip, "wcc", *RMAT18, fpgas=1, pes=64, arch=GRAVFM.name)
    assert two.details["update_lanes"] == 2 and two.limits["L_intake"] == pytest.approx(2 * F_U280 * 16)


def test_intake_at_the_papers_configurations():
    """One FPGA of 9 PEs never reaches its intake at degree 32, nor PageRank on 4; WCC and BFS on
    4 x 9 PEs meet it (6000 MTEPS: 187.5 MHz x 32 edges per cycle, one update per PE per cycle,
    below L_PE's 6428.6 and 6136.4) and stay above the paper's measured peaks; two lanes (edges
    on chip) or the neighbour filter's fan-out lift it above L_PE."""
    for algorithm in PAPER_PEAK:
        assert predict("ac510x4", algorithm, *PAPER, fpgas=1, pes=9).bottleneck == "L_PE"
    assert predict("ac510x4", "pagerank", *PAPER, fpgas=4, pes=9).bottleneck == "L_PE"
    for algorithm in ("wcc", "bfs"):
        paper = predict("ac510x4", algorithm, *PAPER, fpgas=4, pes=9)
        assert paper.bottleneck == "L_intake" and paper.t_sys_mteps == pytest.approx(6000.0)
        assert PAPER_PEAK[algorithm] < paper.t_sys_mteps
        assert predict("ac510x4", algorithm, *PAPER, fpgas=4, pes=9, update_lanes=2).bottleneck == "L_PE"
        filtered = predict("ac510x4", algorithm, *PAPER, fpgas=4, pes=9, update_fanout=2.0)
        assert filtered.limits["L_intake"] == pytest.approx(F_AC510 * 32 * 4 / 3) and filtered.bottleneck == "L_PE"


def test_the_hybrid_is_not_intake_bound_at_64_pes():
    for platform, fpgas in (("u280", 1), ("u280x4", 4)):
        hybrid = predict(platform, "wcc", *RMAT18, fpgas=fpgas, pes=64, arch=HYBRID.name)
        assert hybrid.limits["L_intake"] == pytest.approx(64 * F_U280 * 16)     # p times GraVF-M's
        assert hybrid.limits["L_msgnet"] == pytest.approx(0.9 * fpgas * 64 * F_U280)  # 0.9 message per PE per cycle
        assert not any("hardware is not built yet" in note for note in hybrid.notes)   # it is built
        # one update per cycle per lane, two lanes per peer at 64 PEs: 2 f degree n edges per second
        assert hybrid.limits.get("L_linkend", float("inf")) == pytest.approx(
            2 * F_U280 * 16 * 4 if fpgas == 4 else float("inf"))
        assert hybrid.bottleneck == ("L_msgnet" if fpgas == 1 else "L_linkend")
    # on the links the hybrid is GraVF-M: the same L_if and L_net
    gravfm = predict("u280x4", "wcc", *RMAT18, fpgas=4, pes=64, arch=GRAVFM.name)
    assert hybrid.limits["L_if"] == gravfm.limits["L_if"] and hybrid.limits["L_net"] == gravfm.limits["L_net"]


def test_message_network_only_where_the_platform_states_it():
    # GraVF's messages cross the same kind of network on the U280 platform ...
    assert predict("u280", "wcc", *RMAT18, fpgas=1, pes=64, arch=GRAVF.name).bottleneck == "L_msgnet"
    # ... and the paper's platforms state none: GraVF's predictions there are the paper's
    gravf = predict("ac510x4", "wcc", *PAPER, fpgas=4, pes=9, arch=GRAVF.name)
    assert set(gravf.limits) == {"L_PE", "L_mem", "L_if", "L_net"}
    hybrid = predict("ac510x4", "wcc", *PAPER, fpgas=4, pes=9, arch=HYBRID.name)
    # built now, the hybrid is modelled there as GraVF is: no L_msgnet, no note (ideal network)
    assert "L_msgnet" not in hybrid.limits and not any("taken as ideal" in note for note in hybrid.notes)


def test_choice_between_the_three():
    four = choose_architecture("u280x4", "wcc", *RMAT18, pes=64)
    assert list(four.predictions) == [GRAVFM.name, GRAVF.name, HYBRID.name] and not four.left_out
    assert four.best == HYBRID.name and four.best_prediction.fpgas == 4
    assert four.predictions[GRAVFM.name].bottleneck == "L_intake"
    # one FPGA: the hybrid is GraVF with its edges split by source; the first of equals is chosen
    one = choose_architecture("u280", "wcc", *RMAT18, fpgas=1, pes=64)
    assert one.predictions[GRAVF.name].t_sys == pytest.approx(one.predictions[HYBRID.name].t_sys)
    assert one.best == GRAVF.name
    data = json.loads(json.dumps(one.to_dict()))
    assert data["kind"] == "prediction" and data["architectures"][HYBRID.name]["built"] is True
    # an architecture the options do not fit is left out with its reason
    lanes = choose_architecture("ac510x4", "wcc", *PAPER, fpgas=4, pes=9, update_lanes=2)
    assert list(lanes.left_out) == [HYBRID.name] and "update_lanes must be 1 .. 1" in lanes.left_out[HYBRID.name]


def test_cli_chooses_and_prints_every_architecture(capsys, tmp_path):
    graph = ["--vertices", str(RMAT18[0]), "--edges", str(RMAT18[1])]
    path = tmp_path / "choice.json"
    assert main(["model", "--platform", "u280x4", *graph, "--pes", "64", "--json", str(path)]) == 0
    text, document = capsys.readouterr().out, json.loads(path.read_text())
    assert text.startswith("PREDICTION of the analytical performance model (not a measurement)")
    assert "PREDICTED per architecture" in text
    for arch, bottleneck in ((GRAVFM.name, "L_intake"), (GRAVF.name, "L_msgnet"), (HYBRID.name, "L_linkend")):
        assert any(line.split()[:1] == [arch] and bottleneck in line for line in text.splitlines())
    assert "32000.0   L_linkend   <- best" in text and "hardware not built yet" not in text   # two link lanes
    assert "predicted best architecture: hybrid" in text
    assert document["prediction"]["arch"] == HYBRID.name and document["architectures"]["best"] == HYBRID.name


def test_cli_arch_hybrid(capsys):
    assert main(["model", "--platform", "u280", "--arch", "hybrid", "--vertices", str(RMAT18[0]), "--edges",
                 str(RMAT18[1]), "--fpgas", "1", "--pes", "64"]) == 0
    out = capsys.readouterr().out
    assert "arch       hybrid (update broadcast between FPGAs" in out
    assert "predicted T_sys = 14400.0 MTEPS (bottleneck: L_msgnet)" in out
    assert "PREDICTED per architecture" not in out


def test_run_refuses_a_hybrid_of_three_pes_in_one_line(capsys):
    assert main(["run", "wcc", "--graph", "tiny:path4", "--arch", "hybrid", "--pes", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err == ("gravfm: error: --pes 3: the hybrid architecture needs a power of two PEs per FPGA (its "
                   "message network routes by the PE bits)")
