"""Every JSON document a ``gravfm`` subcommand writes carries ``schema_version`` and the same
``provenance`` (issue 35 item 4), and ``gravfm --version`` names the version."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gravfm
from gravfm.cli import main
from gravfm.provenance import SCHEMA_VERSION, git_state

USER_ALGORITHM = Path(__file__).parent.parent / "examples" / "hop_distance.py"
CHECKOUT = Path(gravfm.__file__).resolve().parent.parent


def _fake_synth(algorithm, **options):
    """What :func:`gravfm.synth.system_report.synth_system` returns, without running Yosys."""
    return {"description": "fake", "algorithm": algorithm.name, "pes": options["pes"], "fpgas": options["fpgas"],
            "fpga": {"seconds": 0, "luts": 1, "flip_flops": 1, "bram_blocks": 0, "dsps": 0, "fmax_mhz": None},
            "per_pe": {"luts": 1, "flip_flops": 1, "bram_blocks": 0},
            "capacity": {"vertices": 16, "edges": 64, "offchip_edges": False}, "fits": {}}


def _commands(tmp_path):
    """``(argv, path of the JSON it writes)`` for every subcommand that writes JSON."""
    out = tmp_path / "out.json"
    return {
        "graph info": (["graph", "info", "--graph", "tiny:grid", "--json", out], out),
        "partition": (["partition", "--graph", "tiny:grid", "--pes", "2", "--json", out], out),
        "model": (["model", "--graph", "tiny:grid", "--fpgas", "1", "--pes", "2", "--json", out], out),
        "run": (["run", "wcc", "--graph", "tiny:grid", "--backend", "amaranth", "--edge-memory", "onchip",
                 "--quiet", "--json", out], out),
        "synth": (["synth", "wcc", "--pes", "1", "--workdir", tmp_path / "synth", "--json", out], out),
        "reproduce": (["reproduce", "fig11", "--report-only", "--out", tmp_path / "rep"],
                      tmp_path / "rep" / "results.json"),
    }


@pytest.mark.parametrize("name", ["graph info", "partition", "model", "run", "synth", "reproduce"])
def test_every_json_document_has_schema_version_and_provenance(tmp_path, capsys, monkeypatch, name):
    import gravfm.synth.system_report as synth_report

    monkeypatch.setattr(synth_report, "synth_system", _fake_synth)
    argv, path = _commands(tmp_path)[name]
    argv = [str(part) for part in argv]
    assert main(argv) == 0
    document = json.loads(path.read_text())
    assert document["schema_version"] == SCHEMA_VERSION and list(document)[0] == "schema_version"
    record = document["provenance"]
    assert record["version"] == gravfm.__version__
    if name == "reproduce":
        # The sweep's canonical command: its outputs follow from the stored points alone, byte for
        # byte whatever invocation wrote them (issue 34), so results.json names the sweep, not the call.
        assert record["command"] == "gravfm reproduce fig11 --quick"
    else:
        assert record["command"] == "gravfm " + " ".join(argv)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["time_utc"])
    state = git_state(CHECKOUT)
    assert record["git_revision"] == state["git_revision"] and record["git_dirty"] == state["git_dirty"]
    assert "algorithm_sha256" not in record  # a registered algorithm has no file of the user's


def test_a_user_algorithm_files_hash_is_recorded(tmp_path, capsys):
    import hashlib

    out = tmp_path / "model.json"
    assert main(["model", "--algorithm", f"{USER_ALGORITHM}:HOP_DISTANCE", "--graph", "tiny:grid", "--json",
                 str(out)]) == 0
    record = json.loads(out.read_text())["provenance"]
    assert record["algorithm_sha256"] == hashlib.sha256(USER_ALGORITHM.read_bytes()).hexdigest()


def test_version_names_the_package_and_its_revision():
    completed = subprocess.run([sys.executable, "-m", "gravfm", "--version"], capture_output=True, text=True,
                               timeout=60, cwd=CHECKOUT)
    assert completed.returncode == 0 and completed.stderr == ""
    line = completed.stdout.strip()
    assert line.startswith(f"gravfm {gravfm.__version__}")
    revision = git_state(CHECKOUT)["git_revision"]
    if revision is not None:
        assert revision[:12] in line
